package eval_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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
//
// The run is paced by events, not by the scheduler: the model answers an
// episode only once the runner has counted the one before it
// (Config.Progress), and never answers the episode after the one the run
// should stop at, so that episode can end only by the run stopping. A
// runner that ran ahead of its count, or failed to stop, ends the test
// with the wrong count.
func TestStopAfterErrors(t *testing.T) {
	for _, tc := range []struct {
		stopAfter, ran int
		stopped        bool
	}{
		{2, 2, true}, // of 6: 3 tasks × 2 runs
		{0, eval.DefaultStopAfterErrors, true},
		{-1, 6, false},
	} {
		go1 := make(chan struct{}, 6) // one token per episode the model may answer
		released := make(chan struct{})
		model := llmtest.New(func(int, *llm.Request) llmtest.Reply {
			select {
			case <-go1:
			case <-released:
			}
			return llmtest.Reply{Content: "Thought: I now know the final answer\nFinal Answer: Brown"}
		})
		judgeSrv := llmtest.New(llmtest.Script(llmtest.Reply{Status: 500}))
		f := newFixture(t)
		cfg := config(f, agent.ReAct{Budget: 2}, t.TempDir())
		cfg.Concurrency, cfg.StopAfterErrors = 1, tc.stopAfter
		cfg.Model = llm.New(model.URL(), llm.Options{})
		cfg.Judge = &judge.Judge{Model: llm.New(judgeSrv.URL(), llm.Options{MaxRetries: 1, Backoff: 1}), ModelName: "judge"}
		cfg.Progress = func(done, total int, _ *eval.Episode) {
			if done < tc.ran {
				go1 <- struct{}{}
			}
		}
		go1 <- struct{}{}
		type result struct {
			res *eval.Result
			err error
		}
		ended := make(chan result, 1)
		go func() {
			res, err := eval.Run(context.Background(), cfg)
			ended <- result{res, err}
		}()
		var r result
		select {
		case r = <-ended:
		case <-time.After(2 * time.Minute): // a safety net only: a runner that does not stop waits here
			close(released)
			r = <-ended
			t.Errorf("stop after %d: the run did not stop by itself", tc.stopAfter)
		}
		select {
		case <-released:
		default:
			close(released)
		}
		model.Close()
		judgeSrv.Close()
		res, err := r.res, r.err
		if res == nil || res.Ran != tc.ran || len(res.Episodes) != tc.ran {
			var eps []string
			if res != nil {
				for _, e := range res.Episodes {
					eps = append(eps, fmt.Sprintf("%s run %d: errored %q, answer %q", e.TaskID, e.Run, e.Errored(), answerOf(e)))
				}
			}
			t.Fatalf("stop after %d: ran %+v, want %d (%v); episodes, in the order counted:\n%s", tc.stopAfter, res, tc.ran, err, strings.Join(eps, "\n"))
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

// answerOf is an episode's final answer, for failure messages.
func answerOf(e *eval.Episode) string {
	if e.Outcome == nil {
		return "(no outcome)"
	}
	return fmt.Sprintf("%s (loops %d, SoPR verdicts %d)", e.Outcome.FinalAnswerRaw, e.Outcome.Loops, len(e.SoPR))
}
