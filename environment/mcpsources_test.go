package environment

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/mcpsource"
	"github.com/toolenv/toolenv/internal/npmtest"
	"github.com/toolenv/toolenv/internal/pgtest"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/server"
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
	t.Parallel() // it waits on its MCP servers (node processes)
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

// stdioServer is the mcpServers JSON of one installed npm server run with
// Node 22.
func stdioServer(t testing.TB, tools npmtest.Tools, name, bin string, args []string, env map[string]string) string {
	t.Helper()
	doc := map[string]any{"mcpServers": map[string]any{name: map[string]any{
		"command": tools.Node(), "args": append([]string{tools.Bin(bin)}, args...), "env": env,
	}}}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func invokeIn(t testing.TB, env *Environment, coll, session, tool string, args map[string]any) *toolenv.Result {
	t.Helper()
	call, res := env.Registry.NewCall(coll, tool, args)
	if res != nil {
		t.Fatalf("%s: %s", tool, res.Error)
	}
	call.Session = session
	return env.Pipeline.Invoke(context.Background(), call)
}

// TestMCPServerEverything: server-everything's content kinds (text,
// image, embedded resource, structured content) are recorded whole and
// replayed byte for byte, and toolenv's own MCP front-end passes them
// through with the server's outputSchema and annotations.
func TestMCPServerEverything(t *testing.T) {
	t.Parallel() // it waits on its MCP servers (node processes)
	tools := npmtest.Require(t)
	ctx := context.Background()
	env, err := Open(ctx, &Config{Store: filepath.Join(t.TempDir(), "s.db"),
		MCPSources: MCPSourcesConfig{Config: []string{stdioServer(t, tools, "everything", "mcp-server-everything", nil, nil)}}})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	calls := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"echo", map[string]any{"message": "hello"}, `"text":"Echo: hello"`},
		{"get-sum", map[string]any{"a": 2, "b": 40}, `42`},
		{"get-tiny-image", map[string]any{}, `"type":"image"`},
		{"get-structured-content", map[string]any{"location": "New York"}, `"structuredContent":{`},
		{"get-resource-reference", map[string]any{"resourceType": "Text", "resourceId": 1}, `"type":"resource"`},
	}
	first := map[string]string{}
	for _, c := range calls {
		r := invokeIn(t, env, "everything", "a", c.tool, c.args)
		if !r.OK() || r.Source != toolenv.SourceUpstream || !strings.Contains(string(r.Body), c.want) {
			t.Fatalf("%s: %s %s %s %s", c.tool, r.Status, r.Source, r.Error, r.Body)
		}
		first[c.tool] = string(r.Body)
	}
	for _, c := range calls {
		r := invokeIn(t, env, "everything", "b", c.tool, c.args)
		if r.Source != toolenv.SourceCache || string(r.Body) != first[c.tool] {
			t.Fatalf("%s replayed: %s %s", c.tool, r.Source, r.Body)
		}
	}
	// Through toolenv's MCP front-end: the server's own result shape.
	srv, err := env.MCPServer()
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	go srv.Run(ctx, st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var structured *mcp.Tool
	for _, tl := range lt.Tools {
		if tl.Name == "get-structured-content" {
			structured = tl
		}
	}
	if structured == nil || structured.OutputSchema == nil || structured.Annotations == nil || !structured.Annotations.ReadOnlyHint {
		t.Fatalf("listing: %+v", structured)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-tiny-image", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	var img *mcp.ImageContent
	for _, c := range res.Content {
		if i, ok := c.(*mcp.ImageContent); ok {
			img = i
		}
	}
	if img == nil || len(img.Data) == 0 || img.MIMEType != "image/png" || res.Meta[server.MCPMetaSource] != "cache" {
		t.Fatalf("image not passed through: %+v meta %v", res.Content, res.Meta)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-structured-content", Arguments: map[string]any{"location": "New York"}})
	if err != nil || res.StructuredContent == nil || res.IsError {
		t.Fatalf("structured content: %+v %v", res, err)
	}
}

// TestMCPServerFilesystem: a recorded episode of server-filesystem on a
// temporary folder replays with the server gone, and the replay touches
// no file: its side effects happened once, when it was recorded.
func TestMCPServerFilesystem(t *testing.T) {
	t.Parallel() // it waits on its MCP servers (node processes)
	tools := npmtest.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	root, _ = filepath.EvalSymlinks(root)
	storePath := filepath.Join(dir, "s.db")
	cfg := &Config{Store: storePath, MCPSources: MCPSourcesConfig{Config: []string{stdioServer(t, tools, "fs", "mcp-server-filesystem", []string{root}, nil)}}}
	env, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	note := filepath.Join(root, "note.txt")
	steps := []episodeStep{
		{"write_file", map[string]any{"path": note, "content": "first"}},
		{"read_text_file", map[string]any{"path": note}},
		{"edit_file", map[string]any{"path": note, "edits": []any{map[string]any{"oldText": "first", "newText": "second"}}}},
		{"read_text_file", map[string]any{"path": note}},
		{"list_directory", map[string]any{"path": root}},
	}
	run := func(env *Environment, session string) []*toolenv.Result {
		var out []*toolenv.Result
		for _, s := range steps {
			out = append(out, invokeIn(t, env, "fs", session, s.tool, s.args))
		}
		return out
	}
	live := run(env, "rec")
	for i, r := range live {
		if !r.OK() || r.Source != toolenv.SourceUpstream {
			t.Fatalf("step %d %s: %s %s %s", i, steps[i].tool, r.Status, r.Source, r.Error)
		}
	}
	if !strings.Contains(string(live[1].Body), "first") || !strings.Contains(string(live[3].Body), "second") {
		t.Fatalf("reads:\n%s\n%s", live[1].Body, live[3].Body)
	}
	env.Close()
	if err := os.Remove(note); err != nil {
		t.Fatal(err)
	}
	gone := &Config{Store: storePath, MCPSources: MCPSourcesConfig{StartTimeout: 5e9,
		Config: []string{`{"mcpServers":{"fs":{"command":"` + filepath.Join(dir, "gone") + `"}}}`}}}
	env2, err := Open(ctx, gone)
	if err != nil {
		t.Fatal(err)
	}
	defer env2.Close()
	replay := run(env2, "replay")
	for i, r := range replay {
		if r.Source != toolenv.SourceCache || string(r.Body) != string(live[i].Body) {
			t.Fatalf("replay step %d: %s %s", i, r.Source, r.Body)
		}
	}
	if _, err := os.Stat(note); !os.IsNotExist(err) {
		t.Fatalf("the replay wrote the file again: %v", err)
	}
}

// TestMCPServerPostgres: server-postgres on a database of a real
// PostgreSQL; its query tool (no annotations: write by default) made
// stateless by an override, its answers replay after the database and
// the server are gone; an SQL error, which the server throws as a
// JSON-RPC error, is the server's answer (passed on as it is, never
// simulated) and is never recorded.
func TestMCPServerPostgres(t *testing.T) {
	t.Parallel() // it waits on its MCP servers (node processes)
	tools := npmtest.Require(t)
	pg := pgtest.Start(t)
	dsn := pg.NewDatabase(t)
	ctx := context.Background()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE heroes (name text, power int); INSERT INTO heroes VALUES ('Ada', 9), ('Grace', 8)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	dir := t.TempDir()
	storePath := filepath.Join(dir, "s.db")
	env, err := Open(ctx, &Config{Store: storePath, MCPSources: MCPSourcesConfig{
		Config: []string{stdioServer(t, tools, "pg", "mcp-server-postgres", []string{dsn}, nil)},
		State:  []string{"pg/query=stateless"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	q := map[string]any{"sql": "SELECT name, power FROM heroes ORDER BY power DESC"}
	r := invokeIn(t, env, "pg", "", "query", q)
	if !r.OK() || r.Source != toolenv.SourceUpstream || !strings.Contains(string(r.Body), "Grace") {
		t.Fatalf("%s %s %s %s", r.Status, r.Source, r.Error, r.Body)
	}
	badQuery := map[string]any{"sql": "SELECT nope FROM nowhere"}
	for i := range 2 { // the second is not answered from a recording either
		bad := invokeIn(t, env, "pg", "", "query", badQuery)
		if bad.OK() || bad.Source != toolenv.SourceUpstream || bad.Meta[mcpsource.MetaRPCCode] == "" || !strings.Contains(bad.Meta[mcpsource.MetaRPCMessage], "nowhere") {
			t.Fatalf("SQL error %d: %s %s %v %v", i, bad.Status, bad.Source, bad.Meta, bad.Warnings)
		}
	}
	env.Close()
	pg.Stop()
	env2, err := Open(ctx, &Config{Store: storePath, MCPSources: MCPSourcesConfig{StartTimeout: 5e9,
		Config: []string{stdioServer(t, tools, "pg", "mcp-server-postgres", []string{dsn}, nil)},
		State:  []string{"pg/query=stateless"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer env2.Close()
	r2 := invokeIn(t, env2, "pg", "", "query", q)
	if r2.Source != toolenv.SourceCache || string(r2.Body) != string(r.Body) {
		t.Fatalf("replay: %s %s", r2.Source, r2.Body)
	}
}

// TestMCPServerOverHTTP: a streamable HTTP server (toolenv's own /mcp,
// serving the demo behind a bearer token) as a source: the token comes
// from the environment through a ${VAR} header, never from the
// configuration; without it the server refuses toolenv and Open says so.
func TestMCPServerOverHTTP(t *testing.T) {
	ctx := context.Background()
	const token = "0123456789abcdef0123456789abcdef"
	getenv := func(k string) string {
		if k == "UPSTREAM_TOKEN" || k == "DEMO_TOKEN" {
			return token
		}
		return ""
	}
	up, err := Open(ctx, &Config{Server: ServerConfig{AuthTokenEnv: "DEMO_TOKEN"}, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	h, err := up.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	cfg := &Config{Getenv: getenv, MCPSources: MCPSourcesConfig{
		Servers: []string{"demo=" + srv.URL + "/mcp"},
		Headers: []string{"demo=Authorization: Bearer ${UPSTREAM_TOKEN}"},
	}}
	env, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	col := env.Registry.Collection("demo")
	if col == nil || col.Kind != mcpsource.Kind || len(col.Tools) < 5 {
		t.Fatalf("collection %+v", col)
	}
	r := invokeIn(t, env, "demo", "", "weather_forecast", map[string]any{"city": "Paris", "days": 2})
	if !r.OK() || r.Source != toolenv.SourceUpstream || !strings.Contains(string(r.Body), "Paris") {
		t.Fatalf("%s %s %s %s", r.Status, r.Source, r.Error, r.Body)
	}
	// The configuration holds the reference, not the token.
	if raw, _ := json.Marshal(col); strings.Contains(string(raw), token) {
		t.Fatal("the token is in the collection")
	}
	// Operational faults apply to an MCP-sourced collection as to any:
	// every call of this one fails with 503, before the server is asked.
	faulty := *cfg
	faulty.Faults = `{"rules":[{"collection":"demo","errors":{"rate":1}}]}`
	fenv, err := Open(ctx, &faulty)
	if err != nil {
		t.Fatal(err)
	}
	defer fenv.Close()
	if r := invokeIn(t, fenv, "demo", "", "weather_forecast", map[string]any{"city": "Rome", "days": 1}); r.OK() || len(r.Faults) == 0 {
		t.Fatalf("fault not injected: %s %v", r.Status, r.Faults)
	}
	// No token: the server refuses, and Open says why.
	_, err = Open(ctx, &Config{MCPSources: MCPSourcesConfig{Servers: []string{"demo=" + srv.URL + "/mcp"}, StartTimeout: 5e9}})
	if err == nil || !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
		t.Fatalf("without the token: %v", err)
	}
	// A variable that is not set is an error naming it.
	_, err = Open(ctx, &Config{Getenv: func(string) string { return "" }, MCPSources: MCPSourcesConfig{
		Servers: []string{"demo=" + srv.URL + "/mcp"}, Headers: []string{"demo=Authorization: Bearer ${UPSTREAM_TOKEN}"}}})
	if err == nil || !strings.Contains(err.Error(), "UPSTREAM_TOKEN is not set") {
		t.Fatalf("unset variable: %v", err)
	}
}

// TestMCPToolsSimulated: saved tools with no server (--mcp-tools) are
// answered on a miss by the LLM simulator with the MirrorAPI prompt, given
// the MCP tool's documentation; its answer takes a CallToolResult's shape,
// is marked as simulated, and is recorded, so the same call replays it.
func TestMCPToolsSimulated(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tools := filepath.Join(dir, "weather.json")
	doc := `{"tools":[{"name":"get_forecast","description":"Forecast for a city, in Celsius","inputSchema":{"type":"object","properties":{"city":{"type":"string","description":"the city"}},"required":["city"]},"outputSchema":{"type":"object","properties":{"city":{"type":"string"},"high_c":{"type":"number"}}},"annotations":{"readOnlyHint":true}}]}`
	if err := os.WriteFile(tools, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: `{"error": "", "response": "{\"city\": \"Oslo\", \"high_c\": 7}"}`}))
	defer srv.Close()
	env, err := Open(ctx, &Config{Store: filepath.Join(dir, "s.db"), Simulator: SimulatorConfig{URL: srv.URL(), Model: "MirrorAPI"},
		MCPSources: MCPSourcesConfig{Tools: []string{"wx=" + tools}}})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	r := invokeIn(t, env, "wx", "", "get_forecast", map[string]any{"city": "Oslo"})
	if !r.OK() || r.Source != toolenv.SourceSimulator || !mcpsource.IsResult(r.Body) || !strings.Contains(string(r.Body), `"structuredContent":{"city":"Oslo","high_c":7}`) {
		t.Fatalf("%s %s %s %s", r.Status, r.Source, r.Error, r.Body)
	}
	if r.Meta[mcpsource.MetaNotLive] != "no_server" {
		t.Fatalf("meta %v", r.Meta)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Messages[len(reqs[0].Messages)-1].Content, "Forecast for a city, in Celsius") {
		t.Fatalf("the simulator was not given the tool's documentation: %+v", reqs)
	}
	again := invokeIn(t, env, "wx", "", "get_forecast", map[string]any{"city": "Oslo"})
	if again.Source != toolenv.SourceCache || string(again.Body) != string(r.Body) || len(srv.Requests()) != 1 {
		t.Fatalf("replay: %s %s", again.Source, again.Body)
	}
}
