package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/openai"
	"github.com/toolenv/toolenv/store"
)

// callLog is an invoke.Observer that records every call the pipeline
// finished, so tests see the Call a front-end built.
type callLog struct {
	mu    sync.Mutex
	calls []toolenv.Call
}

func (l *callLog) Observe(call *toolenv.Call, res *toolenv.Result, elapsed time.Duration) {
	l.mu.Lock()
	l.calls = append(l.calls, *call)
	l.mu.Unlock()
}

func (l *callLog) all() []toolenv.Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]toolenv.Call(nil), l.calls...)
}

// mcpFixture serves collections (default: the demo) with the virtual
// backend through the real pipeline and a real SQLite store.
type mcpFixture struct {
	reg      *invoke.Registry
	pipeline toolenv.Handler
	log      *callLog
	server   *mcp.Server
}

func newMCPFixture(t testing.TB, colls ...*toolenv.Collection) *mcpFixture {
	t.Helper()
	return newMCPFixtureWith(t, MCPOptions{}, colls...)
}

// newMCPFixtureWith is newMCPFixture with options for the MCP server (its
// Pipeline and Registry are the fixture's; a search index, when offered,
// lives in a temporary folder).
func newMCPFixtureWith(t testing.TB, opts MCPOptions, colls ...*toolenv.Collection) *mcpFixture {
	t.Helper()
	if len(colls) == 0 {
		c, err := demo.Collection()
		if err != nil {
			t.Fatal(err)
		}
		colls = []*toolenv.Collection{c}
	}
	st, err := store.Open(context.Background(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reg := invoke.NewRegistry()
	for _, c := range colls {
		// The virtual backend as serve builds it with no upstream and
		// no LLM: the offline synthesizer answers.
		backend, err := virtual.Build(virtual.Options{Examples: st, Tools: c.Tools})
		if err != nil {
			t.Fatal(err)
		}
		if err := reg.Add(c, backend); err != nil {
			t.Fatal(err)
		}
	}
	log := &callLog{}
	p := invoke.New(reg, invoke.Options{Cache: st, Observer: log})
	opts.Pipeline, opts.Registry, opts.Version = p, reg, "test"
	if opts.Search == nil {
		search := NewIndexSearch(IndexSearchOptions{Dir: t.TempDir()})
		t.Cleanup(func() { search.Close() })
		opts.Search = search
	}
	srv, err := NewMCPServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &mcpFixture{reg: reg, pipeline: p, log: log, server: srv}
}

// httpServer serves the fixture's MCP server from the real toolenv HTTP
// server on loopback.
func (fx *mcpFixture) httpServer(t testing.TB) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(New(Options{Pipeline: fx.pipeline, Registry: fx.reg, MCP: NewMCPHandler(fx.server, MCPHTTPOptions{})}))
	t.Cleanup(srv.Close)
	return srv
}

func connectHTTP(t testing.TB, url string) *mcp.ClientSession {
	t.Helper()
	return connectHTTPAt(t, url, "")
}

// connectHTTPAt connects the SDK's client over streamable HTTP asking
// for protocol version (its newest, 2026-07-28, when "").
func connectHTTPAt(t testing.TB, url, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "toolenv-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect over streamable HTTP: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// connectMemory connects the SDK's client over in-memory transports, the
// way stdio connects: one connection, no Mcp-Session-Id.
func connectMemory(t testing.TB, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "toolenv-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("connect in memory: %v", err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait(); cancel() })
	return cs
}

func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content block, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// TestMCPClient drives the SDK's real client through initialize →
// tools/list → tools/call over both transports toolenv serves.
func TestMCPClient(t *testing.T) {
	fx := newMCPFixture(t)
	demoColl := fx.reg.Collection("demo")
	transports := map[string]func(t *testing.T) *mcp.ClientSession{
		"streamable HTTP": func(t *testing.T) *mcp.ClientSession { return connectHTTP(t, fx.httpServer(t).URL) },
		"in memory":       func(t *testing.T) *mcp.ClientSession { return connectMemory(t, fx.server) },
	}
	for name, connect := range transports {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			cs := connect(t)
			if info := cs.InitializeResult().ServerInfo; info.Name != "toolenv" || info.Version != "test" {
				t.Errorf("server info = %+v", info)
			}
			if ins := cs.InitializeResult().Instructions; !strings.Contains(ins, "demo (6)") {
				t.Errorf("instructions = %q", ins)
			}

			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Tools) != len(demoColl.Tools) || list.NextCursor != "" {
				t.Fatalf("tools/list gave %d tools (cursor %q), want %d in one page", len(list.Tools), list.NextCursor, len(demoColl.Tools))
			}
			byName := map[string]*mcp.Tool{}
			for _, tl := range list.Tools {
				byName[tl.Name] = tl
			}
			for _, want := range demoColl.Tools {
				got := byName[want.Name]
				if got == nil {
					t.Fatalf("tool %s missing from tools/list", want.Name)
				}
				if got.Description != openai.Description(want) || got.Title != want.Title || got.Meta[MCPMetaTool] != want.ID {
					t.Errorf("tool %s = %q / %q / %v", want.Name, got.Title, got.Description, got.Meta)
				}
				wantSchema, _ := json.Marshal(want.Input)
				gotSchema, _ := json.Marshal(got.InputSchema)
				if !jsonEqual(t, wantSchema, gotSchema) {
					t.Errorf("tool %s input schema\n got %s\nwant %s", want.Name, gotSchema, wantSchema)
				}
			}
			if a := byName["current_weather"].Annotations; a == nil || !a.ReadOnlyHint {
				t.Errorf("GET tool annotations = %+v, want read-only", a)
			}

			t.Run("success", func(t *testing.T) {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "current_weather", Arguments: map[string]any{"city": "Paris"}})
				if err != nil {
					t.Fatal(err)
				}
				text := resultText(t, res)
				if res.IsError {
					t.Fatalf("isError: %s", text)
				}
				var body map[string]any
				if err := json.Unmarshal([]byte(text), &body); err != nil || body["city"] != "Paris" {
					t.Fatalf("text = %s (%v)", text, err)
				}
				sc, ok := res.StructuredContent.(map[string]any)
				if !ok || sc["city"] != "Paris" {
					t.Errorf("structured content = %#v", res.StructuredContent)
				}
				if res.Meta[MCPMetaStatus] != "ok" || res.Meta[MCPMetaSource] != string(toolenv.SourceSynthesizer) || res.Meta[MCPMetaTool] != "demo/current_weather" {
					t.Errorf("_meta = %v", res.Meta)
				}
				if w, _ := res.Meta[MCPMetaWarnings].([]any); len(w) == 0 {
					t.Errorf("a synthesized answer must carry its warning in _meta: %v", res.Meta)
				}
			})

			t.Run("invalid arguments", func(t *testing.T) {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "current_weather", Arguments: map[string]any{"units": "kelvin", "citty": "Oslo"}})
				if err != nil {
					t.Fatalf("a tool failure must be a result, not a protocol error: %v", err)
				}
				text := resultText(t, res)
				if !res.IsError || res.Meta[MCPMetaStatus] != string(toolenv.StatusInvalidArguments) {
					t.Fatalf("isError=%v _meta=%v text=%s", res.IsError, res.Meta, text)
				}
				for _, want := range []string{"error (invalid_arguments)", "city", "citty", "units", "kelvin", "metric"} {
					if !strings.Contains(text, want) {
						t.Errorf("error text lacks %q:\n%s", want, text)
					}
				}
				probs, _ := res.Meta[MCPMetaProblems].([]any)
				if len(probs) < 2 {
					t.Errorf("_meta problems = %v", res.Meta[MCPMetaProblems])
				}
			})

			t.Run("arguments not an object", func(t *testing.T) {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "current_weather", Arguments: []any{"Paris"}})
				if err != nil {
					t.Fatal(err)
				}
				if text := resultText(t, res); !res.IsError || !strings.Contains(text, "must be a JSON object") {
					t.Errorf("isError=%v text=%s", res.IsError, text)
				}
			})

			t.Run("unknown tool", func(t *testing.T) {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "curent_weather", Arguments: map[string]any{"city": "Paris"}})
				if err == nil || !strings.Contains(err.Error(), `did you mean "current_weather"`) {
					t.Fatalf("err = %v", err)
				}
			})

			t.Run("tool ID and prefixed name are aliases", func(t *testing.T) {
				for _, alias := range []string{"demo/current_weather", "demo__current_weather"} {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: alias, Arguments: map[string]any{"city": "Oslo"}})
					if err != nil || res.IsError || res.Meta[MCPMetaTool] != "demo/current_weather" {
						t.Errorf("%s: err=%v res=%+v", alias, err, res)
					}
				}
			})
		})
	}
}

