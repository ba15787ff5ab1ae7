package environment

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/mcpsource"
	"github.com/toolenv/toolenv/internal/npmtest"
	"github.com/toolenv/toolenv/invoke"
)

// memoryServer is the mcpServers JSON of @modelcontextprotocol/server-memory
// keeping its graph in file, run with the installed Node 22.
func memoryServer(t *testing.T, tools npmtest.Tools, file string) string {
	t.Helper()
	doc := map[string]any{"mcpServers": map[string]any{"memory": map[string]any{
		"command": tools.Node(), "args": []string{tools.Bin("mcp-server-memory")},
		"env": map[string]string{"MEMORY_FILE_PATH": file},
	}}}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// episodeStep is one call of a recorded episode.
type episodeStep struct {
	tool string
	args map[string]any
}

// memoryEpisode writes to the knowledge graph, reads it, writes again and
// reads again: the answers of the reads depend on the writes before them.
var memoryEpisode = []episodeStep{
	{"create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "Ada", "entityType": "person", "observations": []any{"wrote the first program"}},
		map[string]any{"name": "Engine", "entityType": "machine", "observations": []any{"analytical"}},
	}}},
	{"read_graph", map[string]any{}},
	{"create_relations", map[string]any{"relations": []any{map[string]any{"from": "Ada", "to": "Engine", "relationType": "programmed"}}}},
	{"search_nodes", map[string]any{"query": "Ada"}},
	{"add_observations", map[string]any{"observations": []any{map[string]any{"entityName": "Ada", "contents": []any{"born 1815"}}}}},
	{"read_graph", map[string]any{}},
	{"delete_entities", map[string]any{"entityNames": []any{"Engine"}}},
	{"read_graph", map[string]any{}},
}

// runEpisode makes the calls in one session and returns the results.
func runEpisode(t *testing.T, env *Environment, session string, steps []episodeStep) []*toolenv.Result {
	t.Helper()
	var out []*toolenv.Result
	for _, s := range steps {
		call, res := env.Registry.NewCall("memory", s.tool, s.args)
		if res != nil {
			t.Fatalf("%s: %s", s.tool, res.Error)
		}
		call.Session = session
		out = append(out, env.Pipeline.Invoke(context.Background(), call))
	}
	return out
}

// TestMCPServerRecordReplay is the key test of an MCP server as a source:
// an episode against the live memory server is recorded; with the server
// gone (toolenv restarted, the server's command broken) the same episode
// replays with identical answers, from the tool list and answers in the
// store; a call the recording does not hold is simulated and marked; and
// a second identical episode while the server lives is answered from the
// recording, not from a server whose state it already changed.
func TestMCPServerRecordReplay(t *testing.T) {
	tools := npmtest.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	storePath := filepath.Join(dir, "store.db")
	cfg := &Config{Store: storePath, MCPSources: MCPSourcesConfig{Config: []string{memoryServer(t, tools, filepath.Join(dir, "memory.json"))}}}
	env, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	col := env.Registry.Collection("memory")
	if col == nil || col.Kind != mcpsource.Kind || len(col.Tools) != 9 {
		t.Fatalf("collection: %+v", col)
	}
	states := map[string]string{}
	for _, tl := range col.Tools {
		states[tl.Name] = tl.State()
	}
	if states["read_graph"] != toolenv.StateRead || states["create_entities"] != toolenv.StateWrite || states["search_nodes"] != toolenv.StateRead {
		t.Fatalf("states from annotations: %v", states)
	}
	live := runEpisode(t, env, "live-1", memoryEpisode)
	for i, r := range live {
		if r.Status != toolenv.StatusOK || r.Source != toolenv.SourceUpstream {
			t.Fatalf("live step %d (%s): %s %s %s", i, memoryEpisode[i].tool, r.Status, r.Source, r.Error)
		}
		if !mcpsource.IsResult(r.Body) {
			t.Fatalf("live step %d: body is not a CallToolResult: %s", i, r.Body)
		}
	}
	// The reads saw the writes before them.
	if !strings.Contains(string(live[1].Body), `"Engine"`) || !strings.Contains(string(live[5].Body), "born 1815") || strings.Contains(string(live[7].Body), `"name":"Engine"`) {
		t.Fatalf("reads do not follow the writes:\n%s\n%s\n%s", live[1].Body, live[5].Body, live[7].Body)
	}
	// The same episode again, server alive: the server's graph already
	// holds Ada, so its own answers would differ; the recording answers.
	again := runEpisode(t, env, "live-2", memoryEpisode)
	for i, r := range again {
		if r.Source != toolenv.SourceCache || string(r.Body) != string(live[i].Body) {
			t.Fatalf("second episode step %d: source %s, body\n%s\nwant\n%s", i, r.Source, r.Body, live[i].Body)
		}
	}
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}

	// The server is gone: its command no longer starts.
	gone := &Config{Store: storePath, MCPSources: MCPSourcesConfig{
		Config:       []string{`{"mcpServers": {"memory": {"command": "` + filepath.Join(dir, "no-such-server") + `"}}}`},
		StartTimeout: 5e9,
	}}
	env2, err := Open(ctx, gone)
	if err != nil {
		t.Fatalf("open with the server gone: %v", err)
	}
	defer env2.Close()
	if c := env2.Registry.Collection("memory"); c == nil || len(c.Tools) != 9 {
		t.Fatalf("the recorded tool list is not served: %+v", c)
	}
	replay := runEpisode(t, env2, "replay", memoryEpisode)
	for i, r := range replay {
		if r.Status != toolenv.StatusOK || r.Source != toolenv.SourceCache || string(r.Body) != string(live[i].Body) {
			t.Fatalf("replay step %d (%s): %s %s\n%s\nwant\n%s", i, memoryEpisode[i].tool, r.Status, r.Source, r.Body, live[i].Body)
		}
	}
	// A call the recording does not hold: simulated, marked.
	div := append(append([]episodeStep(nil), memoryEpisode[:2]...), episodeStep{"search_nodes", map[string]any{"query": "Babbage"}})
	res := runEpisode(t, env2, "diverge", div)
	last := res[2]
	if last.Status != toolenv.StatusOK || last.Source == toolenv.SourceCache || last.Source == toolenv.SourceUpstream || !mcpsource.IsResult(last.Body) {
		t.Fatalf("diverging call: %s %s %s", last.Status, last.Source, last.Body)
	}
	if last.Meta[mcpsource.MetaNotLive] != "replayed" || !strings.Contains(strings.Join(last.Warnings, " "), "simulated") {
		t.Fatalf("diverging call not marked: meta %v warnings %v", last.Meta, last.Warnings)
	}
	if last.Meta[invoke.MetaEpisodeStep] != "1" {
		t.Fatalf("episode step %q, want 1", last.Meta[invoke.MetaEpisodeStep])
	}
}
