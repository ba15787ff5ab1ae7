package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/internal/npmtest"
)

// memoryTasks are oracle tasks for server-memory: each writes to the
// graph and reads it back.
const memoryTasks = `{"id":"m1","query":"Record that Ada wrote the first program, then show the graph.","gold":[{"name":"create_entities","arguments":{"entities":[{"name":"Ada","entityType":"person","observations":["wrote the first program"]}]}},{"name":"read_graph","arguments":{}}]}
{"id":"m2","query":"Add the Engine, link Ada to it, and search for Ada.","gold":[{"name":"create_entities","arguments":{"entities":[{"name":"Engine","entityType":"machine","observations":[]}]}},{"name":"create_relations","arguments":{"relations":[{"from":"Ada","to":"Engine","relationType":"programmed"}]}},{"name":"search_nodes","arguments":{"query":"Ada"}}]}
`

func memoryConfig(t *testing.T, dir string) string {
	t.Helper()
	tools := npmtest.Require(t)
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"memory": map[string]any{
		"command": tools.Node(), "args": []string{tools.Bin("mcp-server-memory")},
		"env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.json")},
	}}})
	return string(raw)
}

// episodeSteps reads the steps of every episode an eval run wrote, in
// task order (episodes are written as they end).
func episodeSteps(t *testing.T, out string) [][]toolenv.Step {
	t.Helper()
	f, err := os.Open(filepath.Join(out, "episodes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byTask := map[string][]toolenv.Step{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var ep struct {
			TaskID  string `json:"task_id"`
			Outcome struct {
				Trajectory toolenv.Trajectory `json:"trajectory"`
			} `json:"outcome"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ep); err != nil {
			t.Fatal(err)
		}
		byTask[ep.TaskID] = ep.Outcome.Trajectory.Steps
	}
	var ids []string
	for id := range byTask {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var all [][]toolenv.Step
	for _, id := range ids {
		all = append(all, byTask[id])
	}
	return all
}

// TestEvalMCPServerReplay: toolenv eval runs agents on an MCP server's
// tools (tasks from a tasks file), recording every exchange; run again
// with the server gone, every observation is the same and report.md is
// byte-identical, from recordings exported and imported into another
// store. Then the server's collection is drifted: the agent's old
// calls are rejected by the strict version and translated by the compat
// one, answered from the same recordings.
func TestEvalMCPServerReplay(t *testing.T) {
	t.Parallel() // waits on the MCP server, a node child
	ctx := context.Background()
	dir := t.TempDir()
	cfg := memoryConfig(t, dir)
	tasks := filepath.Join(dir, "tasks.jsonl")
	if err := os.WriteFile(tasks, []byte(memoryTasks), 0o644); err != nil {
		t.Fatal(err)
	}
	st := filepath.Join(dir, "store.db")
	live, replay := filepath.Join(dir, "live"), filepath.Join(dir, "replay")
	if code, _, stderr := run(t, ctx, "eval", "--mcp-config", cfg, "--mcp-start-timeout", safetyNet.String(), "--tasks", tasks, "--agent", "oracle", "--store", st, "--out", live); code != 0 {
		t.Fatalf("live run: exit %d\n%s", code, stderr)
	}
	// The recordings travel: exported as JSON lines, imported into
	// another store, which the replay alone uses.
	dump := filepath.Join(dir, "cache.jsonl")
	if code, _, stderr := run(t, ctx, "cache", "export", "--store", st, dump); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	st = filepath.Join(dir, "other.db")
	if code, out, stderr := run(t, ctx, "cache", "import", dump, "--store", st); code != 0 || !strings.Contains(out, "imported") {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, stderr)
	}
	gone := `{"mcpServers":{"memory":{"command":"` + filepath.Join(dir, "no-server") + `"}}}`
	if code, _, stderr := run(t, ctx, "eval", "--mcp-config", gone, "--mcp-start-timeout", "5s", "--tasks", tasks, "--agent", "oracle", "--store", st, "--out", replay); code != 0 {
		t.Fatalf("replay: exit %d\n%s", code, stderr)
	}
	a, b := episodeSteps(t, live), episodeSteps(t, replay)
	if len(a) != 2 || len(b) != 2 {
		t.Fatalf("episodes: %d and %d", len(a), len(b))
	}
	for i := range a {
		for j := range a[i] {
			if a[i][j].Source != toolenv.SourceUpstream || b[i][j].Source != toolenv.SourceCache || a[i][j].Observation != b[i][j].Observation || a[i][j].Observation == "" {
				t.Fatalf("episode %d step %d: live %s %q, replay %s %q", i, j, a[i][j].Source, a[i][j].Observation, b[i][j].Source, b[i][j].Observation)
			}
		}
	}
	ra, _ := os.ReadFile(filepath.Join(live, "report.md"))
	rb, _ := os.ReadFile(filepath.Join(replay, "report.md"))
	if len(ra) == 0 || string(ra) != string(rb) {
		t.Fatalf("report.md differs:\n%s\n---\n%s", ra, rb)
	}

	// Drift: save the collection, rename every tool.
	saved := filepath.Join(dir, "mcp")
	if code, _, stderr := run(t, ctx, "mcp", "save", "--mcp-config", gone, "--mcp-start-timeout", "5s", "--store", st, "--out", saved); code != 0 {
		t.Fatalf("mcp save with the server gone (from the recorded list): exit %d\n%s", code, stderr)
	}
	v2 := filepath.Join(dir, "memory-v2")
	if code, _, stderr := run(t, ctx, "drift", "--in", filepath.Join(saved, "memory"), "--out", v2, "--seed", "7", "--ops", "rename,endpoint", "--rate", "rename=1,endpoint=1"); code != 0 {
		t.Fatalf("drift: exit %d\n%s", code, stderr)
	}
	for mode, want := range map[string]toolenv.Status{"strict": toolenv.StatusGone, "compat": toolenv.StatusOK} {
		out := filepath.Join(dir, "drift-"+mode)
		code, _, stderr := run(t, ctx, "eval", "--collection", v2, "--drift-mode", mode, "--mcp-start-timeout", "5s", "--tasks", tasks, "--agent", "oracle", "--store", st, "--out", out)
		if code != 0 && code != 4 {
			t.Fatalf("%s: exit %d\n%s", mode, code, stderr)
		}
		for i, ep := range episodeSteps(t, out) {
			first := ep[0]
			switch want {
			case toolenv.StatusOK:
				if first.Status != toolenv.StatusOK || first.Observation != a[i][0].Observation {
					t.Fatalf("%s: episode %d: %s %q, want the recorded answer", mode, i, first.Status, first.Observation)
				}
			default:
				if first.Status == toolenv.StatusOK || !strings.Contains(first.Observation, "create_entities") {
					t.Fatalf("%s: episode %d: the old call was not rejected with a pointer to its new name: %s %q", mode, i, first.Status, first.Observation)
				}
			}
		}
	}
}

// TestMirrorMCPServer: toolenv mirror collects real request-response
// pairs from an MCP server saved as a folder (toolenv mcp save), from the
// tools that change nothing: sampled requests never reach a tool that
// changes state.
func TestMirrorMCPServer(t *testing.T) {
	t.Parallel() // waits on the MCP server, a node child
	tools := npmtest.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	st := filepath.Join(dir, "s.db")
	saved := filepath.Join(dir, "mcp")
	srv := "everything=" + tools.Node() + " " + tools.Bin("mcp-server-everything")
	if code, _, stderr := run(t, ctx, "mcp", "save", "--mcp-server", srv, "--mcp-start-timeout", safetyNet.String(), "--store", st, "--out", saved); code != 0 {
		t.Fatalf("save: exit %d\n%s", code, stderr)
	}
	out := filepath.Join(dir, "mirror")
	code, stdout, stderr := run(t, ctx, "mirror", "run", "--collection", filepath.Join(saved, "everything"), "--per-api", "3", "--store", filepath.Join(dir, "m.db"), "--out", out)
	if code != 0 {
		t.Fatalf("mirror: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "tools that change state are not mirrored") {
		t.Fatalf("write tools not reported as left out:\n%s", stderr)
	}
	var called int
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "| called |") {
			fmt.Sscanf(strings.TrimPrefix(line, "| called |"), "%d", &called)
		}
	}
	if called < 9 {
		t.Fatalf("%d pairs called, want at least one per read-only tool:\n%s", called, stdout)
	}
}

// TestFailoverBetweenMCPServers: two memory servers, their tools mapped
// by toolenv map index; with --mcp-on-failure error, a call the first
// server cannot answer (its command gone) goes to the mapped tool of the
// second, marked; with the default (simulate) it is simulated, marked.
func TestFailoverBetweenMCPServers(t *testing.T) {
	t.Parallel() // waits on the MCP servers, node children
	tools := npmtest.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	st := filepath.Join(dir, "s.db")
	server := func(name string) map[string]any {
		return map[string]any{"command": tools.Node(), "args": []string{tools.Bin("mcp-server-memory")},
			"env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, name+".json")}}
	}
	both, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"mem-a": server("a"), "mem-b": server("b")}})
	saved := filepath.Join(dir, "mcp")
	if code, _, stderr := run(t, ctx, "mcp", "save", "--mcp-config", string(both), "--mcp-start-timeout", safetyNet.String(), "--store", st, "--out", saved); code != 0 {
		t.Fatalf("save: exit %d\n%s", code, stderr)
	}
	index := filepath.Join(dir, "map.db")
	if code, _, stderr := run(t, ctx, "map", "index", "--collection", filepath.Join(saved, "mem-a"), "--collection", filepath.Join(saved, "mem-b"), "--index", index, "--store", st); code != 0 {
		t.Fatalf("index: exit %d\n%s", code, stderr)
	}
	aGone := server("a")
	aGone["command"] = filepath.Join(dir, "gone")
	broken, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"mem-a": aGone, "mem-b": server("b")}})
	for _, tc := range []struct {
		onFailure string
		source    toolenv.Source
		warn      string
	}{
		{"error", toolenv.SourceUpstream, "mem-b/read_graph"},
		{"simulate", toolenv.SourceSynthesizer, "synthesized"},
	} {
		t.Run(tc.onFailure, func(t *testing.T) {
			env, err := environment.Open(ctx, &environment.Config{Store: st,
				MCPSources: environment.MCPSourcesConfig{Config: []string{string(broken)}, StartTimeout: safetyNet, OnFailure: tc.onFailure}, // mem-b starts; mem-a's command is gone at once
				Failover:   environment.FailoverConfig{Mappings: index, MinScore: 0.6}})
			if err != nil {
				t.Fatal(err)
			}
			defer env.Close()
			call, res := env.Registry.NewCall("mem-a", "read_graph", map[string]any{})
			if res != nil {
				t.Fatal(res.Error)
			}
			call.Session = "failover-" + tc.onFailure
			r := env.Pipeline.Invoke(ctx, call)
			if !r.OK() || r.Source != tc.source || !strings.Contains(strings.Join(r.Warnings, " "), tc.warn) {
				t.Fatalf("%s %s %s warnings %v", r.Status, r.Source, r.Error, r.Warnings)
			}
		})
	}
}

// TestMCPSourcesSecretsNeverShow: config print (and so every report that
// records the configuration) hides the credentials MCP sources may carry:
// a URL's user info, env and header values written inline, while ${VAR}
// references, which name where a secret is, stay readable.
func TestMCPSourcesSecretsNeverShow(t *testing.T) {
	code, out, stderr := run(t, context.Background(), "config", "print",
		"--mcp-server", "api=https://u:sekrit@h/mcp?key=qk",
		"--mcp-header", "api=Authorization: Bearer abc123",
		"--mcp-header", "api=X-Key: ${KEY}",
		"--mcp-config", `{"mcpServers":{"a":{"command":"x","env":{"K":"sk-123","H":"${HOME}"},"headers":{"T":"tok"}}}}`)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, leak := range []string{"sekrit", "qk", "abc123", "sk-123", "tok\""} {
		if strings.Contains(out, leak) {
			t.Errorf("config print shows %q:\n%s", leak, out)
		}
	}
	for _, keep := range []string{"${KEY}", "${HOME}", "api=https://u:xxxxx@h/mcp"} {
		if !strings.Contains(out, keep) {
			t.Errorf("config print lost %q:\n%s", keep, out)
		}
	}
}
