package cache

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/store"
)

// TestImportJSONL: an export imports into another store under the same
// keys, exact keys included; a bad line anywhere is an error naming it,
// and nothing is written.
func TestImportJSONL(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src, err := store.Open(ctx, filepath.Join(dir, "a.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, e := range []*store.Entry{
		{Tool: "mem/read_graph", Args: `{}`, Exact: `episode:1:abc:{}`, Status: "ok", Body: []byte(`{"content":[]}`), Origin: "upstream"},
		{Tool: "mem/read_graph", Args: `{}`, Exact: `episode:2:def:{}`, Status: "ok", Body: []byte(`{"content":[{"type":"text","text":"x"}]}`), Origin: "upstream"},
		{Tool: "mem/tools/list", Args: `{}`, Status: "ok", Body: []byte(`{"tools":[]}`), Origin: "upstream"},
	} {
		if _, err := src.Put(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	dump := filepath.Join(dir, "dump.jsonl")
	f, _ := os.Create(dump)
	if _, err := ExportJSONL(ctx, src, f, ""); err != nil {
		t.Fatal(err)
	}
	f.Close()
	dst, err := store.Open(ctx, filepath.Join(dir, "b.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	rep, err := ImportJSONL(ctx, dst, dump, false)
	if err != nil || rep.Imported != 3 {
		t.Fatalf("%+v %v", rep, err)
	}
	e, ok, err := dst.GetExact(ctx, "mem/read_graph", `episode:2:def:{}`, `{}`)
	if err != nil || !ok || e.Exact != `episode:2:def:{}` || !strings.Contains(string(e.Body), `"x"`) {
		t.Fatalf("exact key lost: %+v %v %v", e, ok, err)
	}
	good, _ := os.ReadFile(dump)
	for name, line := range map[string]string{
		"not JSON":        `{"tool":`,
		"no tool ID":      `{"tool":"plain","args":"{}","response":1}`,
		"args not object": `{"tool":"a/b","args":"[1]","response":1}`,
		"body not JSON":   `{"tool":"a/b","args":"{}","response":nope}`,
	} {
		t.Run(name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "bad.jsonl")
			os.WriteFile(bad, append(append([]byte{}, good...), []byte(line+"\n")...), 0o644)
			empty, err := store.Open(ctx, filepath.Join(t.TempDir(), "c.db"), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer empty.Close()
			_, err = ImportJSONL(ctx, empty, bad, false)
			if err == nil || !strings.Contains(err.Error(), "bad.jsonl:4") {
				t.Fatalf("error %v, want one naming line 4", err)
			}
			if s, _ := empty.Stats(ctx); s.Entries != 0 {
				t.Fatalf("%d entries written before the bad line", s.Entries)
			}
		})
	}
}
