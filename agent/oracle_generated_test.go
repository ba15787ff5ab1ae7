package agent_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/nl2api"
	"github.com/toolenv/toolenv/nl2api/nl2apitest"
)

// TestOracleOnGeneratedSlotSel replays every gold sequence of a generated
// NL2SQL corpus's SLOT and SEL collections in-process, through
// environment.Open, as eval does. Their gold calls read "$label$" of
// earlier outputs the session stores (and SEL calls getters the task does
// not list, of columns an aggregate made), so the oracle must pass those
// as written while it resolves references for other tools: each task
// reaches its gold answer only if it does.
func TestOracleOnGeneratedSlotSel(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, out := filepath.Join(dir, "data"), filepath.Join(dir, "out")
	if _, err := nl2apitest.Generate(data, nl2apitest.Options{Seed: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := nl2api.Build(ctx, nl2api.Options{Data: data, Out: out, Flavors: []string{"slot", "sel"}, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	env, err := environment.Open(ctx, &environment.Config{Store: ":memory:", Collections: []string{filepath.Join(out, "slot"), filepath.Join(out, "sel")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	local := agent.NewLocal(env.Pipeline, env.Collections(), agent.LocalOptions{})
	for _, name := range []string{"bird-slot", "bird-sel"} {
		t.Run(name, func(t *testing.T) {
			res, err := eval.Run(ctx, eval.Config{Tasks: env.Tasks[name], Env: local, Agent: agent.Oracle{}, Concurrency: 2, Out: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			completed, scored := 0, 0
			for _, e := range res.Episodes {
				if !e.Score.HasAnswer {
					continue
				}
				scored++
				if e.Score.Completed {
					completed++
				} else {
					t.Errorf("task %s did not reach its gold answer: %s (error %q)", e.TaskID, e.Score.AnswerError, e.Outcome.Trajectory.Error)
				}
			}
			if scored < 10 || completed != scored {
				t.Fatalf("%d of %d tasks with gold answers completed", completed, scored)
			}
		})
	}
}
