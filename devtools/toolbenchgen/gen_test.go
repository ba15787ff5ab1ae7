package toolbenchgen

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/toolbench"
)

func marshalAll(t *testing.T, opts Options) [][]byte {
	t.Helper()
	var out [][]byte
	for tf := range Tools(opts) {
		b, err := tf.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func TestDeterministic(t *testing.T) {
	a, b := marshalAll(t, Options{APIs: 2000, Seed: 7}), marshalAll(t, Options{APIs: 2000, Seed: 7})
	if len(a) != len(b) {
		t.Fatalf("two runs made %d and %d tools", len(a), len(b))
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("tool %d differs between two runs with the same seed", i)
		}
	}
	if c := marshalAll(t, Options{APIs: 2000, Seed: 8}); bytes.Equal(a[0], c[0]) {
		t.Error("seeds 7 and 8 made the same first tool")
	}
	// A larger set starts with the smaller one's tools (all but the
	// smaller set's last, which may be cut to reach its API count).
	big := marshalAll(t, Options{APIs: 5000, Seed: 7})
	for i := 0; i < len(a)-1; i++ {
		if !bytes.Equal(a[i], big[i]) {
			t.Fatalf("tool %d of the 5,000-API set differs from the 2,000-API set's", i)
		}
	}
}

// TestWriteTreeLoads writes a set in ToolBench's layout and loads it the
// way serve does: every API arrives, each with its own key, and the
// collection is valid.
func TestWriteTreeLoads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tools")
	const apis = 3000
	var last int
	sum, err := WriteTree(context.Background(), dir, Options{APIs: apis, Seed: 3}, func(n int) { last = n })
	if err != nil {
		t.Fatal(err)
	}
	if sum.APIs != apis || last != apis || sum.Tools == 0 || sum.Categories < 20 {
		t.Fatalf("summary %+v, progress ended at %d; want %d APIs over 20+ categories", sum, last, apis)
	}
	src, err := toolbench.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if src.Files != sum.Tools || len(src.Docs) != apis {
		t.Fatalf("loaded %d files and %d docs, wrote %d files and %d APIs", src.Files, len(src.Docs), sum.Tools, apis)
	}
	c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
	if len(c.Tools) != apis {
		t.Fatalf("the collection has %d tools, want %d (APIs with the same standardized names were merged)", len(c.Tools), apis)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	withURL := 0
	for _, tool := range c.Tools {
		if tool.Binding != nil && tool.Binding.BaseURL != "" {
			withURL++
		}
	}
	if withURL != apis {
		t.Errorf("%d of %d tools have their documented URL", withURL, apis)
	}
	// A second set never mixes with the first.
	if _, err := WriteTree(context.Background(), dir, Options{APIs: 10}, nil); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("writing into a non-empty folder: %v, want a refusal", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != sum.Categories {
		t.Errorf("%d category folders, summary says %d", len(ents), sum.Categories)
	}
}

func TestDocsMatchFiles(t *testing.T) {
	opts := Options{APIs: 500, Seed: 11}
	docs := Docs(opts)
	dir := filepath.Join(t.TempDir(), "tools")
	if _, err := WriteTree(context.Background(), dir, opts, nil); err != nil {
		t.Fatal(err)
	}
	src, err := toolbench.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, d := range docs {
		want[d.Key()] = d.APIDescription
	}
	for _, d := range src.Docs {
		if desc, ok := want[d.Key()]; !ok || desc != d.APIDescription {
			t.Fatalf("API %q of tool %q: read from the files it differs from Docs", d.APIName, d.ToolName)
		}
	}
}
