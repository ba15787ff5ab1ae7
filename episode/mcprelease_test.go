package episode_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolenv/toolenv/backend/mcpsource"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/internal/npmtest"
)

// TestMCPInstanceReleased: an episode's own instance of an MCP server
// isolated per episode (environment.StartSession at its reset) is
// released (environment.EndSession) whenever the episode leaves the open
// ones — done, closed by its client, expired for idleness, or open when
// the server closes — and kept through a step cut by its deadline (the
// episode goes on).
func TestMCPInstanceReleased(t *testing.T) {
	t.Parallel() // it waits on its MCP servers (node processes)
	tools := npmtest.Require(t)
	task := memoryTask(t)
	entry := map[string]any{"command": tools.Node(), "args": []string{tools.Bin("mcp-server-memory")},
		"env": map[string]string{"MEMORY_FILE_PATH": "${TOOLENV_EPISODE_DIR}/memory.jsonl"}, "isolation": map[string]any{"pool": 2}}
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"memory": entry}})
	ctx := context.Background()
	env, err := environment.Open(ctx, &environment.Config{Store: filepath.Join(t.TempDir(), "store.db"),
		MCPSources: environment.MCPSourcesConfig{Config: []string{string(raw)}, StartTimeout: 2 * time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	env.Tasks["memory"] = append(env.Tasks["memory"], task)
	var mu sync.Mutex
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	eps, err := episode.New(ctx, env, episode.Options{Persist: "memory", Idle: time.Hour, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	b := env.Registry.Backend("memory").(*mcpsource.Backend)

	// open starts an episode whose first call (a write no episode made
	// before, so that its own instance answers it) reaches its instance.
	n := 0
	open := func(t *testing.T) string {
		t.Helper()
		n++
		name := "Person" + string(rune('A'+n))
		id, last := playMemory(t, eps, call("create_entities", map[string]any{"entities": []any{map[string]any{"name": name, "entityType": "person", "observations": []any{}}}}))
		if last.Results[0].Source != "upstream" || b.InstanceDir(id) == "" {
			t.Fatalf("episode %s: its first call came from %s, its instance folder %q", id, last.Results[0].Source, b.InstanceDir(id))
		}
		return id
	}
	released := func(t *testing.T, id, how string) {
		t.Helper()
		if dir := b.InstanceDir(id); dir != "" {
			t.Fatalf("%s: the episode's instance (%s) was not released", how, dir)
		}
	}

	id := open(t)
	cut, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := eps.Step(cut, "", id, addBob); err == nil {
		t.Fatal("a step with its context ended happened")
	}
	if b.InstanceDir(id) == "" {
		t.Fatal("a cut step released its episode's instance: the episode goes on")
	}
	if res, err := eps.Step(ctx, "", id, finish); err != nil || !res.Done {
		t.Fatalf("final answer: %v %+v", err, res)
	}
	released(t, id, "done")

	id = open(t)
	if err := eps.End(ctx, "", id); err != nil {
		t.Fatal(err)
	}
	released(t, id, "closed")

	id = open(t)
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	if got := eps.Sweep(ctx); got != 1 {
		t.Fatalf("the sweep expired %d episodes, want 1", got)
	}
	released(t, id, "expired")

	id = open(t)
	eps.Close()
	released(t, id, "the server closed")
}

// TestRescoreStateChecks: a stateful MCP task's episodes rescored from
// the store. Their success reads the end state of the episode's own
// world (its checks), which the record does not hold: the rescored
// records keep the success the episodes earned, marked needs_state, and
// no check runs against a world that is gone.
func TestRescoreStateChecks(t *testing.T) {
	t.Parallel() // it waits on its MCP servers (node processes)
	tools := npmtest.Require(t)
	task := memoryTask(t)
	entry := map[string]any{"command": tools.Node(), "args": []string{tools.Bin("mcp-server-memory")},
		"env": map[string]string{"MEMORY_FILE_PATH": "${TOOLENV_EPISODE_DIR}/memory.jsonl"}}
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"memory": entry}})
	store := filepath.Join(t.TempDir(), "store.db")
	env, eps := openMemory(t, store, string(raw), task)
	_, right := playMemory(t, eps, addAda, adaKnows, finish)
	_, wrong := playMemory(t, eps, addBob, finish)
	if deref(right.Reward) != 1 || deref(wrong.Reward) != 0 {
		t.Fatalf("rewards %v and %v, want 1 and 0", deref(right.Reward), deref(wrong.Reward))
	}
	eps.Close() // writes the ended episodes to the store
	env.Close()

	env2, eps2 := openMemory(t, store, string(raw), task)
	defer env2.Close()
	defer eps2.Close()
	var out strings.Builder
	rep, err := eps2.Rescore(context.Background(), &out, episode.Reward{StepCost: 0.5}, episode.ExportJSONL)
	if err != nil || rep.Written != 2 || rep.NeedsState != 2 {
		t.Fatalf("rescore: %+v %v", rep, err)
	}
	var got []float64
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var rec episode.Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		o := rec.Outcome
		if rec.SuccessKind != episode.StateSuccess || o == nil || o.NeedsState == "" || o.State == nil || o.InfraFailure != "" {
			t.Fatalf("a rescored record: %s", line)
		}
		got = append(got, o.Success)
	}
	sort.Float64s(got)
	if len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Fatalf("rescored successes %v, want the earned 0 and 1", got)
	}
}