// TestMCPSessions checks that each MCP session is its own toolenv
// session, over HTTP (the Mcp-Session-Id of a 2025-11-25 client) and in
// memory (a generated id per connection), and that _meta can name
// another. (The sessionless protocol is TestMCPServesBothProtocols'.)
func TestMCPSessions(t *testing.T) {
	fx := newMCPFixture(t)
	srv := fx.httpServer(t)
	ctx := context.Background()
	type client struct {
		name string
		cs   *mcp.ClientSession
	}
	clients := []client{
		{"http-1", connectHTTPAt(t, srv.URL, "2025-11-25")}, {"http-2", connectHTTPAt(t, srv.URL, "2025-11-25")},
		{"mem-1", connectMemory(t, fx.server)}, {"mem-2", connectMemory(t, fx.server)},
	}
	sessionOf := map[string]string{}
	for _, c := range clients {
		for i := 0; i < 2; i++ {
			res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "exchange_rates", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("%s: %v %+v", c.name, err, res)
			}
			s, _ := res.Meta[MCPMetaSession].(string)
			if s == "" {
				t.Fatalf("%s: no session in _meta %v", c.name, res.Meta)
			}
			if prev, ok := sessionOf[c.name]; ok && prev != s {
				t.Errorf("%s: session changed between calls: %s then %s", c.name, prev, s)
			}
			sessionOf[c.name] = s
		}
		if strings.HasPrefix(c.name, "http") && sessionOf[c.name] != c.cs.ID() {
			t.Errorf("%s: toolenv session %q, want the Mcp-Session-Id %q", c.name, sessionOf[c.name], c.cs.ID())
		}
	}
	seen := map[string]string{}
	for name, s := range sessionOf {
		if other, dup := seen[s]; dup {
			t.Errorf("sessions %s and %s share the toolenv session %s", name, other, s)
		}
		seen[s] = name
	}
	// The pipeline saw the same sessions, from the MCP front-end.
	calls := fx.log.all()
	if len(calls) != 2*len(clients) {
		t.Fatalf("pipeline saw %d calls, want %d", len(calls), 2*len(clients))
	}
	ids := map[string]bool{}
	for _, c := range calls {
		if c.Frontend != "mcp" || seen[c.Session] == "" || c.RequestID == "" || ids[c.RequestID] {
			t.Errorf("call = frontend %q session %q request %q", c.Frontend, c.Session, c.RequestID)
		}
		ids[c.RequestID] = true
	}

	// A session the client names: over HTTP it is scoped to the client's
	// MCP session (so no other client reaches it by naming it); over an
	// in-memory (or stdio) connection, its only client's, it is the name.
	for _, c := range []struct {
		cs   *mcp.ClientSession
		want string
	}{{clients[0].cs, clients[0].cs.ID() + "/episode-7"}, {clients[2].cs, "episode-7"}} {
		res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{
			Meta: mcp.Meta{MCPMetaSession: "episode-7"}, Name: "exchange_rates", Arguments: map[string]any{},
		})
		if err != nil || res.Meta[MCPMetaSession] != c.want {
			t.Fatalf("_meta session override: err=%v _meta=%v, want %q", err, res.Meta, c.want)
		}
		if last := fx.log.all(); last[len(last)-1].Session != c.want {
			t.Errorf("pipeline session = %q", last[len(last)-1].Session)
		}
	}
}

