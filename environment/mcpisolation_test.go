package environment

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/mcpsource"
	"github.com/toolenv/toolenv/internal/npmtest"
)

// isolatedMemory is the mcpServers JSON of the npm memory server keeping
// its graph in each instance's own folder, isolated as mode says ("" :
// the default).
func isolatedMemory(t *testing.T, tools npmtest.Tools, mode string) string {
	t.Helper()
	entry := map[string]any{
		"command": tools.Node(), "args": []string{tools.Bin("mcp-server-memory")},
		"env": map[string]string{"MEMORY_FILE_PATH": "${TOOLENV_EPISODE_DIR}/memory.jsonl"},
	}
	if mode != "" {
		entry["isolation"] = mode
	}
	raw, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"memory": entry}})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// graphOf reads a read_graph answer's entities' names.
func graphOf(t *testing.T, r *toolenv.Result) []string {
	t.Helper()
	if !r.OK() {
		t.Fatalf("read_graph: %s %s", r.Status, r.Error)
	}
	var body struct {
		StructuredContent struct {
			Entities []struct{ Name string } `json:"entities"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("read_graph: %v: %s", err, r.Body)
	}
	names := []string{}
	for _, e := range body.StructuredContent.Entities {
		names = append(names, e.Name)
	}
	return names
}

func entity(name string) episodeStep {
	return episodeStep{"create_entities", map[string]any{"entities": []any{
		map[string]any{"name": name, "entityType": "person", "observations": []any{"met in a test"}},
	}}}
}

// TestMCPServerIsolatedEpisodes is the key test of per-episode isolation
// on the real npm memory server: episodes, one after the other and at
// once, start from the same empty graph and never see another's writes
// (shared, the same server leaks the first episode's graph into the
// second: the control); an episode's initial files seed its graph; and
// the recorded episodes replay identically with the server gone.
func TestMCPServerIsolatedEpisodes(t *testing.T) {
	t.Parallel() // it waits on its MCP servers (node processes)
	tools := npmtest.Require(t)
	ctx := context.Background()

	// The control: shared, the second episode's first read sees the
	// first episode's entity.
	shared, err := Open(ctx, &Config{Store: ":memory:", MCPSources: MCPSourcesConfig{Config: []string{isolatedMemory(t, tools, "")},
		Isolation: []string{"memory=shared"}}})
	if err != nil {
		t.Fatal(err)
	}
	runEpisode(t, shared, "s1", []episodeStep{entity("Ada")})
	if got := graphOf(t, runEpisode(t, shared, "s2", []episodeStep{{"read_graph", map[string]any{}}})[0]); len(got) != 1 || got[0] != "Ada" {
		t.Fatalf("shared: the second episode sees %v, want the first's Ada (the control)", got)
	}
	shared.Close()

	dir := t.TempDir()
	storePath := filepath.Join(dir, "store.db")
	env, err := Open(ctx, &Config{Store: storePath, MCPSources: MCPSourcesConfig{Config: []string{isolatedMemory(t, tools, "")}, EpisodeDirs: dir}})
	if err != nil {
		t.Fatal(err)
	}
	b := env.Registry.Backend("memory").(*mcpsource.Backend)
	if b.Pool() == nil {
		t.Fatal("the memory server (tools that write, stdio) is not isolated by default")
	}
	env.WarmSessions()
	start := func(id string, init *toolenv.InitialState) {
		t.Helper()
		if err := env.StartSession(ctx, "memory", id, init); err != nil {
			t.Fatalf("start %s: %v", id, err)
		}
	}
	// Two episodes one after the other, each writing then reading.
	start("e1", nil)
	e1 := runEpisode(t, env, "e1", memoryEpisode)
	for i, r := range e1 {
		if !r.OK() || r.Source != toolenv.SourceUpstream {
			t.Fatalf("e1 step %d: %s %s %s", i, r.Status, r.Source, r.Error)
		}
	}
	epDir := b.InstanceDir("e1")
	if _, err := os.Stat(filepath.Join(epDir, "memory.jsonl")); err != nil || filepath.Dir(epDir) != dir {
		t.Fatalf("e1's graph is not in its own folder %s under %s: %v", epDir, dir, err)
	}
	env.EndSession("e1")
	start("e2", nil)
	e2steps := []episodeStep{{"read_graph", map[string]any{}}, entity("Bob"), {"read_graph", map[string]any{}}}
	e2 := runEpisode(t, env, "e2", e2steps)
	if got := graphOf(t, e2[0]); len(got) != 0 || e2[0].Source != toolenv.SourceUpstream {
		t.Fatalf("e2 starts from %v (%s), want the empty graph from its own instance", got, e2[0].Source)
	}
	if got := graphOf(t, e2[2]); len(got) != 1 || got[0] != "Bob" {
		t.Fatalf("e2 ends with %v", got)
	}
	env.EndSession("e2")
	waitGone(t, epDir)

	// Two at once, interleaved.
	start("a", nil)
	start("b", nil)
	runEpisode(t, env, "a", []episodeStep{entity("Carol")})
	runEpisode(t, env, "b", []episodeStep{entity("Dan")})
	ga := graphOf(t, runEpisode(t, env, "a", []episodeStep{{"search_nodes", map[string]any{"query": "person"}}})[0])
	gb := graphOf(t, runEpisode(t, env, "b", []episodeStep{{"search_nodes", map[string]any{"query": "person"}}})[0])
	if strings.Join(ga, ",") != "Carol" || strings.Join(gb, ",") != "Dan" {
		t.Fatalf("concurrent episodes see %v and %v", ga, gb)
	}
	env.EndSession("a")
	env.EndSession("b")

	// An episode seeded with a graph file.
	seed := t.TempDir()
	line := `{"type":"entity","name":"Eve","entityType":"person","observations":["seeded"]}`
	if err := os.WriteFile(filepath.Join(seed, "memory.jsonl"), []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start("seeded", &toolenv.InitialState{Files: seed})
	s1 := runEpisode(t, env, "seeded", []episodeStep{{"read_graph", map[string]any{}}})
	if got := graphOf(t, s1[0]); strings.Join(got, ",") != "Eve" || s1[0].Source != toolenv.SourceUpstream {
		t.Fatalf("the seeded episode starts from %v (%s)", got, s1[0].Source)
	}
	env.EndSession("seeded")
	start("open-at-close", nil)
	runEpisode(t, env, "open-at-close", []episodeStep{entity("Fay")})
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
	// Every instance's folder is gone, an episode open at the close too.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "toolenv-mcp-") {
			t.Errorf("%s is left after the environment closed", e.Name())
		}
	}

	// The server is gone: every episode replays from the recordings,
	// each from its own initial state.
	gone := &Config{Store: storePath, MCPSources: MCPSourcesConfig{StartTimeout: 5 * time.Second,
		Config: []string{`{"mcpServers": {"memory": {"command": "` + filepath.Join(dir, "no-such-server") + `", "isolation": "episode"}}}`}}}
	env2, err := Open(ctx, gone)
	if err != nil {
		t.Fatalf("open with the server gone: %v", err)
	}
	defer env2.Close()
	for _, c := range []struct {
		id    string
		init  *toolenv.InitialState
		steps []episodeStep
		live  []*toolenv.Result
	}{{"r1", nil, memoryEpisode, e1}, {"r2", nil, e2steps, e2}, {"r3", &toolenv.InitialState{Files: seed}, []episodeStep{{"read_graph", map[string]any{}}}, s1}} {
		if err := env2.StartSession(ctx, "memory", c.id, c.init); err != nil {
			t.Fatal(err)
		}
		for i, r := range runEpisode(t, env2, c.id, c.steps) {
			if r.Source != toolenv.SourceCache || string(r.Body) != string(c.live[i].Body) {
				t.Fatalf("replay %s step %d: %s %s\n%s\nwant\n%s", c.id, i, r.Status, r.Source, r.Body, c.live[i].Body)
			}
		}
		env2.EndSession(c.id)
	}
}

// waitGone waits until path no longer exists (an ended episode's
// folder is removed in the background).
func waitGone(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(path); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is still there a minute after its episode ended", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIsolationFlags: --mcp-isolation values that are not SERVER=MODE, or
// that name no MCP collection served, are refused, saying why (checked
// on saved tool lists: no server is started).
func TestIsolationFlags(t *testing.T) {
	tools := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(tools, []byte(`{"tools": [{"name": "w", "inputSchema": {"type": "object"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		vals []string
		want string
	}{
		{[]string{"notes=episode"}, `no MCP server is served as "notes" (the MCP collections are: tools)`},
		{[]string{"tools=sometimes"}, `mode "sometimes"`},
		{[]string{"=episode"}, "want SERVER=episode"},
	} {
		env, err := Open(context.Background(), &Config{Store: ":memory:", MCPSources: MCPSourcesConfig{Tools: []string{"tools=" + tools}, Isolation: c.vals}})
		if err == nil {
			env.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--mcp-isolation") {
			t.Errorf("%v: %v, want an error naming --mcp-isolation and saying %q", c.vals, err, c.want)
		}
	}
	env, err := Open(context.Background(), &Config{Store: ":memory:", MCPSources: MCPSourcesConfig{Tools: []string{"tools=" + tools}, Isolation: []string{"tools=episode"}}})
	if err != nil {
		t.Fatalf("a documentation-only collection named: %v", err)
	}
	env.Close()
}

// TestMCPServerFilesystemIsolated: the npm filesystem server, rooted in
// each instance's own folder (${TOOLENV_EPISODE_DIR}) and seeded with a
// file: an episode's writes stay in its folder, the next episode starts
// from the seed alone, and both replay with the server gone.
func TestMCPServerFilesystemIsolated(t *testing.T) {
	t.Parallel() // it waits on its MCP servers (node processes)
	tools := npmtest.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed")
	if err := os.MkdirAll(seed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(seed, "readme.txt"), []byte("the seed"), 0o644); err != nil {
		t.Fatal(err)
	}
	storePath := filepath.Join(dir, "s.db")
	cfg := stdioServer(t, tools, "fs", "mcp-server-filesystem", []string{"${TOOLENV_EPISODE_DIR}"}, nil)
	env, err := Open(ctx, &Config{Store: storePath, MCPSources: MCPSourcesConfig{Config: []string{cfg}}})
	if err != nil {
		t.Fatal(err)
	}
	if env.Registry.Backend("fs").(*mcpsource.Backend).Pool() == nil {
		t.Fatal("the filesystem server is not isolated by default")
	}
	init := &toolenv.InitialState{Files: seed}
	first := []episodeStep{
		{"write_file", map[string]any{"path": "note.txt", "content": "first episode"}},
		{"list_directory", map[string]any{"path": "."}},
	}
	second := []episodeStep{
		{"list_directory", map[string]any{"path": "."}},
		{"read_text_file", map[string]any{"path": "readme.txt"}},
	}
	run := func(env *Environment, id string, steps []episodeStep) []*toolenv.Result {
		if err := env.StartSession(ctx, "fs", id, init); err != nil {
			t.Fatal(err)
		}
		defer env.EndSession(id)
		var out []*toolenv.Result
		for _, s := range steps {
			out = append(out, invokeIn(t, env, "fs", id, s.tool, s.args))
		}
		return out
	}
	a := run(env, "a", first)
	b := run(env, "b", second)
	for i, r := range append(append([]*toolenv.Result(nil), a...), b...) {
		if !r.OK() || r.Source != toolenv.SourceUpstream {
			t.Fatalf("call %d: %s %s %s", i, r.Status, r.Source, r.Error)
		}
	}
	if !strings.Contains(string(a[1].Body), "note.txt") || !strings.Contains(string(a[1].Body), "readme.txt") {
		t.Fatalf("the first episode's folder: %s", a[1].Body)
	}
	if strings.Contains(string(b[0].Body), "note.txt") || !strings.Contains(string(b[0].Body), "readme.txt") || !strings.Contains(string(b[1].Body), "the seed") {
		t.Fatalf("the second episode does not start from the seed alone:\n%s\n%s", b[0].Body, b[1].Body)
	}
	env.Close()
	gone := &Config{Store: storePath, MCPSources: MCPSourcesConfig{StartTimeout: 5 * time.Second,
		Config: []string{`{"mcpServers": {"fs": {"command": "` + filepath.Join(dir, "gone") + `", "isolation": "episode"}}}`}}}
	env2, err := Open(ctx, gone)
	if err != nil {
		t.Fatal(err)
	}
	defer env2.Close()
	for _, c := range []struct {
		steps []episodeStep
		live  []*toolenv.Result
	}{{first, a}, {second, b}} {
		for i, r := range run(env2, "replay", c.steps) {
			if r.Source != toolenv.SourceCache || string(r.Body) != string(c.live[i].Body) {
				t.Fatalf("replay step %d: %s %s", i, r.Source, r.Body)
			}
		}
	}
}
