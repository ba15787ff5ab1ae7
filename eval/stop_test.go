package eval_test

import (
	"context"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// TestStopAfterErrors runs react with a model that answers and a judge
// that does not (HTTP 500 after its one retry): judged episodes measured
// nothing, and the run stops after StopAfterErrors of them in a row with
// a StatusUnavailable error, Result.Stopped saying why. StopAfterErrors
// below 0 never stops: every episode runs, each marked errored.
func TestStopAfterErrors(t *testing.T) {
	model := llmtest.New(llmtest.Script(llmtest.Reply{Content: "Thought: I now know the final answer\nFinal Answer: Brown"}))
	defer model.Close()
	judgeSrv := llmtest.New(llmtest.Script(llmtest.Reply{Status: 500}))
	defer judgeSrv.Close()
	for _, tc := range []struct {
		stopAfter, ran int
		stopped        bool
	}{
		{2, 2, true}, // of 6: 3 tasks × 2 runs
		{0, eval.DefaultStopAfterErrors, true},
		{-1, 6, false},
	} {
		f := newFixture(t)
		cfg := config(f, agent.ReAct{Budget: 2}, t.TempDir())
		cfg.Concurrency, cfg.StopAfterErrors = 1, tc.stopAfter
		cfg.Model = llm.New(model.URL(), llm.Options{})
		cfg.Judge = &judge.Judge{Model: llm.New(judgeSrv.URL(), llm.Options{MaxRetries: 1, Backoff: 1}), ModelName: "judge"}
		res, err := eval.Run(context.Background(), cfg)
		// Episodes that finished while the run was stopping are kept: the
		// one running and the one waiting to be written, one at a time.
		if res == nil || res.Ran < tc.ran || res.Ran > tc.ran+2 || !tc.stopped && res.Ran != tc.ran {
			t.Fatalf("stop after %d: ran %+v, want %d (%v)", tc.stopAfter, res, tc.ran, err)
		}
		for _, e := range res.Episodes {
			if why := e.Errored(); !strings.HasPrefix(why, "judge: ") || !strings.Contains(why, "HTTP 500") {
				t.Errorf("episode %s errored %q", e.TaskID, why)
			}
		}
		if !tc.stopped {
			if err != nil || res.Stopped != "" {
				t.Errorf("never stop: %v %q", err, res.Stopped)
			}
			continue
		}
		if toolenv.StatusOf(err) != toolenv.StatusUnavailable || !strings.Contains(res.Stopped, "episodes in a row measured nothing") ||
			!strings.Contains(err.Error(), "the run stopped after") {
			t.Errorf("stop after %d: %v, stopped %q", tc.stopAfter, err, res.Stopped)
		}
	}
}
