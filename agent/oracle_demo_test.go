package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/environment"
)

// demoEnv opens the embedded demo in memory, as toolenv serve and eval do
// with nothing else given, and an in-process agent environment over it.
func demoEnv(t *testing.T) (*environment.Environment, *agent.Local) {
	t.Helper()
	env, err := environment.Open(context.Background(), &environment.Config{Store: ":memory:"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	return env, agent.NewLocal(env.Pipeline, env.Collections(), agent.LocalOptions{})
}

func runOracle(t *testing.T, local *agent.Local, task *toolenv.Task) *agent.Outcome {
	t.Helper()
	ctx := context.Background()
	s, err := local.Start(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	return agent.Oracle{}.Run(ctx, &agent.Episode{Task: task, Session: s})
}

// The oracle completes every task of the embedded demo in-process, those
// whose gold calls take values from earlier outputs ("$var1.results[0].isbn$")
// included: the replay resolves references for any collection, not only
// for the SQL-backed ones whose sessions keep labelled data.
func TestOracleCompletesTheDemo(t *testing.T) {
	env, local := demoEnv(t)
	tasks := env.Tasks["demo"]
	if len(tasks) == 0 {
		t.Fatal("the demo has no tasks")
	}
	refs := 0
	for _, task := range tasks {
		t.Run(task.ID, func(t *testing.T) {
			out := runOracle(t, local, task)
			if !out.Trajectory.Finished || len(out.Results) != len(task.Gold) {
				t.Fatalf("not completed: finished %v, %d of %d calls, steps %+v", out.Trajectory.Finished, len(out.Results), len(task.Gold), out.Trajectory.Steps)
			}
			for i, r := range out.Results {
				if r.Status != toolenv.StatusOK {
					t.Errorf("call %d (%s): %s %s", i+1, r.Name, r.Status, r.Error)
				}
			}
			for _, g := range task.Gold {
				b, _ := json.Marshal(g.Args)
				if strings.Contains(string(b), `"$var`) {
					refs++
				}
			}
		})
	}
	if refs == 0 {
		t.Error("no demo task uses a reference; the test no longer proves they resolve")
	}
}

// Generated chains over the demo: a search, then one get_book per result
// taking its ISBN by reference; the book fetched is the one the reference
// points at. A reference past the end of the results stops the sequence
// with invalid_arguments naming it, without sending the call.
func TestOracleResolvesReferencesOverGeneratedChains(t *testing.T) {
	env, local := demoEnv(t)
	ctx := context.Background()
	for _, query := range []string{"dune", "foundation", "the", "robot", "history"} {
		call, res := env.Registry.NewCall("demo", "search_books", map[string]any{"query": query})
		if res != nil {
			t.Fatal(res.Error)
		}
		found := env.Pipeline.Invoke(ctx, call)
		var body struct {
			Results []struct {
				ISBN string `json:"isbn"`
			} `json:"results"`
		}
		if err := json.Unmarshal(found.Body, &body); err != nil || !found.OK() {
			t.Fatalf("search_books %q: %s %s", query, found.Status, found.Body)
		}
		gold := []toolenv.GoldCall{{Name: "search_books", Args: map[string]any{"query": query}, Label: "$var1"}}
		for i := range body.Results {
			gold = append(gold, toolenv.GoldCall{Name: "get_book", Args: map[string]any{"isbn": fmt.Sprintf("$var1.results[%d].isbn$", i)}, Label: fmt.Sprintf("$var%d", i+2)})
		}
		task := &toolenv.Task{ID: "chain-" + query, Collection: "demo", Query: query, Gold: gold}
		out := runOracle(t, local, task)
		if !out.Trajectory.Finished || len(out.Results) != len(gold) {
			t.Fatalf("%s: not completed: %+v", task.ID, out.Trajectory.Steps)
		}
		for i, want := range body.Results {
			var book struct {
				ISBN string `json:"isbn"`
			}
			if err := json.Unmarshal(out.Results[i+1].Body, &book); err != nil || book.ISBN != want.ISBN {
				t.Errorf("%s: get_book %d fetched %s, want the ISBN of result %d, %s", task.ID, i, out.Results[i+1].Body, i, want.ISBN)
			}
		}
		// The gold calls are recorded as written, for scoring.
		if got := out.Predicted[len(out.Predicted)-1].Args["isbn"]; !strings.HasPrefix(fmt.Sprint(got), "$var1.") {
			t.Errorf("%s: predicted call rewritten to %v", task.ID, got)
		}

		past := fmt.Sprintf("$var1.results[%d].isbn$", len(body.Results))
		bad := &toolenv.Task{ID: "past-" + query, Collection: "demo", Query: query, Gold: []toolenv.GoldCall{gold[0], {Name: "get_book", Args: map[string]any{"isbn": past}, Label: "$var2"}}}
		out = runOracle(t, local, bad)
		if out.Trajectory.Finished || len(out.Results) != 2 {
			t.Fatalf("%s: finished %v with %d results", bad.ID, out.Trajectory.Finished, len(out.Results))
		}
		last := out.Trajectory.Steps[len(out.Trajectory.Steps)-1]
		if last.Status != toolenv.StatusInvalidArguments || !strings.Contains(last.Observation, past) || !strings.Contains(last.Observation, "out of range") {
			t.Errorf("%s: last step %s %q; want invalid_arguments naming %s", bad.ID, last.Status, last.Observation, past)
		}
		if out.Trajectory.Counts.ToolCalls != 1 {
			t.Errorf("%s: %d tool calls sent; the unresolved one must not be sent", bad.ID, out.Trajectory.Counts.ToolCalls)
		}
	}
}
