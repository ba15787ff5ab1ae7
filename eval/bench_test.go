package eval_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// benchEnv is a collection of one instant tool served through the real
// call pipeline (validation, recovery, timeouts), and n tasks over it.
func benchEnv(b *testing.B, n int) (*toolenv.Collection, agent.Env, []*toolenv.Task) {
	in := toolenv.ObjectSchema()
	in.SetProp("id", &toolenv.Schema{Type: "integer", Description: "record id"})
	in.Required = []string{"id"}
	c := toolenv.NewCollection("bench", "bench", []*toolenv.Tool{{Name: "lookup", Description: "look a record up", Input: in}})
	c.Policy = toolenv.Policy{Validation: toolenv.ValidationStrict}
	reg := invoke.NewRegistry()
	body := []byte(`{"id": 1, "name": "x", "values": [1, 2, 3]}`)
	if err := reg.Add(c, toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
		return &toolenv.Result{Status: toolenv.StatusOK, Body: body, Source: toolenv.SourceLive}
	})); err != nil {
		b.Fatal(err)
	}
	env := agent.NewLocal(invoke.New(reg, invoke.Options{}), []*toolenv.Collection{c}, agent.LocalOptions{})
	var tasks []*toolenv.Task
	for i := 0; i < n; i++ {
		tasks = append(tasks, &toolenv.Task{ID: fmt.Sprintf("t%d", i), Collection: "bench", Query: "What is record 1?"})
	}
	return c, env, tasks
}

// reactScript answers as a ReAct model: steps-1 actions, then a final
// answer.
func reactScript(steps int, delay time.Duration) llmtest.Func {
	return func(n int, req *llm.Request) llmtest.Reply {
		turn := len(req.Messages) / 2
		if turn >= steps {
			return llmtest.Reply{Content: "Thought: I now know the final answer\nFinal Answer: x", Delay: delay}
		}
		return llmtest.Reply{Content: "Thought: look it up\nAction: lookup\nAction Input: {\"id\": 1}", Delay: delay}
	}
}

func client(url string, conc int) *llm.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2 * conc
	return llm.New(url, llm.Options{HTTPClient: &http.Client{Transport: tr}, MaxRetries: -1})
}

// BenchmarkReActStep measures the harness's own time per agent step
// against a model server that answers at once and a tool that answers at
// once: prompt building, the HTTP exchange on loopback, parsing, the call
// through the pipeline, bookkeeping. One iteration is one 10-step
// episode.
func BenchmarkReActStep(b *testing.B) {
	c, env, tasks := benchEnv(b, 1)
	srv := llmtest.New(reactScript(10, 0))
	defer srv.Close()
	m := client(srv.URL(), 1)
	b.ReportAllocs()
	b.ResetTimer()
	steps := 0
	for i := 0; i < b.N; i++ {
		sess, err := env.Start(context.Background(), tasks[0])
		if err != nil {
			b.Fatal(err)
		}
		out := agent.ReAct{}.Run(context.Background(), &agent.Episode{Task: tasks[0], Session: sess, Model: m, ModelName: "m", Collection: c})
		if !out.Trajectory.Finished {
			b.Fatalf("episode did not finish: %+v", out.Trajectory)
		}
		steps += out.Loops
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(steps), "ms/step")
}

// BenchmarkRunnerStep is BenchmarkReActStep through eval.Run: scoring,
// the journal (fsynced per batch) and the runner's bookkeeping included.
// One iteration is a run of 20 ten-step episodes, one at a time.
func BenchmarkRunnerStep(b *testing.B) {
	c, env, tasks := benchEnv(b, 20)
	srv := llmtest.New(reactScript(10, 0))
	defer srv.Close()
	m := client(srv.URL(), 1)
	b.ReportAllocs()
	b.ResetTimer()
	steps := 0
	for i := 0; i < b.N; i++ {
		res, err := eval.Run(context.Background(), eval.Config{Tasks: tasks, Collections: map[string]*toolenv.Collection{"bench": c}, Env: env,
			Agent: agent.ReAct{}, Model: m, ModelName: "m", Concurrency: 1, Out: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range res.Episodes {
			steps += e.Outcome.Loops
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(steps), "ms/step")
}

// BenchmarkReAct500At200ms runs 500 two-step ReAct tasks at concurrency 32
// against a model that takes 200 ms per answer. The ideal time is
// 500 × 2 × 200 ms / 32 = 6.25 s; "x-ideal" is the wall time over that.
// Run it with -benchtime=1x.
func BenchmarkReAct500At200ms(b *testing.B) {
	const tasksN, conc, steps = 500, 32, 2
	const delay = 200 * time.Millisecond
	c, env, tasks := benchEnv(b, tasksN)
	srv := llmtest.New(reactScript(steps, delay))
	defer srv.Close()
	m := client(srv.URL(), conc)
	ideal := time.Duration(tasksN*steps) * delay / conc
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := eval.Run(context.Background(), eval.Config{Tasks: tasks, Collections: map[string]*toolenv.Collection{"bench": c}, Env: env,
			Agent: agent.ReAct{}, Model: m, ModelName: "m", Concurrency: conc, Out: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		wall := time.Since(start)
		if len(res.Episodes) != tasksN {
			b.Fatalf("%d episodes", len(res.Episodes))
		}
		b.ReportMetric(wall.Seconds(), "s-wall")
		b.ReportMetric(wall.Seconds()/ideal.Seconds(), "x-ideal")
	}
}
