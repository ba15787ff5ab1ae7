package toolbench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/devtools/toolbenchgen"
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
// serve does (LoadCollection reads the files and builds the collection,
// then the names are indexed) and
// reports the heap the result keeps ("live-MiB", after a collection).
func BenchmarkLoadToolBenchScale(b *testing.B) {
	for _, n := range []int{10000, 50000} {
		b.Run(fmt.Sprintf("apis=%d", n), func(b *testing.B) {
			dir := generatedTree(b, n)
			b.ReportAllocs()
			var live uint64
			for b.Loop() {
				c, _, err := toolbench.LoadCollection(toolbench.CollectionOptions{}, dir)
				if err != nil {
					b.Fatal(err)
				}
				ix := toolbench.NewIndex(c)
				if len(c.Tools) != n || ix.Len() < n {
					b.Fatalf("%d tools, %d indexed", len(c.Tools), ix.Len())
				}
				b.StopTimer()
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

// TestNewCollectionSharesWithoutChanging checks that the tools
// NewCollection builds (sharing equal parts, on several cores) are
// exactly the tools each doc makes on its own.
func TestNewCollectionSharesWithoutChanging(t *testing.T) {
	docs := toolbenchgen.Docs(toolbenchgen.Options{APIs: 9000, Seed: 5})
	c := toolbench.NewCollection(docs, toolbench.CollectionOptions{})
	if len(c.Tools) != len(docs) {
		t.Fatalf("%d tools from %d docs", len(c.Tools), len(docs))
	}
	byKey := map[string]*toolbench.APIDoc{}
	for i := range docs {
		byKey[docs[i].Key()] = &docs[i]
	}
	shared := 0
	inputs := map[*toolenv.Schema]bool{}
	for _, got := range c.Tools {
		d := byKey[got.Meta["std_category"]+"\x00"+got.Meta["std_tool"]+"\x00"+got.Meta["api_name"]]
		if d == nil {
			t.Fatalf("tool %s: no doc", got.ID)
		}
		want := d.Tool()
		want.Name, want.ID, want.Collection = got.Name, got.ID, got.Collection
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if string(gj) != string(wj) {
			t.Fatalf("tool %s differs from its doc's own:\n got %s\nwant %s", got.ID, gj, wj)
		}
		if inputs[got.Input] {
			shared++
		}
		inputs[got.Input] = true
	}
	if shared < len(docs)/5 {
		t.Errorf("only %d of %d tools share an input schema with another", shared, len(docs))
	}
}

// TestLoadKeepsNothingOfItsReadBuffer loads a generated tree with one
// worker, which reads every file into the same reused buffer, and checks
// that every doc equals the one the file gives when loaded alone (a
// string or raw value still pointing into the buffer would hold a later
// file's bytes).
func TestLoadKeepsNothingOfItsReadBuffer(t *testing.T) {
	dir := t.TempDir()
	if _, err := toolbenchgen.WriteTree(context.Background(), dir, toolbenchgen.Options{APIs: 600, Seed: 3}, nil); err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	all, err := toolbench.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GOMAXPROCS(2)
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".json" {
			files = append(files, p)
		}
		return err
	})
	if len(files) < 20 || all.Files != len(files) {
		t.Fatalf("%d files written, %d loaded", len(files), all.Files)
	}
	i := 0
	for _, f := range files { // WalkDir's order is Load's: sorted
		one, err := toolbench.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range one.Docs {
			got := all.Docs[i]
			i++
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			if string(gj) != string(wj) {
				t.Fatalf("%s: loaded among the others:\n%s\nalone:\n%s", f, gj, wj)
			}
		}
	}
	if i != len(all.Docs) {
		t.Fatalf("%d docs loaded alone, %d together", i, len(all.Docs))
	}
}
