package episode_test

import (
	"context"
	"fmt"

	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
)

// A rollout in-process: reset an episode of the demo's task demo-3, call
// the tool its gold sequence calls, answer, and read the reward (the
// demo's tasks have no gold answer, so the APIs called are scored
// against the gold sequence's: api_f1).
func Example() {
	ctx := context.Background()
	env, _ := environment.Open(ctx, nil) // the demo, in memory
	defer env.Close()
	eps, _ := episode.New(ctx, env, episode.Options{})
	defer eps.Close()

	first, err := eps.Reset(ctx, "", &episode.ResetOptions{TaskID: "demo-3"})
	if err != nil {
		fmt.Println(err)
		return
	}
	id := first.Observation.EpisodeID
	fmt.Println(first.Observation.Query)

	res, _ := eps.Step(ctx, "", id, &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{
		{Name: "convert_currency", Args: map[string]any{"amount": 100, "from": "EUR", "to": "USD"}},
	}})
	fmt.Println(res.Observation.Result.Status, *res.Reward, res.Done)

	res, _ = eps.Step(ctx, "", id, &episode.Action{Type: episode.ActionFinalAnswer, Answer: &episode.Answer{Text: "About 108 US dollars."}})
	fmt.Println(*res.Reward, res.Done, res.Info.SuccessKind, res.Info.Return)
	// Output:
	// I have 100 euros. How many US dollars is that?
	// ok 0 false
	// 1 true api_f1 1
}
