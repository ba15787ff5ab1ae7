package sequence

import (
	"context"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// Evaluate scores the baseline alone without a model, and with one runs
// every task (reporting progress per task) and records the model, style
// and scores; a canceled context stops before the model's tasks.
func TestEvaluate(t *testing.T) {
	c, retr := setup(t)
	tasks := []*toolenv.Task{
		task("a", "what is the weather in Rome", "skylark_current_weather"),
		task("b", "convert 10 euros to yen", "convert_currency"),
		task("c", "search the book catalogue for dune", "search_books"),
	}
	rep, outs, base := Evaluate(context.Background(), retr, tasks, EvalOptions{Options: Options{K: 4}})
	if rep.Tasks != 3 || rep.K != 4 || rep.Mode != "default" || rep.Scores != nil || outs != nil || len(base) != 3 || rep.Baseline.Tasks != 3 {
		t.Fatalf("baseline only: %+v, %d outcomes, %d baseline", rep, len(outs), len(base))
	}
	// The model answers each task with its gold API, by its display name.
	srv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		return llmtest.Reply{Content: `[["Skylark Weather", "Current weather"]]`}
	})
	defer srv.Close()
	var calls []int
	opts := EvalOptions{SearchMode: "lexical", Chat: llm.New(srv.URL(), llm.Options{MaxRetries: -1}), Tool: c.Tool,
		Options:  Options{Model: "m", Style: CoT, K: 4, NoReflection: true, Seed: 1},
		Progress: func(done, total int) { calls = append(calls, done*10+total) }}
	rep, outs, _ = Evaluate(context.Background(), retr, tasks, opts)
	if rep.Scores == nil || rep.Scores.Tasks != 3 || rep.ModelName != "m" || rep.Style != CoT || rep.Mode != "lexical" || len(outs) != 3 {
		t.Fatalf("with a model: %+v, %d outcomes", rep, len(outs))
	}
	if len(calls) != 3 || calls[0] != 13 || calls[2] != 33 {
		t.Errorf("progress calls %v, want done 1..3 of 3", calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, outs, _ = Evaluate(ctx, retr, tasks, opts)
	if len(outs) != 0 || rep.Scores == nil || rep.Scores.Tasks != 0 {
		t.Errorf("canceled: %d outcomes, %+v", len(outs), rep.Scores)
	}
}
