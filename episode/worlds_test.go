package episode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/episode/episodetest"
	"github.com/toolenv/toolenv/episode/mcpepisode"
	"github.com/toolenv/toolenv/episode/openenv"
	"github.com/toolenv/toolenv/eval/endstate"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/nl2api"
)

// writeTasks returns the write tasks of a collection's tasks.
func writeTasks(tasks []*toolenv.Task) []*toolenv.Task {
	var out []*toolenv.Task
	for _, t := range tasks {
		if _, ok := t.Meta[nl2api.MetaWrite]; ok {
			out = append(out, t)
		}
	}
	return out
}

// playHTTP plays task's gold calls, as mutate changes them (nil: as
// they are), over OpenEnv's HTTP /reset and /step, and returns the
// final answer's reward and outcome.
func playHTTP(ctx context.Context, c *openenv.Client, coll *toolenv.Collection, task *toolenv.Task, reset map[string]any, mutate func([]toolenv.GoldCall) []toolenv.GoldCall) (float64, map[string]any, error) {
	kw := map[string]any{"collection": coll.Name, "task_id": task.ID}
	for k, v := range reset {
		kw[k] = v
	}
	r, err := c.ResetHTTP(ctx, kw)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: reset: %w", task.ID, err)
	}
	id, _ := r.Metadata["episode_id"].(string)
	played := *task
	if mutate != nil {
		played.Gold = mutate(append([]toolenv.GoldCall(nil), task.Gold...))
	}
	o := episodetest.NewOracle(coll, &played)
	for {
		g, ok, err := o.Next()
		if err != nil {
			return 0, nil, err
		}
		if !ok {
			break
		}
		r, err = c.StepHTTP(ctx, id, map[string]any{"type": "call_tool", "tool_name": g.Name, "arguments": g.Args, "label": g.Label})
		if err != nil {
			return 0, nil, fmt.Errorf("%s: step %s: %w", task.ID, g.Name, err)
		}
		if e := r.Observation["error"]; e != nil {
			return 0, nil, fmt.Errorf("%s: %s failed: %v", task.ID, g.Name, e)
		}
		body, _ := json.Marshal(r.Observation["result"].(map[string]any)["data"])
		o.Observe(g.Label, body)
	}
	r, err = c.StepHTTP(ctx, id, map[string]any{"type": "final_answer"})
	if err != nil {
		return 0, nil, fmt.Errorf("%s: final answer: %w", task.ID, err)
	}
	if !r.Done || r.Reward == nil {
		return 0, nil, fmt.Errorf("%s: not done after the final answer", task.ID)
	}
	info, _ := r.Metadata["info"].(map[string]any)
	outcome, _ := info["outcome"].(map[string]any)
	return *r.Reward, outcome, nil
}

// TestWritesBIRD: the BIRD build with writes, served as episodes. The
// oracle plays every kept write task of SLOT, SEL and REST to reward 1
// over OpenEnv's HTTP endpoints, its WebSocket and MCP sessions; wrong
// writes — another row, an extra row, a missing row, a wrong value — get
// the documented lower rewards; and 1,000 episodes writing the same row
// at once each read only their own write.
func TestWritesBIRD(t *testing.T) {
	data := shareddata.Require(t, "bird")
	ctx := context.Background()
	out := t.TempDir()
	if _, err := nl2api.Build(ctx, nl2api.Options{Data: data, Out: out, Writes: true, ImageCache: imageCache}); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, f := range nl2api.Flavors {
		dirs = append(dirs, filepath.Join(out, f))
	}
	env, err := environment.Open(ctx, &environment.Config{Collections: dirs, ImageCache: imageCache.Dir})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	eps, err := episode.New(ctx, env, episode.Options{Max: 2000})
	if err != nil {
		t.Fatal(err)
	}
	defer eps.Close()
	mux := http.NewServeMux()
	mux.Handle("/openenv/mcp", mcpepisode.NewHandler(eps, mcpepisode.Options{}))
	mux.Handle("/openenv/", http.StripPrefix("/openenv", openenv.NewHandler(eps, openenv.Options{})))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	t.Run("oracle", func(t *testing.T) {
		for _, coll := range env.Collections() {
			tasks := writeTasks(env.Tasks[coll.Name])
			if len(tasks) < 20 {
				t.Errorf("%s: %d write tasks", coll.Name, len(tasks))
			}
			var (
				mu     sync.Mutex
				failed int
				wg     sync.WaitGroup
			)
			report := func(what string, reward float64, err error) {
				if err == nil && reward == 1 {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				failed++
				if failed <= 5 {
					t.Errorf("%s %s: reward %g, %v", coll.Name, what, reward, err)
				}
			}
			for w := 0; w < 4; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					c := openenv.NewClient(srv.URL+"/openenv", openenv.ClientOptions{})
					defer c.Close()
					for i := w; i < len(tasks); i += 4 {
						task := tasks[i]
						r, outcome, err := playHTTP(ctx, c, coll, task, nil, nil)
						if err == nil {
							err = checkStateOutcome(outcome, true)
						}
						report(task.ID+" over HTTP", r, err)
						r, err = episodetest.PlayOpenEnv(ctx, c, coll, task, nil)
						report(task.ID+" over the WebSocket", r, err)
						r, err = episodetest.PlayMCP(ctx, srv.URL+"/openenv/mcp", "", coll, task)
						report(task.ID+" over MCP", r, err)
					}
				}(w)
			}
			wg.Wait()
			t.Logf("%s: %d write tasks at reward 1 over HTTP, the WebSocket and MCP", coll.Name, len(tasks))
		}
	})

	t.Run("wrong writes", func(t *testing.T) {
		testWrongWrites(t, ctx, srv.URL, env, filepath.Join(data, "dev_databases"))
	})

	t.Run("1000 episodes write one row", func(t *testing.T) {
		testSameRow(t, ctx, eps, env)
	})
}

