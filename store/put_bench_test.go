package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/argshapes"
)

// largeArgs returns the canonical text of about size bytes of
// arguments shaped as server's BenchmarkRequestShapesPerKB shapes them
// (many small keys, objects 64 deep, long strings with escapes and
// multi-byte characters, long arrays of numbers), or "stb": the real
// arguments of StableToolBench's example predictions and the real
// queries of its solvable test sets as string arguments (nil when the
// shared data folder is absent).
func largeArgs(tb testing.TB, shape string, size int) string {
	var b bytes.Buffer
	b.WriteString(`{"a": "000000000000"`) // first in canonical order: a benchmark varies it
	if shape == "stb" {
		vals := stbValues(tb)
		if vals == nil {
			return ""
		}
		for i := 0; b.Len() < size && i < len(vals); i++ { // each once: no repeats to find
			v, _ := json.Marshal(vals[i])
			fmt.Fprintf(&b, `, "c%06d": %s`, i, v)
		}
	}
	if shape != "stb" {
		argshapes.Members(&b, shape, size)
	}
	b.WriteByte('}')
	m, err := toolenv.ParseJSONObject(b.Bytes())
	if err != nil {
		tb.Fatal(err)
	}
	c, err := toolenv.Canonical(m)
	if err != nil {
		tb.Fatal(err)
	}
	return string(c)
}

// stbValues are real StableToolBench argument values: the arguments of
// the example predictions' tool calls, then each solvable query as a
// {"query": …} object, in the files' order (distinct texts, so that a
// compressor cannot just find the previous copy).
func stbValues(tb testing.TB) []any {
	dir := filepath.Join("..", "..", "shared", "data", "stabletoolbench")
	if _, err := os.Stat(dir); err != nil {
		tb.Logf("skipping the StableToolBench shape: %s is absent", dir)
		return nil
	}
	var out []any
	preds, _ := filepath.Glob(filepath.Join(dir, "data_example", "model_predictions_converted", "*", "*.json"))
	for _, f := range preds {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					if s, ok := x.(string); ok && k == "arguments" {
						var a map[string]any
						if json.Unmarshal([]byte(s), &a) == nil {
							out = append(out, a)
						}
						continue
					}
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			tb.Fatal(err)
		}
		walk(v)
	}
	qs, _ := filepath.Glob(filepath.Join(dir, "solvable_queries", "test_instruction", "*.json"))
	for _, f := range qs {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var list []struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			tb.Fatal(err)
		}
		for _, q := range list {
			out = append(out, map[string]any{"query": q.Query})
		}
	}
	return out
}

// putThreadCPU is the CPU time of the calling thread (the benchmark
// locks its goroutine to it: the SQLite driver, the hashing and the
// compression all run on the caller's goroutine).
func putThreadCPU() time.Duration {
	var ts syscall.Timespec
	_, _, _ = syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3 /* CLOCK_THREAD_CPUTIME_ID */, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// BenchmarkPutLargeArgs measures the CPU the writing thread spends per
// KB of arguments to store one new entry of about 1 MB of canonical arguments
// (each shape of largeArgs) in an SQLite file store, as a lenient cache
// miss does: with arguments alone (REST, MCP) and with an exact key of
// the same size (/virtual keeps the client's spelling too). Every Put is
// a new key (the arguments' first member counts). The garbage of the
// previous put is collected before the next is timed.
//
//	go test ./store -run '^$' -bench PutLargeArgs -benchtime 20x
func BenchmarkPutLargeArgs(b *testing.B) {
	ctx := context.Background()
	for _, shape := range []string{"keys", "deep", "strings", "arrays", "stb"} {
		args := []byte(largeArgs(b, shape, 1<<20))
		if len(args) < 10 {
			continue
		}
		const at = len(`{"a":"`)
		for _, exact := range []bool{false, true} {
			name := shape
			if exact {
				name += "/exact"
			}
			b.Run(name, func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				st, err := OpenSQLite(ctx, filepath.Join(b.TempDir(), "s.db"), Options{MemoryBytes: -1})
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				var cpu time.Duration
				n := 0
				for b.Loop() {
					n++
					copy(args[at:], fmt.Sprintf("%012d", n))
					e := &Entry{Tool: "c/t", Args: string(args), Body: json.RawMessage(`{"ok":true}`), Origin: "simulator"}
					if exact {
						e.Exact = "{'k': " + e.Args[1:]
					}
					b.StopTimer()
					runtime.GC()
					b.StartTimer()
					start := putThreadCPU()
					ok, err := st.Put(ctx, e)
					cpu += putThreadCPU() - start
					if err != nil || !ok {
						b.Fatalf("put: %v %v", ok, err)
					}
				}
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/(float64(len(args))/1024), "cpu-µs/KB")
				var size int64
				for _, f := range []string{st.Path(), st.Path() + "-wal"} {
					if fi, err := os.Stat(f); err == nil {
						size += fi.Size()
					}
				}
				b.ReportMetric(float64(size)/float64(b.N)/1024, "file-KB/put")
			})
		}
	}
}