func TestMCPGeneratedSessionsAreReleased(t *testing.T) {
	fx := newMCPFixture(t)
	f := &mcpFrontend{}
	_, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := fx.server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := f.sessions.generated(ss)
	if again := f.sessions.generated(ss); again != id || !strings.HasPrefix(id, "mcp-") {
		t.Fatalf("ids %q, %q", id, again)
	}
	ss.Close()
	ss = nil
	deadline := time.Now().Add(2 * time.Minute) // a hang guard, not a speed figure
	for f.sessions.len() > 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := f.sessions.len(); n != 0 {
		t.Errorf("%d generated session ids still held after the session was dropped", n)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// TestMCPHiddenTools keeps hidden tools (a task's initialisation step)
// out of tools/list while they stay callable.
func TestMCPHiddenTools(t *testing.T) {
	c, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	hidden := c.Tool("exchange_rates")
	if hidden.Meta == nil {
		hidden.Meta = map[string]string{}
	}
	hidden.Meta[toolenv.MetaHidden] = "true"
	fx := newMCPFixture(t, c)
	cs := connectMemory(t, fx.server)
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		if tl.Name == "exchange_rates" {
			t.Fatal("a hidden tool is listed")
		}
	}
	if len(list.Tools) != len(c.Tools)-1 || !strings.Contains(cs.InitializeResult().Instructions, "demo (5)") {
		t.Errorf("%d tools listed; instructions %q", len(list.Tools), cs.InitializeResult().Instructions)
	}
	for _, name := range []string{"exchange_rates", "demo/exchange_rates"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil || res.IsError || res.Meta[MCPMetaTool] != "demo/exchange_rates" {
			t.Errorf("%s: hidden tools stay callable: %v %+v", name, err, res)
		}
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "exchange_rate", Arguments: map[string]any{}}); err == nil || strings.Contains(err.Error(), `"exchange_rates"`) {
		t.Errorf("the suggestion must not reveal a hidden tool: %v", err)
	}
}
