package cache_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/cache"
	"github.com/toolenv/toolenv/devtools/toolbenchgen"
	"github.com/toolenv/toolenv/internal/pgtest"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/toolbench"
	"golang.org/x/sys/unix"
)

// BenchmarkImport (issue 11 item 4) streams a generated StableToolBench
// cache folder into a new SQLite store through cache.Import, resolving
// every entry against generated ToolBench docs and coercing its arguments
// as toolenv serve does (what "toolenv cache import DIR --toolbench DOCS"
// runs), and reports entries/s (wall), entries per CPU-second, the CPU
// time per entry of the writer (the store's PutMany) and of the rest, and
// the rate two idle cores would be bounded at by the two. The target: a
// million entries at ≥ 50,000 entries/s.
//
// The folders are generated once under $TOOLENV_BENCH_DIR (default: the
// system's temporary folder) and kept; the size is
// $TOOLENV_BENCH_IMPORT_ENTRIES (default 100000):
//
//	TOOLENV_BENCH_IMPORT_ENTRIES=1000000 go test ./cache -run '^$' -bench Import -benchtime 1x
//
// With TOOLENV_BENCH_IMPORT_STORE=postgres the store is a PostgreSQL
// database of a server the benchmark starts (internal/pgtest), a new
// database each run:
//
//	TOOLENV_BENCH_IMPORT_STORE=postgres TOOLENV_BENCH_IMPORT_ENTRIES=100000 go test ./cache -run '^$' -bench Import -benchtime 1x
//
// The same folders time the command itself:
//
//	time toolenv cache import $TMPDIR/toolenv-bench/stb-cache-1000000 \
//	  --toolbench $TMPDIR/toolenv-bench/stb-docs-2000 --store /tmp/imported.db
func BenchmarkImport(b *testing.B) {
	n := 100000
	if s := os.Getenv("TOOLENV_BENCH_IMPORT_ENTRIES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("TOOLENV_BENCH_IMPORT_ENTRIES=%q: want a number of entries", s)
		}
		n = v
	}
	docsDir, cacheDir, coll := benchCache(b, n)
	b.Logf("docs %s, cache %s", docsDir, cacheDir)
	ctx := context.Background()
	newStore := func() string { return filepath.Join(b.TempDir(), "import.db") }
	switch kind := os.Getenv("TOOLENV_BENCH_IMPORT_STORE"); kind {
	case "", "sqlite":
	case "postgres":
		pg := pgtest.Start(b)
		newStore = func() string { return pg.NewDatabase(b) }
	default:
		b.Fatalf("TOOLENV_BENCH_IMPORT_STORE=%q: want sqlite or postgres", kind)
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		st, err := store.Open(ctx, newStore(), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		ws := &writerCPU{Store: st}
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		rep, err := cache.Import(ctx, ws, cacheDir, cache.ImportOptions{Docs: coll})
		elapsed, cpu := time.Since(start), cpuTime()-cpu0
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if rep.Entries != n || rep.Imported != n || len(rep.Unresolved) != 0 || len(rep.Problems) != 0 {
			b.Fatalf("imported %d of %d entries (%d read, unresolved %v, problems %v)", rep.Imported, n, rep.Entries, rep.Unresolved, rep.Problems)
		}
		st.Close()
		b.ReportMetric(float64(n)/elapsed.Seconds(), "entries/s")
		// On a machine shared with other work the wall-clock rate
		// depends on the share of CPU the import got: the CPU time it
		// used (user and system, all threads) does not.
		b.ReportMetric(float64(n)/cpu.Seconds(), "entries/cpu-s")
		// The writer (the store's PutMany) and the rest (reading,
		// parsing, garbage collection) run side by side: on two idle
		// cores the import takes at least the longer of the writer's
		// CPU time and half the total.
		b.ReportMetric(float64(ws.cpu.Microseconds())/float64(n), "writer-cpu-us/entry")
		b.ReportMetric(float64((cpu-ws.cpu).Microseconds())/float64(n), "rest-cpu-us/entry")
		b.ReportMetric(float64(n)/max(ws.cpu, cpu/2).Seconds(), "2core-bound-entries/s")
		b.StartTimer()
	}
}

// benchDocsAPIs is how many APIs the generated docs hold (StableToolBench's
// cache covers about 1,900).
const benchDocsAPIs = 2000

