package episode_test

import (
	"context"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// TestPassRateReward: with a judge, pass_rate rewards the judge's
// verdict on the episode (StableToolBench's prompts, which read the
// calls and the final answer); a judge that cannot be reached is an
// error that leaves the episode as it was; without a judge the measure
// is refused at reset.
func TestPassRateReward(t *testing.T) {
	ctx := context.Background()
	verdict := "Solved"
	srv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		if verdict == "" {
			return llmtest.Reply{Status: 503}
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "j", Type: "function", Function: llm.FunctionCall{Name: judge.StageCheck,
			Arguments: `{"answer_status": "` + verdict + `", "reason": "read the answer"}`}}}}
	})
	defer srv.Close()
	env, err := environment.Open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	eps, err := episode.New(ctx, env, episode.Options{Judge: &judge.Judge{Model: llm.New(srv.URL(), llm.Options{MaxRetries: -1}), ModelName: "judge"}})
	if err != nil {
		t.Fatal(err)
	}
	defer eps.Close()
	play := func() (*episode.StepResult, error) {
		r, err := eps.Reset(ctx, "", &episode.ResetOptions{TaskID: "demo-3", Reward: episode.Reward{Success: episode.PassRate}})
		if err != nil {
			t.Fatal(err)
		}
		id := r.Observation.EpisodeID
		if _, err := eps.Step(ctx, "", id, &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{{Name: "convert_currency", Args: map[string]any{"amount": 100, "from": "EUR", "to": "USD"}}}}); err != nil {
			t.Fatal(err)
		}
		return eps.Step(ctx, "", id, &episode.Action{Type: episode.ActionFinalAnswer, Answer: &episode.Answer{Text: "About 108 US dollars."}})
	}
	for _, c := range []struct {
		verdict string
		reward  float64
	}{{"Solved", 1}, {"Unsure", 0.5}, {"Unsolved", 0}} {
		verdict = c.verdict
		r, err := play()
		if err != nil || *r.Reward != c.reward || r.Info.Outcome.Judge == nil || string(r.Info.Outcome.Judge.Label) != c.verdict {
			t.Fatalf("%s: %+v %v", c.verdict, r, err)
		}
	}
	// The judge read the episode: its query and final answer.
	last := srv.Requests()[len(srv.Requests())-1].Messages[0].Content
	if !strings.Contains(last, "I have 100 euros") || !strings.Contains(last, "About 108 US dollars.") {
		t.Fatalf("the judge was asked %q", last)
	}
	verdict = ""
	if _, err := play(); err == nil || toolenv.StatusOf(err) != toolenv.StatusUnavailable {
		t.Fatalf("a dead judge: %v, want unavailable", err)
	}
	noJudge, err := episode.New(ctx, env, episode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer noJudge.Close()
	if _, err := noJudge.Reset(ctx, "", &episode.ResetOptions{TaskID: "demo-3", Reward: episode.Reward{Success: episode.PassRate}}); err == nil || !strings.Contains(err.Error(), "--episode-judge-url") {
		t.Fatalf("pass_rate without a judge: %v", err)
	}
}
