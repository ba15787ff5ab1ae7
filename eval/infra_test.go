package eval_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval"
)

// TestSummaryCountsInfraFailuresApart: an oracle run while the
// simulator's model endpoint is down (and the server answers errors
// rather than synthesize) fails its tasks through no fault of the agent:
// the outcome says so (agent.Outcome.InfraFailures), and the summary
// counts those episodes apart from the agent's failures.
func TestSummaryCountsInfraFailuresApart(t *testing.T) {
	ctx := context.Background()
	down := httptest.NewServer(nil)
	url := down.URL + "/v1"
	down.Close()
	env, err := environment.Open(ctx, &environment.Config{Store: ":memory:",
		Simulator: environment.SimulatorConfig{URL: url, Model: "m", OnFailure: "error", Budget: 200 * time.Millisecond},
		Breakers:  environment.BreakerConfig{Failures: 1}}) // fail fast after the first
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	local := agent.NewLocal(env.Pipeline, env.Collections(), agent.LocalOptions{})
	var eps []*eval.Episode
	for _, task := range env.Tasks["demo"][:2] {
		s, err := local.Start(ctx, task)
		if err != nil {
			t.Fatal(err)
		}
		out := agent.Oracle{}.Run(ctx, &agent.Episode{Task: task, Session: s})
		s.Close(ctx)
		if out.InfraFailures == 0 || out.InfraFailure == "" {
			t.Fatalf("%s: the oracle's calls failed with the endpoint down, unmarked: %+v", task.ID, out.Results)
		}
		eps = append(eps, &eval.Episode{TaskID: task.ID, Agent: "oracle", Model: "-", Split: "demo", Gold: task.Gold, Outcome: out,
			Score: eval.Score{HasGold: len(task.Gold) > 0}})
	}
	g := eval.Summarize(eps).Groups[0]
	if g.InfraFailed != 2 || g.Errors != 0 {
		t.Fatalf("summary: %d infra-failed episodes, %d errors; want 2 and 0", g.InfraFailed, g.Errors)
	}
}
