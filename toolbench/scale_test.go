package toolbench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/toolenv/toolenv/internal/toolbenchgen"
	"github.com/toolenv/toolenv/toolbench"
)

// generatedTree returns a folder holding a generated ToolBench-format set
// of n APIs (toolenv/tools/<Category>/<tool>.json), made once and kept in
// the temporary folder for later runs: the set is deterministic.
func generatedTree(tb testing.TB, n int) string {
	tb.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("toolenv-toolbenchgen-v%d-%d-seed1", toolbenchgen.Version, n))
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "toolenv-toolbenchgen-*")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := toolbenchgen.WriteTree(context.Background(), filepath.Join(tmp, "tools"), toolbenchgen.Options{APIs: n, Seed: 1}, nil); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(filepath.Join(tmp, "tools"), dir); err != nil && !os.IsExist(err) {
		tb.Fatal(err)
	}
	os.RemoveAll(tmp)
	return dir
}

// BenchmarkLoadToolBenchScale loads generated ToolBench tool sets the way
// serve does (read the files, build the collection, index the names) and
// reports the heap the result keeps ("live-MiB", after a collection).
func BenchmarkLoadToolBenchScale(b *testing.B) {
	for _, n := range []int{10000, 50000} {
		b.Run(fmt.Sprintf("apis=%d", n), func(b *testing.B) {
			dir := generatedTree(b, n)
			b.ReportAllocs()
			var live uint64
			for b.Loop() {
				src, err := toolbench.Load(dir)
				if err != nil {
					b.Fatal(err)
				}
				c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
				ix := toolbench.NewIndex(c)
				if len(c.Tools) != n || ix.Len() < n {
					b.Fatalf("%d tools, %d indexed", len(c.Tools), ix.Len())
				}
				b.StopTimer()
				src = nil
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				live = ms.HeapAlloc
				runtime.KeepAlive(c)
				runtime.KeepAlive(ix)
				b.StartTimer()
			}
			b.ReportMetric(float64(live)/(1<<20), "live-MiB")
		})
	}
}
