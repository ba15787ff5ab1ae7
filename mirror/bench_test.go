package mirror_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/mirror/sqlstore"
	"github.com/toolenv/toolenv/nl2api"
	"github.com/toolenv/toolenv/store"
)

// benchTools makes n documented tools of two parameters each.
func benchTools(n int) []*toolenv.Tool {
	tools := make([]*toolenv.Tool, n)
	for i := range tools {
		in := toolenv.ObjectSchema()
		in.SetProp("city", &toolenv.Schema{Type: "string", Description: "The city to look up, e.g. Paris."})
		in.SetProp("days", &toolenv.Schema{Type: "integer", Description: "How many days ahead.", Minimum: mirror.Ptr(1.0), Maximum: mirror.Ptr(14.0)})
		in.Required = []string{"city"}
		tools[i] = &toolenv.Tool{ID: fmt.Sprintf("bench/api_%04d", i), Collection: "bench", Name: fmt.Sprintf("api_%04d", i),
			Title: fmt.Sprintf("Forecast %d", i), Description: "Returns the weather forecast of a city for the next days, with temperatures and rain.",
			Category: fmt.Sprintf("Category%d", i%49), Group: fmt.Sprintf("tool_%d", i/4), GroupDescription: "A weather service.", Input: in}
	}
	return tools
}