// benchCache returns a docs folder of benchDocsAPIs generated APIs, a
// StableToolBench cache folder of n entries for them, and the docs as the
// collection Import resolves against; the folders are built when absent.
func benchCache(b *testing.B, n int) (docsDir, cacheDir string, coll *toolenv.Collection) {
	dir := os.Getenv("TOOLENV_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "toolenv-bench")
	}
	opts := toolbenchgen.Options{APIs: benchDocsAPIs, Seed: 1}
	docsDir = filepath.Join(dir, fmt.Sprintf("stb-docs-%d", benchDocsAPIs))
	if _, err := os.Stat(docsDir + ".done"); err != nil {
		os.RemoveAll(docsDir)
		if _, err := toolbenchgen.WriteTree(context.Background(), docsDir, opts, nil); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(docsDir+".done", nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	src, err := toolbench.Load(docsDir)
	if err != nil {
		b.Fatal(err)
	}
	coll = toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{Name: "toolbench"})
	cacheDir = filepath.Join(dir, fmt.Sprintf("stb-cache-%d", n))
	if _, err := os.Stat(cacheDir + ".done"); err == nil {
		return docsDir, cacheDir, coll
	}
	os.RemoveAll(cacheDir)
	// The APIs with parameters, each with a cache file of its own (names
	// that standardize alike share StableToolBench's file: one is kept).
	var tools []*toolenv.Tool
	files := map[[3]string]bool{}
	for _, t := range coll.Tools {
		c, td, f := toolbench.CachePath(t.Category, t.Meta["std_tool"], t.Meta["api_name"])
		if t.Input == nil || !slices.ContainsFunc(t.Input.Names(), func(n string) bool { return t.Input.Prop(n).Type != "boolean" }) || files[[3]string{c, td, f}] {
			continue
		}
		files[[3]string{c, td, f}] = true
		tools = append(tools, t)
	}
	if len(tools) == 0 {
		b.Fatal("the generated docs have no API with parameters")
	}
	start := time.Now()
	var recs []*toolbench.CacheRecord
	flush := func() {
		if _, err := toolbench.WriteCache(cacheDir, recs); err != nil {
			b.Fatal(err)
		}
		recs = recs[:0]
	}
	// Tool by tool (each file written once), entry i of tool j being the
	// tool's (i/len(tools))th distinct call.
	for j, t := range tools {
		for i := j; i < n; i += len(tools) {
			args := benchArgs(t.Input, i/len(tools))
			recs = append(recs, &toolbench.CacheRecord{Category: t.Category, Tool: t.Meta["std_tool"], API: t.Meta["api_name"],
				Key: toolbench.PyRepr(args), Args: args, Response: benchResponse(i)})
		}
		if len(recs) >= 50000 {
			flush()
		}
	}
	flush()
	if err := os.WriteFile(cacheDir+".done", nil, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("wrote %d cache entries in %s", n, time.Since(start).Round(time.Second))
	return docsDir, cacheDir, coll
}

// benchArgs returns call k of a tool: every parameter given a value of its
// type, the first one varying with k, so that calls are distinct keys.
func benchArgs(in *toolenv.Schema, k int) map[string]any {
	args := map[string]any{}
	varied := false
	for idx, name := range in.Names() {
		p := in.Prop(name)
		v := idx
		if !varied && p.Type != "boolean" {
			v, varied = k, true
		}
		switch p.Type {
		case "integer", "number":
			args[name] = v
		case "boolean":
			args[name] = v%2 == 0
		default:
			args[name] = fmt.Sprintf("value %d", v)
		}
	}
	return args
}

// benchResponse is a recorded answer of about 400 bytes: StableToolBench
// keeps the API's text as a string.
func benchResponse(i int) json.RawMessage {
	text := fmt.Sprintf(`{"id": %d, "results": [{"name": "result %d", "score": 0.%d, "url": "https://example.org/items/%d"}], "message": "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua", "count": 1}`, i, i, i%97, i)
	raw, _ := json.Marshal(text)
	return raw
}

// writerCPU is a store that counts the CPU time its PutMany calls use
// (on the thread that runs them, which each call keeps).
type writerCPU struct {
	store.Store
	cpu time.Duration
}

func (w *writerCPU) PutMany(ctx context.Context, entries []*store.Entry, overwrite bool) (int, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := threadCPUTime()
	n, err := w.Store.PutMany(ctx, entries, overwrite)
	w.cpu += threadCPUTime() - t0
	return n, err
}

// BeginBulk passes the store's bulk mode on.
func (w *writerCPU) BeginBulk(ctx context.Context) (func() error, error) {
	if bl, ok := w.Store.(store.BulkLoader); ok {
		return bl.BeginBulk(ctx)
	}
	return func() error { return nil }, nil
}

// threadCPUTime returns the CPU time the calling thread has used.
func threadCPUTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuTime returns the CPU time this process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