// checkStateOutcome checks an outcome's state part.
func checkStateOutcome(outcome map[string]any, success bool) error {
	st, _ := outcome["state"].(map[string]any)
	if st == nil {
		return fmt.Errorf("the outcome has no state: %v", outcome)
	}
	if got := fmt.Sprint(st["success"]) == "1"; got != success {
		return fmt.Errorf("state success %v, want %v: %v", st["success"], success, st)
	}
	if success && (st["hash"] != st["gold_hash"] || st["hash"] == "") {
		return fmt.Errorf("the end state's hash %v is not the gold's %v", st["hash"], st["gold_hash"])
	}
	return nil
}

// testWrongWrites plays REST and SLOT write tasks with wrong writes and
// checks their rewards under state (0) and state_f1 (the row changes'
// F1) and what the outcome says.
func testWrongWrites(t *testing.T, ctx context.Context, base string, env *environment.Environment, dbs string) {
	coll := env.Registry.Collection("bird-rest")
	c := openenv.NewClient(base+"/openenv", openenv.ClientOptions{})
	defer c.Close()
	// otherKey finds a key of task's table that its condition does not
	// select.
	otherKey := func(task *toolenv.Task) (string, any) {
		gold, _, _ := endstate.GoldChanges(task)
		tc := gold.Tables[0]
		db, err := rodb.Open(ctx, "x", filepath.Join(dbs, fmt.Sprint(task.Meta["db"]), fmt.Sprint(task.Meta["db"])+".sqlite"), rodb.Options{InMemoryMaxBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		v, err := db.QueryValue(ctx, fmt.Sprintf("SELECT %s FROM %s WHERE NOT (%s) LIMIT 1", rodb.Quote(tc.Key[0]), rodb.Quote(tc.Table), task.Meta["condition"]), nil)
		if err != nil {
			t.Fatal(err)
		}
		return tc.Key[0], v
	}
	type wrong struct {
		name    string
		pick    func(*toolenv.Task) bool
		mutate  func(*toolenv.Task) func([]toolenv.GoldCall) []toolenv.GoldCall
		f1      func(float64) bool
		state   bool
		collide bool
	}
	isUpdate := func(t *toolenv.Task) bool {
		gold, _, _ := endstate.GoldChanges(t)
		return t.Meta[nl2api.MetaWrite] == nl2api.WriteUpdate && len(gold.Tables) == 1 && len(gold.Tables[0].Key) == 1
	}
	cases := []wrong{
		{name: "another row", pick: isUpdate, state: false, collide: true, f1: func(f float64) bool { return f == 0 },
			mutate: func(task *toolenv.Task) func([]toolenv.GoldCall) []toolenv.GoldCall {
				_, key := otherKey(task)
				return func(g []toolenv.GoldCall) []toolenv.GoldCall {
					g = g[:2] // find, then one update: of another row
					args := map[string]any{}
					for k, v := range g[1].Args {
						if s, ok := v.(string); ok && strings.HasPrefix(s, "$FOUND.") {
							v = key
						}
						args[k] = v
					}
					g[1].Args = args
					return g
				}
			}},
		{name: "an extra row", pick: isUpdate, state: false, collide: true, f1: func(f float64) bool { return f > 0 && f < 1 },
			mutate: func(task *toolenv.Task) func([]toolenv.GoldCall) []toolenv.GoldCall {
				_, key := otherKey(task)
				return func(g []toolenv.GoldCall) []toolenv.GoldCall {
					extra := toolenv.GoldCall{Name: g[1].Name, Label: "EXTRA", Args: map[string]any{}}
					for k, v := range g[1].Args {
						if s, ok := v.(string); ok && strings.HasPrefix(s, "$FOUND.") {
							v = key
						}
						extra.Args[k] = v
					}
					return append(g, extra)
				}
			}},
		{name: "a missing row", pick: func(t *toolenv.Task) bool { return len(t.Gold) >= 3 }, state: false, f1: func(f float64) bool { return f > 0 && f < 1 },
			mutate: func(*toolenv.Task) func([]toolenv.GoldCall) []toolenv.GoldCall {
				return func(g []toolenv.GoldCall) []toolenv.GoldCall { return g[:len(g)-1] }
			}},
		{name: "a wrong value", pick: isUpdate, state: false, f1: func(f float64) bool { return f == 0 },
			mutate: func(task *toolenv.Task) func([]toolenv.GoldCall) []toolenv.GoldCall {
				return func(g []toolenv.GoldCall) []toolenv.GoldCall {
					for i := 1; i < len(g); i++ {
						args := map[string]any{}
						for k, v := range g[i].Args {
							if s, ok := v.(string); ok && !strings.HasPrefix(s, "$") {
								v = s + " (not asked)"
							}
							args[k] = v
						}
						g[i].Args = args
					}
					return g
				}
			}},
	}
	tasks := writeTasks(env.Tasks[coll.Name])
	for _, wc := range cases {
		var task *toolenv.Task
		for _, tk := range tasks {
			if wc.pick(tk) && (wc.name != "a wrong value" || hasText(tk)) {
				task = tk
				break
			}
		}
		if task == nil {
			t.Fatalf("%s: no REST write task to play it on", wc.name)
		}
		reward, outcome, err := playHTTP(ctx, c, coll, task, nil, wc.mutate(task))
		if err != nil {
			t.Fatalf("%s on %s: %v", wc.name, task.ID, err)
		}
		if reward != 0 {
			t.Errorf("%s on %s: reward %g under state, want 0", wc.name, task.ID, reward)
		}
		st, _ := outcome["state"].(map[string]any)
		if st == nil || st["state"] != wc.state || (st["no_collateral"] == false) != wc.collide {
			t.Errorf("%s on %s: state %v, no_collateral %v; want %v, %v", wc.name, task.ID, st["state"], st["no_collateral"], wc.state, !wc.collide)
		}
		f1, _, err := playHTTP(ctx, c, coll, task, map[string]any{"reward": map[string]any{"success": "state_f1"}}, wc.mutate(task))
		if err != nil {
			t.Fatal(err)
		}
		if !wc.f1(f1) {
			t.Errorf("%s on %s: reward %g under state_f1", wc.name, task.ID, f1)
		}
		right, _, err := playHTTP(ctx, c, coll, task, map[string]any{"reward": map[string]any{"success": "state_f1"}}, nil)
		if err != nil || right != 1 || f1 >= right {
			t.Errorf("%s on %s: the right writes score %g (%v), the wrong ones %g", wc.name, task.ID, right, err, f1)
		}
		t.Logf("%s on %s: reward 0 (state), %.3f (state_f1)", wc.name, task.ID, f1)
	}
}

// hasText reports whether a task's write sets a text value.
func hasText(t *toolenv.Task) bool {
	for _, g := range t.Gold[1:] {
		for _, v := range g.Args {
			if s, ok := v.(string); ok && !strings.HasPrefix(s, "$") {
				return true
			}
		}
	}
	return false
}

// testSameRow: 1,000 episodes, open together, each set the same row to
// a value of its own, then read it: each reads its own value.
func testSameRow(t *testing.T, ctx context.Context, eps *episode.Env, env *environment.Environment) {
	coll := env.Registry.Collection("bird-rest")
	var task *toolenv.Task
	for _, tk := range writeTasks(env.Tasks[coll.Name]) {
		if tk.Meta[nl2api.MetaWrite] == nl2api.WriteUpdate && tk.Group == "student_club" {
			task = tk
			break
		}
	}
	if task == nil {
		t.Fatal("no student_club update task")
	}
	const n = 1000
	ids := make([]string, n)
	for i := range ids {
		r, err := eps.Reset(ctx, "", &episode.ResetOptions{Collection: coll.Name, TaskID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = r.Observation.EpisodeID
	}
	if eps.Open() < n {
		t.Fatalf("%d episodes open, want %d", eps.Open(), n)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			mine := fmt.Sprintf("episode %d", i)
			upd := &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{{Name: "update_member", Args: map[string]any{"member_id": "rec1x5zBFIqoOuPW8", "position": mine}}}}
			if r, err := eps.Step(ctx, "", ids[i], upd); err != nil || r.Observation.Result == nil || r.Observation.Result.Status != toolenv.StatusOK {
				errs <- fmt.Errorf("episode %d: update: %v %+v", i, err, r)
				return
			}
			get := &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{{Name: "get_member_by_key", Args: map[string]any{"member_id": "rec1x5zBFIqoOuPW8"}}}}
			r, err := eps.Step(ctx, "", ids[i], get)
			if err != nil || r.Observation.Result == nil {
				errs <- fmt.Errorf("episode %d: read: %v", i, err)
				return
			}
			if body := string(r.Observation.Result.Data); !strings.Contains(body, `"`+mine+`"`) {
				errs <- fmt.Errorf("episode %d reads %s, not its own write", i, body)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	bad := 0
	for err := range errs {
		if bad++; bad <= 5 {
			t.Error(err)
		}
	}
	for _, id := range ids {
		_ = eps.End(ctx, "", id)
	}
}
