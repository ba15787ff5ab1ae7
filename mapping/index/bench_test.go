package index

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/mapping/embed"
	"github.com/toolenv/toolenv/toolbench"
)

// benchIndex indexes the 1,920 StableToolBench APIs once per benchmark.
func benchIndex(b *testing.B) *Index {
	b.Helper()
	dir := shareddata.Require(b, "stabletoolbench", "solvable_queries", "test_instruction")
	src, err := toolbench.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
	path := filepath.Join(b.TempDir(), "map.db")
	if _, err := Build(context.Background(), path, c.Tools, BuildOptions{}); err != nil {
		b.Fatal(err)
	}
	ix, err := Open(context.Background(), path, OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	return ix
}

// BenchmarkSearch measures one top-10 search over 1,920 tools per mode.
func BenchmarkSearch(b *testing.B) {
	ix := benchIndex(b)
	ctx := context.Background()
	for _, mode := range []Mode{Lexical, Vector, Hybrid} {
		b.Run(string(mode), func(b *testing.B) {
			for b.Loop() {
				if _, err := ix.Search(ctx, "I need the current exchange rate between euros and dollars", 10, SearchOptions{Mode: mode, MaxAlternatives: -1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBuild measures indexing the 1,920 tools with the offline
// embedder (no structural mappings).
func BenchmarkBuild(b *testing.B) {
	dir := shareddata.Require(b, "stabletoolbench", "solvable_queries", "test_instruction")
	src, err := toolbench.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
	path := filepath.Join(b.TempDir(), "map.db")
	for b.Loop() {
		if _, err := Build(context.Background(), path, c.Tools, BuildOptions{Embedder: embed.Hash{}}); err != nil {
			b.Fatal(err)
		}
	}
}
