package cache_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/cache"
	"github.com/toolenv/toolenv/internal/pgtest"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/store/storetest"
	"github.com/toolenv/toolenv/toolbench"
)

// TestLargeArgumentsThroughEveryCacheCommand takes StableToolBench
// entries whose arguments and recorded keys are just under, at and over
// store.LargeKeyBytes (and a megabyte; pairs that differ only at their
// end) through what toolenv cache does with them, in SQLite and in
// PostgreSQL: import of the cache folder, lookups by recorded key and by
// canonical arguments, export as JSON lines and import of that file into
// another store, and export back into StableToolBench's layout, which
// reads back as the same records. The store keeps large keys by their
// digest; none of these sees a difference.
func TestLargeArgumentsThroughEveryCacheCommand(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			dsn := func() string {
				if kind == "postgres" {
					return pgtest.DB(t)
				}
				return filepath.Join(t.TempDir(), "s.db")
			}
			r := rand.New(rand.NewPCG(29, 7))
			L := store.LargeKeyBytes
			var recs []*toolbench.CacheRecord
			for i, size := range []int{L - 1, L, L + 1, 1 << 20} {
				text := storetest.LargeArgs(r, size)
				for j, s := range []string{text, text[:len(text)-3] + "Z" + text[len(text)-2:]} {
					args, err := toolenv.ParseJSONObject([]byte(s))
					if err != nil {
						t.Fatal(err)
					}
					recs = append(recs, &toolbench.CacheRecord{Category: "Data", Tool: "items", API: "list", Args: args,
						Key: toolbench.PyRepr(args), Response: json.RawMessage(fmt.Sprintf(`"answer %d.%d"`, i, j))})
				}
			}
			dir := t.TempDir()
			if _, err := toolbench.WriteCache(dir, recs); err != nil {
				t.Fatal(err)
			}
			st, err := store.Open(ctx, dsn(), store.Options{MemoryBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			rep, err := cache.Import(ctx, st, dir, cache.ImportOptions{})
			if err != nil || rep.Imported != len(recs) {
				t.Fatalf("import: %+v %v", rep, err)
			}
			tool := toolenv.ToolID("toolbench", recs[0].FunctionName())
			for _, rec := range recs {
				canon, _ := toolenv.Canonical(rec.Args)
				for _, exact := range []string{rec.Key, ""} {
					e, ok, err := st.GetExact(ctx, tool, exact, string(canon))
					if err != nil || !ok || string(e.Body) != string(rec.Response) || e.Args != string(canon) || e.Exact != rec.Key {
						t.Fatalf("lookup of args %d bytes (exact %v): ok=%v err=%v", len(canon), exact != "", ok, err)
					}
				}
			}
			// JSON lines out, and into another store.
			dump := filepath.Join(t.TempDir(), "dump.jsonl")
			if _, err := cache.Export(ctx, st, cache.ExportOptions{Out: dump}); err != nil {
				t.Fatal(err)
			}
			other, err := store.Open(ctx, dsn(), store.Options{MemoryBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if rep, err := cache.ImportJSONL(ctx, other, dump, false); err != nil || rep.Imported != len(recs) {
				t.Fatalf("import of the JSON lines: %+v %v", rep, err)
			}
			if a, b := entries(t, st), entries(t, other); !slices.Equal(a, b) || len(a) != len(recs) {
				t.Fatalf("the JSON-lines copy holds %d entries, the store %d, or they differ", len(b), len(a))
			}
			// StableToolBench's layout out, read back as the same records.
			docs := &toolenv.Collection{Name: "toolbench", Tools: []*toolenv.Tool{{ID: tool, Category: "Data", Meta: map[string]string{"std_tool": "items", "api_name": "list"}}}}
			out := t.TempDir()
			if rep, err := cache.ExportStableToolBench(ctx, other, out, docs, ""); err != nil || rep.Entries != len(recs) {
				t.Fatalf("export to StableToolBench's layout: %+v %v", rep, err)
			}
			var got, want []string
			if _, _, err := toolbench.ReadCache(out, func(r *toolbench.CacheRecord) error {
				canon, _ := toolenv.Canonical(r.Args)
				got = append(got, r.Key+"|"+string(canon)+"|"+string(r.Response))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for _, rec := range recs {
				canon, _ := toolenv.Canonical(rec.Args)
				want = append(want, rec.Key+"|"+string(canon)+"|"+string(rec.Response))
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("StableToolBench export read back: %d records, want %d, or they differ", len(got), len(want))
			}
		})
	}
}

// entries lists a store's entries (keys, status, answer, origin).
func entries(t *testing.T, st store.Store) []string {
	t.Helper()
	var out []string
	if err := st.Each(context.Background(), func(e *store.Entry) error {
		out = append(out, fmt.Sprintf("%s|%s|%s|%s|%s|%s", e.Tool, e.Args, e.Exact, e.Status, e.Body, e.Origin))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
