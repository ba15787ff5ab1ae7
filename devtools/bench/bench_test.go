package bench

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/internal/shareddata"
)

// hitEnv opens an environment serving StableToolBench's test tools, as
// `toolenv serve` does, with one recorded answer per tool (see hitCalls),
// and returns its HTTP handler and the /virtual bodies that hit.
func hitEnv(tb testing.TB, canonicalOnly bool) (http.Handler, [][]byte) {
	docs := shareddata.Require(tb, "stabletoolbench", "solvable_queries", "test_instruction")
	ctx := context.Background()
	env, err := environment.Open(ctx, &environment.Config{Store: filepath.Join(tb.TempDir(), "s.db"), ToolBench: []string{docs}, Timeout: 2 * time.Minute})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { env.Close() })
	entries, bodies := hitCalls(env, 2000, canonicalOnly)
	if _, err := env.Store.PutMany(ctx, entries, true); err != nil {
		tb.Fatal(err)
	}
	h, err := env.Handler()
	if err != nil {
		tb.Fatal(err)
	}
	return h, bodies
}

// processCPU returns the user + system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// discardWriter is the least an http.ResponseWriter can be; it keeps
// the last answer's bytes while keep is set.
type discardWriter struct {
	h    http.Header
	code int
	n    int
	keep bool
	body []byte
}

func (w *discardWriter) Header() http.Header  { return w.h }
func (w *discardWriter) WriteHeader(code int) { w.code = code }
func (w *discardWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	if w.keep {
		w.body = append(w.body, p...)
	}
	return len(p), nil
}

// BenchmarkVirtualHitHandler measures the server's own work for a
// /virtual cache hit, without HTTP parsing or the network: the handler of
// `toolenv serve` (guard, routing, decoding, key, pipeline, metrics,
// encoding) over StableToolBench's test tools, and (bare) the baseline
// handler of `toolenv bench` answering the same calls with the same
// bytes, through the same writer. `toolenv bench` measures the same calls
// over loopback HTTP, each server in its own process.
func BenchmarkVirtualHitHandler(b *testing.B) {
	for _, mode := range []struct {
		name      string
		canonical bool
		bare      bool
	}{{"keys=exact", false, false}, {"keys=canonical", true, false}, {"bare", false, true}} {
		b.Run(mode.name, func(b *testing.B) {
			h, bodies := hitEnv(b, mode.canonical)
			u, _ := url.Parse("http://127.0.0.1/virtual")
			reqs := make([]*http.Request, len(bodies))
			for i := range bodies {
				reqs[i] = &http.Request{Method: http.MethodPost, URL: u, Host: "127.0.0.1", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
					Header: http.Header{"Content-Type": {"application/json"}}, ContentLength: int64(len(bodies[i])), RemoteAddr: "127.0.0.1:40000"}
				reqs[i] = reqs[i].WithContext(context.Background())
			}
			w := &discardWriter{h: http.Header{}}
			serve := func(i int) {
				r := reqs[i%len(reqs)]
				r.Body = io.NopCloser(bytes.NewReader(bodies[i%len(reqs)]))
				clear(w.h)
				h.ServeHTTP(w, r)
				if w.code != http.StatusOK || w.h.Get("X-Toolenv-Source") != "cache" {
					b.Fatalf("call %d: not a cache hit: %d %v", i, w.code, w.h)
				}
			}
			if mode.bare {
				answers := make([][]byte, len(bodies))
				headers := make([]http.Header, len(bodies))
				w.keep = true
				for i := range bodies { // what the server answers, as toolenv bench records it
					w.body = nil
					serve(i)
					answers[i] = w.body
					headers[i] = http.Header{}
					for k, vs := range w.h {
						if strings.HasPrefix(k, "X-Toolenv-") {
							headers[i][k] = vs
						}
					}
				}
				w.keep = false
				bare := bareHandler(answers, headers)
				serve = func(i int) {
					r := reqs[i%len(reqs)]
					r.Body = io.NopCloser(bytes.NewReader(bodies[i%len(reqs)]))
					clear(w.h)
					bare.ServeHTTP(w, r)
				}
			}
			for i := range bodies { // the first read of an entry is the store's
				serve(i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for i := range b.N {
				serve(i)
			}
			// The process's CPU time (garbage collection included), which
			// other load on the machine disturbs less than ns/op.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
