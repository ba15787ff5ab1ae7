package episode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/mcpsource"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/episode/episodetest"
	"github.com/toolenv/toolenv/episode/mcpepisode"
	"github.com/toolenv/toolenv/episode/openenv"
	"github.com/toolenv/toolenv/internal/npmtest"
)

// memoryTask is a stateful task on the npm memory server: the graph
// starts with Eve (its initial files), the agent must add Ada, who knows
// Eve; the check reads the graph.
func memoryTask(t *testing.T) *toolenv.Task {
	t.Helper()
	seed := t.TempDir()
	eve := `{"type":"entity","name":"Eve","entityType":"person","observations":["seeded"]}`
	if err := os.WriteFile(filepath.Join(seed, "memory.jsonl"), []byte(eve+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &toolenv.Task{ID: "add-ada", Collection: "memory", Query: "Add Ada, a person, who knows Eve.",
		Initial: &toolenv.InitialState{Files: seed},
		Checks: []toolenv.StateCheck{{Name: "graph", Call: &toolenv.GoldCall{Name: "read_graph", Args: map[string]any{}},
			Expect: json.RawMessage(`{"entities":[{"name":"Eve","entityType":"person","observations":["seeded"]},{"name":"Ada","entityType":"person","observations":[]}],
				"relations":[{"from":"Ada","to":"Eve","relationType":"knows"}]}`)}}}
}

func openMemory(t testing.TB, store, config string, tasks ...*toolenv.Task) (*environment.Environment, *episode.Env) {
	t.Helper()
	ctx := context.Background()
	env, err := environment.Open(ctx, &environment.Config{Store: store, MCPSources: environment.MCPSourcesConfig{Config: []string{config}, StartTimeout: 2 * time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	env.Tasks["memory"] = tasks
	eps, err := episode.New(ctx, env, episode.Options{Persist: "memory"})
	if err != nil {
		env.Close()
		t.Fatal(err)
	}
	return env, eps
}

func call(name string, args map[string]any) *episode.Action {
	return &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{{Name: name, Args: args}}}
}

var (
	addAda   = call("create_entities", map[string]any{"entities": []any{map[string]any{"name": "Ada", "entityType": "person", "observations": []any{}}}})
	adaKnows = call("create_relations", map[string]any{"relations": []any{map[string]any{"from": "Ada", "to": "Eve", "relationType": "knows"}}})
	addBob   = call("create_entities", map[string]any{"entities": []any{map[string]any{"name": "Bob", "entityType": "person", "observations": []any{}}}})
	finish   = &episode.Action{Type: episode.ActionFinalAnswer, Answer: &episode.Answer{Text: "done"}}
)

// playMemory resets an episode of the task and takes the actions; it returns
// the last step.
func playMemory(t *testing.T, eps *episode.Env, actions ...*episode.Action) (string, *episode.StepResult) {
	t.Helper()
	ctx := context.Background()
	first, err := eps.Reset(ctx, "", &episode.ResetOptions{Collection: "memory", TaskID: "add-ada"})
	if err != nil {
		t.Fatal(err)
	}
	id := first.Observation.EpisodeID
	var last *episode.StepResult
	for i, a := range actions {
		if last, err = eps.Step(ctx, "", id, a); err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
	}
	return id, last
}

// TestMCPStatefulTask: a user's stateful task on the npm memory server,
// played as RL episodes: each starts from the task's initial files in an
// instance of its own; the end-state check, made in that instance before
// it is released, gives the reward (1 for the right writes, 0 for a
// wrong one, whose check shows what the graph held: not the first
// episode's writes); an instance killed mid-episode ends that episode
// alone, marked as the environment's failure; and with the server gone
// the same episodes replay to the same outcomes.
func TestMCPStatefulTask(t *testing.T) {
	t.Parallel() // it waits on its MCP servers (node processes)
	tools := npmtest.Require(t)
	task := memoryTask(t)
	entry := map[string]any{"command": tools.Node(), "args": []string{tools.Bin("mcp-server-memory")},
		"env": map[string]string{"MEMORY_FILE_PATH": "${TOOLENV_EPISODE_DIR}/memory.jsonl"}}
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"memory": entry}})
	store := filepath.Join(t.TempDir(), "store.db")
	env, eps := openMemory(t, store, string(raw), task)

	_, right := playMemory(t, eps, addAda, adaKnows, finish)
	if !right.Done || deref(right.Reward) != 1 || right.Info.SuccessKind != episode.StateSuccess {
		t.Fatalf("the right writes: reward %v, kind %s, outcome %+v", deref(right.Reward), right.Info.SuccessKind, right.Info.Outcome)
	}
	st := right.Info.Outcome.State
	if st == nil || st.Passed != 1 || !st.Checks[0].Passed {
		t.Fatalf("state %+v", st)
	}
	_, wrong := playMemory(t, eps, addBob, finish)
	ws := wrong.Info.Outcome.State
	if deref(wrong.Reward) != 0 || ws == nil || ws.Checks[0].Passed {
		t.Fatalf("a wrong write: reward %v, state %+v", deref(wrong.Reward), ws)
	}
	if got := string(ws.Checks[0].Got); !strings.Contains(got, `"Bob"`) || !strings.Contains(got, `"Eve"`) || strings.Contains(got, `"Ada"`) {
		t.Fatalf("the second episode's graph is not its own: %s", got)
	}

	// A crash: the instance of one episode killed with SIGKILL.
	b := env.Registry.Backend("memory").(*mcpsource.Backend)
	other, _ := playMemory(t, eps, addAda)
	// (A write no episode made before, so that the server answers it:
	// a recorded one would be replayed, and the instance not used.)
	addZed := call("create_entities", map[string]any{"entities": []any{map[string]any{"name": "Zed", "entityType": "person", "observations": []any{}}}})
	victim, live := playMemory(t, eps, addZed)
	if live.Results[0].Source != toolenv.SourceUpstream {
		t.Fatalf("the victim's write came from %s", live.Results[0].Source)
	}
	killInstance(t, b.InstanceDir(victim))
	res, err := eps.Step(context.Background(), "", victim, adaKnows)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Done || res.Info.Outcome == nil || res.Info.Outcome.InfraFailure != mcpsource.InfraInstanceExited || res.Truncated {
		t.Fatalf("the killed episode: done %v, outcome %+v, result %+v", res.Done, res.Info.Outcome, res.Results[0])
	}
	if res.Results[0].Meta[toolenv.MetaInfraFailure] == "" || res.Results[0].OK() {
		t.Fatalf("the call after the kill: %+v", res.Results[0])
	}
	fin, err := eps.Step(context.Background(), "", other, adaKnows)
	if err != nil || fin.Done {
		t.Fatalf("the other episode: %v %+v", err, fin)
	}
	if fin, err = eps.Step(context.Background(), "", other, finish); err != nil || deref(fin.Reward) != 1 {
		t.Fatalf("the other episode ends with %v, %v", fin, err)
	}
	eps.Close()
	env.Close()

	// The server gone: the same episodes replay to the same outcomes.
	gone, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"memory": map[string]any{"command": filepath.Join(t.TempDir(), "gone"), "isolation": "episode"}}})
	env2, eps2 := openMemory(t, store, string(gone), task)
	defer env2.Close()
	defer eps2.Close()
	_, r := playMemory(t, eps2, addAda, adaKnows, finish)
	_, w := playMemory(t, eps2, addBob, finish)
	for i, p := range [][2]*episode.StepResult{{r, right}, {w, wrong}} {
		g, _ := json.Marshal(p[0].Info.Outcome)
		want, _ := json.Marshal(p[1].Info.Outcome)
		if string(g) != string(want) || deref(p[0].Reward) != deref(p[1].Reward) {
			t.Fatalf("replay %d: %s\nwant %s", i, g, want)
		}
	}
}