// fillStore puts n training pairs spread over tools into a new store.
func fillStore(tb testing.TB, tools []*toolenv.Tool, n int) (*sqlstore.Store, string) {
	tb.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(tb.TempDir(), "bench.db"), store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	const ds = "bench"
	batch := make([]*mirror.Pair, 0, 1000)
	body := json.RawMessage(`{"city":"Paris","days":[{"date":"2025-06-01","min":14.5,"max":23.1,"rain_mm":0.4,"summary":"partly cloudy"},{"date":"2025-06-02","min":15.0,"max":25.2,"rain_mm":0,"summary":"sunny"}]}`)
	now := time.Unix(1_750_000_000, 0)
	for i := range n {
		t := tools[i%len(tools)]
		batch = append(batch, &mirror.Pair{Tool: t.ID, Args: fmt.Sprintf(`{"city":"City %d","days":%d}`, i, 1+i%14), Origin: mirror.OriginReal,
			Kind: "sampled", Status: toolenv.StatusOK, Body: body, Source: "live", Class: "success", Rule: "success", Attempts: 1,
			Latency: time.Millisecond, CalledAt: now, Filter: mirror.FilterKept, Split: mirror.SplitTrain})
		if len(batch) == cap(batch) {
			if err := st.PutPairs(ctx, ds, batch); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := st.PutPairs(ctx, ds, batch); err != nil {
		tb.Fatal(err)
	}
	return st, ds
}

// BenchmarkExport exports 20,000 and 100,000 training pairs (SFT
// samples, both formats, with the benchmark files and the dataset card):
// the target is under 10 s for 100,000, with memory that does not
// grow with the pairs (peak-heap-MB is sampled while it runs).
func BenchmarkExport(b *testing.B) {
	for _, n := range []int{20_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			tools := benchTools(500)
			st, ds := fillStore(b, tools, n)
			e := &mirror.Engine{Store: st, Dataset: ds, Tools: tools}
			runtime.GC()
			peak := heapPeak()
			b.ResetTimer()
			cpu := cpuTime()
			for range b.N {
				out := b.TempDir()
				stats, err := e.Export(context.Background(), mirror.ExportOptions{Out: out, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				if stats.SFT != n {
					b.Fatalf("exported %d SFT samples, want %d", stats.SFT, n)
				}
			}
			b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
		})
	}
}

// heapPeak samples the heap in use every 5 ms until the returned function
// is called, which returns the largest value seen.
func heapPeak() func() uint64 {
	stop := make(chan struct{})
	done := make(chan uint64)
	go func() {
		var max uint64
		var ms runtime.MemStats
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > max {
				max = ms.HeapInuse
			}
			select {
			case <-stop:
				done <- max
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(stop); return <-done }
}

// cpuTime is the process's user and system CPU time so far: a figure the
// other programs on a loaded machine do not change.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// instant answers the engine's prompts in-process, with no network: the
// test model without its server. Its answers are memorized by request,
// so that once a run has warmed it, a model costs a request's encoding
// and a lookup, and what is measured is toolenv's own work.
type instant struct {
	m    *model
	mu   *sync.Mutex
	memo map[string]string
}

func newInstant() instant {
	return instant{m: &model{kinds: map[string]int{}, clean: true}, mu: &sync.Mutex{}, memo: map[string]string{}}
}

func (i instant) Chat(_ context.Context, req *llm.Request) (*llm.Response, error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	i.mu.Lock()
	text, ok := i.memo[string(raw)]
	i.mu.Unlock()
	if !ok {
		text = i.m.answer(0, req).Content
		i.mu.Lock()
		i.memo[string(raw)] = text
		i.mu.Unlock()
	}
	return &llm.Response{Choices: []llm.Choice{{Message: llm.Message{Role: "assistant", Content: text}, FinishReason: "stop"}}}, nil
}

// BenchmarkPipelinePerPair runs every stage over 100 APIs with an upstream
// and a model that answer at once, and reports toolenv's own cost per
// pair (the target: under 1 ms, the model excluded: a first run,
// not measured, warms the stand-in's memory of its answers).
func BenchmarkPipelinePerPair(b *testing.B) {
	for _, withModel := range []bool{false, true} {
		name := "sampler"
		if withModel {
			name = "model"
		}
		b.Run(name, func(b *testing.B) {
			tools := benchTools(100)
			body := json.RawMessage(`{"city":"Paris","days":[{"day":1,"min":14,"max":23,"summary":"partly cloudy"}]}`)
			up := toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
				if _, ok := call.Args["city"]; !ok {
					return &toolenv.Result{Status: toolenv.StatusInvalidArguments, Error: "missing required parameter: city", Source: toolenv.SourceUpstream}
				}
				return &toolenv.Result{Status: toolenv.StatusOK, Body: body, Source: toolenv.SourceUpstream}
			})
			inst := newInstant()
			runOnce := func() int {
				e := &mirror.Engine{Store: newStore(b), Dataset: "bench", Tools: tools, Invoker: up}
				if withModel {
					e.Model, e.ModelName = inst, "m"
				}
				rep, err := e.Run(context.Background(), mirror.RunOptions{
					Generate: mirror.GenerateOptions{PerAPI: 50, Seed: 1},
					Synth:    mirror.SynthOptions{Below: 40, Target: 60},
					Split:    mirror.SplitOptions{OODSuccess: 100, OODFailure: 20, IDSize: 50},
					Export:   mirror.ExportOptions{Out: b.TempDir(), Seed: 1},
				})
				if err != nil {
					b.Fatal(err)
				}
				return rep.Summary.Real + rep.Summary.Synthesized
			}
			if withModel {
				runOnce()
			}
			b.ResetTimer()
			pairs := 0
			cpu := cpuTime()
			for range b.N {
				pairs += runOnce()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(pairs)/1e6, "ms/pair")
			b.ReportMetric((cpuTime()-cpu).Seconds()*1e3/float64(pairs), "cpu-ms/pair")
			b.ReportMetric(float64(pairs)/float64(b.N), "pairs/op")
		})
	}
}

// BenchmarkCollectBIRD collects from the live REST collection of a BIRD
// build (SQLite behind toolenv's call path, on this machine) with 32
// workers and reports pairs per second (the target: 1,000).
func BenchmarkCollectBIRD(b *testing.B) {
	data := shareddata.Require(b, "bird")
	ctx := context.Background()
	out := b.TempDir()
	if _, err := nl2api.Build(ctx, nl2api.Options{Data: data, Out: out, Flavors: []string{"rest"}}); err != nil {
		b.Fatal(err)
	}
	src, err := mirror.OpenSources(ctx, mirror.SourceConfig{Collections: []string{filepath.Join(out, "rest")}})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	b.ResetTimer()
	var pairs int
	var elapsed time.Duration
	for range b.N {
		b.StopTimer()
		e := &mirror.Engine{Store: newStore(b), Dataset: "bench", Tools: src.Tools, Tasks: src.Tasks, Collections: src.Collections, Invoker: src.Invoker}
		if _, err := e.Generate(ctx, mirror.GenerateOptions{PerAPI: 80, Seed: 1}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		st, err := e.Collect(ctx, mirror.CollectOptions{Workers: 32})
		if err != nil {
			b.Fatal(err)
		}
		pairs += st.Called
		elapsed += st.Elapsed
	}
	b.ReportMetric(float64(pairs)/elapsed.Seconds(), "pairs/s")
	b.ReportMetric(float64(pairs)/float64(b.N), "pairs/op")
}
