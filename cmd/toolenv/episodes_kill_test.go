package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/episode/episodetest"
	"github.com/toolenv/toolenv/episode/openenv"
	_ "modernc.org/sqlite"
)

// episodeCallsOK sums the successful tool calls the server made for RL
// episodes (its /metrics).
func episodeCallsOK(t *testing.T, base string) int {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "toolenv_calls_total{") && strings.Contains(line, `frontend="episode"`) && strings.Contains(line, `status="ok"`) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			n += int(v)
		}
	}
	return n
}

// TestEpisodeStepKilled: a server killed with SIGKILL in the middle of a
// step — its first call made, its second one waiting — leaves nothing of
// the step in the store: the server started again on the same SQLite
// store serves the episode on, a call naming the killed step's result
// fails as its record says it must, the task session's log holds exactly
// the calls the record shows, and the record replays to its rewards.
func TestEpisodeStepKilled(t *testing.T) {
	dir := t.TempDir()
	f := episodetest.Corpus(t, filepath.Join(dir, "corpus"), 29)
	coll, err := toolenv.ReadCollection(f["slot"])
	if err != nil {
		t.Fatal(err)
	}
	tasks, _, err := toolenv.ReadTasks(filepath.Join(f["slot"], toolenv.TasksFile))
	if err != nil {
		t.Fatal(err)
	}
	var task *toolenv.Task
	for _, tk := range tasks {
		if len(tk.Gold) >= 3 && tk.Gold[0].Name != tk.Gold[1].Name {
			task = tk
			break
		}
	}
	if task == nil {
		t.Fatal("no SLOT task with three gold calls, the first two of different tools")
	}
	store := filepath.Join(dir, "store.db")
	slow := task.Gold[1].Name
	faults := filepath.Join(dir, "faults.json")
	if err := os.WriteFile(faults, []byte(fmt.Sprintf(`{"rules": [{"tool": %q, "latency": {"fixed": "10m"}}]}`, slow)), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startReplica(t, "--collection", f["slot"], "--store", store, "--sessions", "store", "--faults", faults)
	ctx := context.Background()
	c := openenv.NewClient(a.base+openenv.Prefix, openenv.ClientOptions{})
	first, err := c.ResetHTTP(ctx, map[string]any{"collection": coll.Name, "task_id": task.ID})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := first.Observation["episode_id"].(string)
	call := func(g toolenv.GoldCall) map[string]any {
		return map[string]any{"name": g.Name, "arguments": g.Args, "label": strings.Trim(g.Label, "$")}
	}
	before := episodeCallsOK(t, a.base)
	go c.StepHTTP(ctx, id, map[string]any{"type": "tool_calls", "calls": []any{call(task.Gold[0]), call(task.Gold[1])}}) // dies with a
	waitFor(t, "the step's first call", func() bool { return episodeCallsOK(t, a.base) == before+1 })
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.cmd.Process.Wait()

	b := startReplica(t, "--collection", f["slot"], "--store", store, "--sessions", "store")
	c = openenv.NewClient(b.base+openenv.Prefix, openenv.ClientOptions{})
	type played struct {
		action map[string]any
		reward float64
	}
	var steps []played
	take := func(action map[string]any) *openenv.StepResult {
		t.Helper()
		r, err := c.StepHTTP(ctx, id, action)
		if err != nil || r.Reward == nil {
			t.Fatalf("step %v: %v %v", action, r, err)
		}
		steps = append(steps, played{action, *r.Reward})
		return r
	}
	// The agent did not see the killed step's results: it goes on from
	// the second gold call, which names the first one's label.
	for i, g := range task.Gold[1:] {
		r := take(map[string]any{"type": "call_tool", "tool_name": g.Name, "arguments": g.Args, "label": strings.Trim(g.Label, "$")})
		res, _ := r.Observation["result"].(map[string]any)
		if i == 0 && res["status"] == "ok" {
			t.Fatalf("the call after the killed step used the killed step's result: %v", res)
		}
	}
	take(map[string]any{"type": "final_answer"})

	// The session's log holds the record's calls, no more.
	okCalls := 1 // the task's hidden initialisation
	st, err := c.StateHTTP(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := st["step_count"].(json.Number).Int64(); int(n) != len(steps) {
		t.Fatalf("the episode has %d steps; %d were answered", n, len(steps))
	}
	req, _ := http.NewRequest(http.MethodGet, b.base+openenv.Prefix+"/trajectory?episode_id="+id, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Steps []struct {
			Reward float64 `json:"reward"`
			Calls  []struct {
				Status string `json:"status"`
			} `json:"calls"`
		} `json:"steps"`
	}
	err = json.NewDecoder(resp.Body).Decode(&rec)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rec.Steps {
		for _, cl := range s.Calls {
			if cl.Status == "ok" {
				okCalls++
			}
		}
	}
	db, err := sql.Open("sqlite", store)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var logged int
	if err := db.QueryRow(`SELECT count(*) FROM task_session_calls WHERE session = ?`, []byte(id)).Scan(&logged); err != nil {
		t.Fatal(err)
	}
	if logged != okCalls {
		t.Fatalf("the session's log holds %d calls; the record shows %d (with the initialisation)", logged, okCalls)
	}

	// The record replays to its rewards, on the restarted server.
	again, err := c.ResetHTTP(ctx, map[string]any{"collection": coll.Name, "task_id": task.ID})
	if err != nil {
		t.Fatal(err)
	}
	rid, _ := again.Observation["episode_id"].(string)
	for i, s := range steps {
		r, err := c.StepHTTP(ctx, rid, s.action)
		if err != nil || r.Reward == nil || *r.Reward != s.reward || rec.Steps[i].Reward != s.reward {
			t.Fatalf("replayed step %d: %v %v, want reward %g (recorded %g)", i+1, r, err, s.reward, rec.Steps[i].Reward)
		}
	}
}