func deref(f *float64) float64 {
	if f == nil {
		return -1
	}
	return *f
}

// killInstance sends SIGKILL to the processes whose working folder is
// dir: an episode's own MCP server instance.
func killInstance(t *testing.T, dir string) {
	t.Helper()
	if dir == "" {
		t.Fatal("the episode has no instance folder")
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	killed := 0
	for _, p := range procs {
		if cwd, err := os.Readlink(p); err == nil && cwd == dir {
			pid, _ := strconv.Atoi(strings.Split(p, "/")[2])
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
	}
	if killed == 0 {
		t.Fatalf("no process runs in %s", dir)
	}
}

// TestMCPStatefulTasksOverTheWire: stateful tasks on the npm memory
// server, each adding its own person who knows the seeded Eve, played by
// the oracle over OpenEnv's WebSocket protocol and over MCP sessions,
// four at once: every episode reaches reward 1, which it cannot if any
// episode saw another's writes (its check reads the whole graph).
func TestMCPStatefulTasksOverTheWire(t *testing.T) {
	t.Parallel() // it waits on its MCP servers (node processes)
	tools := npmtest.Require(t)
	base := memoryTask(t)
	var tasks []*toolenv.Task
	for i := range 8 {
		name := fmt.Sprintf("P%d", i)
		tk := *base
		tk.ID = "add-" + name
		tk.Gold = []toolenv.GoldCall{
			{Name: "create_entities", Args: map[string]any{"entities": []any{map[string]any{"name": name, "entityType": "person", "observations": []any{}}}}, Label: "$var1"},
			{Name: "create_relations", Args: map[string]any{"relations": []any{map[string]any{"from": name, "to": "Eve", "relationType": "knows"}}}, Label: "$var2"},
		}
		tk.Checks = []toolenv.StateCheck{{Call: &toolenv.GoldCall{Name: "read_graph", Args: map[string]any{}},
			Expect: json.RawMessage(fmt.Sprintf(`{"entities":[{"name":"Eve","entityType":"person","observations":["seeded"]},{"name":%q,"entityType":"person","observations":[]}],
				"relations":[{"from":%q,"to":"Eve","relationType":"knows"}]}`, name, name))}}
		tasks = append(tasks, &tk)
	}
	entry := map[string]any{"command": tools.Node(), "args": []string{tools.Bin("mcp-server-memory")},
		"env": map[string]string{"MEMORY_FILE_PATH": "${TOOLENV_EPISODE_DIR}/memory.jsonl"}, "isolation": map[string]any{"pool": 4}}
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"memory": entry}})
	env, eps := openMemory(t, ":memory:", string(raw), tasks...)
	defer env.Close()
	defer eps.Close()
	mux := http.NewServeMux()
	mux.Handle("/openenv/mcp", mcpepisode.NewHandler(eps, mcpepisode.Options{}))
	mux.Handle("/openenv/", http.StripPrefix("/openenv", openenv.NewHandler(eps, openenv.Options{})))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	coll := env.Registry.Collection("memory")
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(tasks))
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := openenv.NewClient(srv.URL+"/openenv", openenv.ClientOptions{})
			defer c.Close()
			for i := w; i < len(tasks); i += 4 {
				if w%2 == 0 {
					_, err := episodetest.PlayOpenEnv(ctx, c, coll, tasks[i], nil)
					errs <- err
				} else {
					_, err := episodetest.PlayMCP(ctx, srv.URL+"/openenv/mcp", "", coll, tasks[i])
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if s := env.Registry.Backend("memory").(*mcpsource.Backend).Pool().Stats(); s.Handed < len(tasks) {
		t.Fatalf("%d episodes, %d instances handed out", len(tasks), s.Handed)
	}
}
