package environment_test

import (
	"context"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/endstate"
)

// TestShopDemoStatefulTasks: the embedded shop demo's stateful tasks
// (an initial state, end-state checks: SQL rows and a read-tool call)
// are completed by the oracle, each in its own world; the same tasks
// played with a wrong value fail their checks; the shop's database is
// never changed.
func TestShopDemoStatefulTasks(t *testing.T) {
	ctx := context.Background()
	env, err := environment.Open(ctx, &environment.Config{DemoShop: true})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	coll := env.Registry.Collection("demo-shop")
	tasks := env.Tasks["demo-shop"]
	if coll == nil || len(tasks) != 3 {
		t.Fatalf("demo-shop: %v, %d tasks", coll, len(tasks))
	}
	for _, task := range tasks {
		if !endstate.Stateful(task) || len(task.Checks) == 0 {
			t.Fatalf("%s is not a stateful task with checks", task.ID)
		}
	}
	local := agent.NewLocal(env.Pipeline, env.Collections(), agent.LocalOptions{})
	run := func(tasks []*toolenv.Task) *eval.Result {
		res, err := eval.Run(ctx, eval.Config{Tasks: tasks, Collections: map[string]*toolenv.Collection{coll.Name: coll}, Env: local, Agent: agent.Oracle{}, Concurrency: 3, Out: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Episodes) != len(tasks) {
			t.Fatalf("%d episodes of %d tasks", len(res.Episodes), len(tasks))
		}
		return res
	}
	for _, e := range run(tasks).Episodes {
		if !e.Score.Completed || e.Score.State == nil || e.Score.State.Total == 0 || !e.Score.State.ChecksHold() {
			t.Errorf("%s: the oracle's episode: completed %v, state %+v", e.TaskID, e.Score.Completed, e.Score.State)
		}
	}
	// The same calls with another value: every check fails, and says why.
	var wrong []*toolenv.Task
	for _, task := range tasks {
		w := *task
		w.Gold = nil
		for _, g := range task.Gold {
			args := map[string]any{}
			for k, v := range g.Args {
				switch k {
				case "stock", "quantity":
					v = 1
				case "status":
					v = "open"
				}
				args[k] = v
			}
			w.Gold = append(w.Gold, toolenv.GoldCall{Name: g.Name, Args: args, Label: g.Label})
		}
		wrong = append(wrong, &w)
	}
	for _, e := range run(wrong).Episodes {
		st := e.Score.State
		if e.Score.Completed || st == nil || st.Total == 0 || st.ChecksHold() || !strings.Contains(e.Score.AnswerError, "check") {
			t.Errorf("%s played wrong: completed %v, state %+v (%s)", e.TaskID, e.Score.Completed, st, e.Score.AnswerError)
		}
	}
	// The database itself is as its script made it.
	res := env.Pipeline.Invoke(ctx, &toolenv.Call{Tool: coll.Tool("find_product_by_name"), Collection: coll, Args: map[string]any{"name": "Green tea"}})
	if !res.OK() || !strings.Contains(string(res.Body), `4.5,12]`) {
		t.Errorf("the shop's green tea, outside any session: %s %s", res.Status, res.Body)
	}
}
