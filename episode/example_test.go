package episode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

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

// Replay plays a record's actions again in a fresh episode: a record
// holds every step that happened and nothing else, so its rewards come
// back exactly.
func ExampleEnv_Replay() {
	ctx := context.Background()
	env, _ := environment.Open(ctx, nil)
	defer env.Close()
	eps, _ := episode.New(ctx, env, episode.Options{})
	defer eps.Close()

	first, _ := eps.Reset(ctx, "", &episode.ResetOptions{TaskID: "demo-3", Reward: episode.Reward{StepCost: 0.1}})
	id := first.Observation.EpisodeID
	eps.Step(ctx, "", id, &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{
		{Name: "convert_currency", Args: map[string]any{"amount": 100, "from": "EUR", "to": "USD"}}}})
	eps.Step(ctx, "", id, &episode.Action{Type: episode.ActionFinalAnswer, Answer: &episode.Answer{Text: "About 108 US dollars."}})

	rec, _ := eps.Record(ctx, "", id)
	again, err := eps.Replay(ctx, "", rec)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rec.Return, again.Return, len(again.Steps))
	// Output:
	// 0.8 0.8 2
}

// Rescore rewards the store's episodes anew under another definition
// and writes each as a new record.
func ExampleEnv_Rescore() {
	ctx := context.Background()
	env, _ := environment.Open(ctx, nil) // the demo, its store in memory
	defer env.Close()
	eps, _ := episode.New(ctx, env, episode.Options{})
	first, _ := eps.Reset(ctx, "", &episode.ResetOptions{TaskID: "demo-3"})
	id := first.Observation.EpisodeID
	eps.Step(ctx, "", id, &episode.Action{Type: episode.ActionFinalAnswer, Answer: &episode.Answer{Text: "I cannot tell."}})
	eps.Close() // the ended episode is in the store

	again, _ := episode.New(ctx, env, episode.Options{})
	defer again.Close()
	def, _ := episode.ParseReward([]byte(`{"success": "none", "step_cost": 0.5}`))
	var out strings.Builder
	rep, err := again.Rescore(ctx, &out, def, episode.ExportJSONL)
	if err != nil {
		fmt.Println(err)
		return
	}
	var rec episode.Record
	json.Unmarshal([]byte(out.String()), &rec)
	fmt.Println(rep.Written, rec.RescoredFrom == id, rec.Return)
	// Output:
	// 1 true -0.5
}
