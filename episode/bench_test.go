package episode_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/episode/episodetest"
)

// benchEnv is an environment over a generated SLOT and REST build.
func benchEnv(b *testing.B) (*environment.Environment, *episode.Env) {
	b.Helper()
	dir := b.TempDir()
	f := episodetest.Corpus(b, dir, 23)
	ctx := context.Background()
	env, err := environment.Open(ctx, &environment.Config{Collections: []string{f["slot"], f["rest"]}, Store: filepath.Join(dir, "store.db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { env.Close() })
	eps, err := episode.New(ctx, env, episode.Options{MaxSteps: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eps.Close() })
	return env, eps
}

// firstCall returns a task of coll whose first gold call stands alone
// (no reference to an earlier output but the starting table).
func firstCall(b *testing.B, env *environment.Environment, coll string) (*toolenv.Task, toolenv.GoldCall) {
	for _, t := range env.Tasks[coll] {
		if len(t.Gold) > 0 {
			return t, t.Gold[0]
		}
	}
	b.Fatalf("%s: no task with a gold call", coll)
	return nil, toolenv.GoldCall{}
}

// BenchmarkCallOutsideEpisode is one tool call through the pipeline, as
// any front-end makes it (a session for SLOT, started as the harness
// starts one); BenchmarkEpisodeStep is the same call as an episode's
// step. Their ratio is the episode's overhead (target: at most 1.25×).
func BenchmarkCallOutsideEpisode(b *testing.B) {
	env, _ := benchEnv(b)
	for _, coll := range []string{"bird-rest", "bird-slot"} {
		b.Run(coll, func(b *testing.B) {
			ctx := context.Background()
			task, g := firstCall(b, env, coll)
			c := env.Registry.Collection(coll)
			local := agent.NewLocal(env.Pipeline, []*toolenv.Collection{c}, agent.LocalOptions{})
			s, err := local.Start(ctx, task)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if res := s.Call(ctx, agent.Call{Name: g.Name, Args: g.Args, Label: g.Label}); !res.OK() {
					b.Fatal(res.Error)
				}
			}
		})
	}
}

func BenchmarkEpisodeStep(b *testing.B) {
	env, eps := benchEnv(b)
	for _, coll := range []string{"bird-rest", "bird-slot"} {
		b.Run(coll, func(b *testing.B) {
			ctx := context.Background()
			task, g := firstCall(b, env, coll)
			first, err := eps.Reset(ctx, "", &episode.ResetOptions{Collection: coll, TaskID: task.ID})
			if err != nil {
				b.Fatal(err)
			}
			id := first.Observation.EpisodeID
			a := &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{{Name: g.Name, Args: g.Args, Label: g.Label}}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := eps.Step(ctx, "", id, a)
				if err != nil || r.Observation.Result.Status != toolenv.StatusOK {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReset is a reset to the first observation (SLOT: the task's
// hidden starting table made in its session); it reports the heap an
// open idle episode holds (target: at most 16 KiB).
func BenchmarkReset(b *testing.B) {
	env, eps := benchEnv(b)
	for _, coll := range []string{"bird-rest", "bird-slot"} {
		b.Run(coll, func(b *testing.B) {
			ctx := context.Background()
			tasks := env.Tasks[coll]
			var ids []string
			runtime.GC()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := eps.Reset(ctx, "", &episode.ResetOptions{Collection: coll, TaskID: tasks[i%len(tasks)].ID})
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, r.Observation.EpisodeID)
			}
			b.StopTimer()
			runtime.GC()
			runtime.ReadMemStats(&m1)
			b.ReportMetric(float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc))/float64(b.N)/1024, "KiB/open-episode")
			for _, id := range ids {
				eps.End(ctx, "", id)
			}
		})
	}
}

// BenchmarkStepOverhead alternates the same call made outside an episode
// and as an episode's step, so that both meet the same load, and
// reports each one's time and their ratio (target: at most 1.25).
func BenchmarkStepOverhead(b *testing.B) {
	env, eps := benchEnv(b)
	for _, coll := range []string{"bird-rest", "bird-slot"} {
		b.Run(coll, func(b *testing.B) {
			ctx := context.Background()
			task, g := firstCall(b, env, coll)
			c := env.Registry.Collection(coll)
			s, err := agent.NewLocal(env.Pipeline, []*toolenv.Collection{c}, agent.LocalOptions{}).Start(ctx, task)
			if err != nil {
				b.Fatal(err)
			}
			first, err := eps.Reset(ctx, "", &episode.ResetOptions{Collection: coll, TaskID: task.ID})
			if err != nil {
				b.Fatal(err)
			}
			id := first.Observation.EpisodeID
			a := &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{{Name: g.Name, Args: g.Args, Label: g.Label}}}
			var call, step time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if res := s.Call(ctx, agent.Call{Name: g.Name, Args: g.Args, Label: g.Label}); !res.OK() {
					b.Fatal(res.Error)
				}
				t1 := time.Now()
				if _, err := eps.Step(ctx, "", id, a); err != nil {
					b.Fatal(err)
				}
				call, step = call+t1.Sub(t0), step+time.Since(t1)
			}
			b.ReportMetric(float64(call.Nanoseconds())/float64(b.N), "call-ns")
			b.ReportMetric(float64(step.Nanoseconds())/float64(b.N), "step-ns")
			b.ReportMetric(float64(step)/float64(call), "step/call")
		})
	}
}

// BenchmarkSLOTvsREST plays every task's gold sequence through the
// pipeline on the SLOT build and on the REST build, alternated, and
// reports the time per call of each and their ratio (target: SLOT within
// 1.25× of REST). "repeated" plays the same tasks in every iteration (the
// SLOT backend's render memo answers what it read before, the REST
// answers come from the cache); "first" opens a fresh environment for
// every iteration, so that each task's queries run once.
func BenchmarkSLOTvsREST(b *testing.B) {
	dir := b.TempDir()
	f := episodetest.Corpus(b, dir, 31)
	ctx := context.Background()
	open := func() *environment.Environment {
		env, err := environment.Open(ctx, &environment.Config{Collections: []string{f["slot"], f["rest"]}, Store: ":memory:"})
		if err != nil {
			b.Fatal(err)
		}
		return env
	}
	for _, mode := range []string{"repeated", "first"} {
		b.Run(mode, func(b *testing.B) {
			var slotT, restT time.Duration
			var slotN, restN int
			env := open()
			for i := 0; i < b.N; i++ {
				if mode == "first" {
					env.Close()
					env = open()
				}
				local := agent.NewLocal(env.Pipeline, env.Collections(), agent.LocalOptions{})
				restTasks := map[string]*toolenv.Task{}
				for _, t := range env.Tasks["bird-rest"] {
					restTasks[t.ID] = t
				}
				play := func(t *toolenv.Task) (time.Duration, int) {
					s, err := local.Start(ctx, t)
					if err != nil {
						b.Fatal(err)
					}
					o := episodetest.NewOracle(env.Registry.Collection(t.Collection), t)
					var d time.Duration
					n := 0
					for {
						g, ok, err := o.Next()
						if err != nil || !ok {
							break
						}
						t0 := time.Now()
						res := s.Call(ctx, agent.Call{Name: g.Name, Args: g.Args, Label: g.Label})
						d += time.Since(t0)
						o.Observe(g.Label, res.Body)
						n++
					}
					return d, n
				}
				for _, t := range env.Tasks["bird-slot"] {
					rt := restTasks[t.ID]
					if rt == nil {
						continue
					}
					d, n := play(t)
					slotT, slotN = slotT+d, slotN+n
					d, n = play(rt)
					restT, restN = restT+d, restN+n
				}
			}
			if sb, ok := env.Registry.Backend("bird-slot").(*sqltools.Backend); ok {
				st := sb.Stats()
				b.ReportMetric(float64(st.MemoHits)/float64(max(1, st.MemoHits+st.MemoMisses)), "memo-hit-rate")
			}
			env.Close()
			b.ReportMetric(float64(slotT.Nanoseconds())/float64(slotN), "slot-ns/call")
			b.ReportMetric(float64(restT.Nanoseconds())/float64(restN), "rest-ns/call")
			b.ReportMetric((float64(slotT)/float64(slotN))/(float64(restT)/float64(restN)), "slot/rest")
		})
	}
}

// BenchmarkEndedRecordsHeap plays b.N rounds of 300 episodes of the
// demo, each ending with a 1 MB final answer and closed, on a server
// keeping its episodes in memory, and reports the heap the ended
// episodes still hold once collected: Options.RecordBytes (64 MiB) bounds
// it, the rest is in the store (before the bound, 1,500 such episodes
// held 1.6 GB).
func BenchmarkEndedRecordsHeap(b *testing.B) {
	ctx := context.Background()
	env, err := environment.Open(ctx, &environment.Config{Store: filepath.Join(b.TempDir(), "store.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer env.Close()
	var held float64
	for i := 0; i < b.N; i++ {
		eps, err := episode.New(ctx, env, episode.Options{})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var m0 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for j := 0; j < 300; j++ {
			r, err := eps.Reset(ctx, "", &episode.ResetOptions{TaskID: "demo-3"})
			if err != nil {
				b.Fatal(err)
			}
			id := r.Observation.EpisodeID
			big := strings.Repeat(fmt.Sprint(j%10), 1<<20) // a string of its own
			if _, err := eps.Step(ctx, "", id, &episode.Action{Type: episode.ActionFinalAnswer, Answer: &episode.Answer{Text: big}}); err != nil {
				b.Fatal(err)
			}
			if err := eps.End(ctx, "", id); err != nil {
				b.Fatal(err)
			}
		}
		eps.Close() // the writer of ended episodes is done with them
		runtime.GC()
		var m1 runtime.MemStats
		runtime.ReadMemStats(&m1)
		held += float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / (1 << 20)
		runtime.KeepAlive(eps)
	}
	b.ReportMetric(held/float64(b.N), "MiB-held/300-episodes")
}
