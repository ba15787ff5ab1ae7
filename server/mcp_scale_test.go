package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/drift"
)

func demoCollection(t testing.TB) *toolenv.Collection {
	t.Helper()
	c, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func listNames(t *testing.T, cs *mcp.ClientSession, cursor string) ([]string, string) {
	t.Helper()
	res, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: cursor})
	if err != nil {
		t.Fatalf("tools/list (cursor %q): %v", cursor, err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names, res.NextCursor
}

// TestMCPPages pages tools/list: pages of the configured size in name
// order, a cursor on every page but the last, cursors that survive a
// change of the list, a clear error for a cursor the server never issued,
// and one page when the size is negative.
func TestMCPPages(t *testing.T) {
	c := demoCollection(t)
	fx := newMCPFixtureWith(t, MCPOptions{PageSize: 4}, c)
	cs := connectMemory(t, fx.server)
	p1, cur := listNames(t, cs, "")
	if len(p1) != 4 || cur == "" {
		t.Fatalf("page 1: %v, cursor %q; want 4 tools and a cursor", p1, cur)
	}
	p2, end := listNames(t, cs, cur)
	if len(p2) != len(c.Tools)-4 || end != "" {
		t.Fatalf("page 2: %v, cursor %q; want the other %d tools and no cursor", p2, end, len(c.Tools)-4)
	}
	all := append(p1, p2...)
	if !slices.IsSorted(all) {
		t.Errorf("pages are not in name order: %v", all)
	}
	for _, tool := range c.Tools {
		if !slices.Contains(all, tool.Name) {
			t.Errorf("%s is on no page", tool.Name)
		}
	}
	if _, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: "bm9wZQ"}); err == nil || !strings.Contains(err.Error(), "not issued by this server") {
		t.Errorf("a foreign cursor: %v, want an invalid-params error that says so", err)
	}

	// A new version adds a tool that sorts after page 1: the old cursor
	// still leads to it.
	v2 := cloneCollection(c)
	extra := v2.Tool("current_weather").Clone()
	extra.Name = "zz_weather_alerts"
	v2.Tools = append(v2.Tools, extra)
	if _, err := fx.reg.Replace(v2, mustVirtual(t, v2)); err != nil {
		t.Fatal(err)
	}
	p2, _ = listNames(t, cs, cur)
	if !slices.Contains(p2, "zz_weather_alerts") {
		t.Errorf("page 2 after a hot-load: %v, want the new tool", p2)
	}

	one := newMCPFixtureWith(t, MCPOptions{PageSize: -1}, demoCollection(t))
	names, cur := listNames(t, connectMemory(t, one.server), "")
	if len(names) != len(c.Tools) || cur != "" {
		t.Errorf("PageSize -1: %d tools, cursor %q; want all in one page", len(names), cur)
	}
}

// cloneCollection is a new version of c: the same collection with its
// tools copied.
func cloneCollection(c *toolenv.Collection) *toolenv.Collection {
	tools := make([]*toolenv.Tool, len(c.Tools))
	for i, t := range c.Tools {
		tools[i] = t.Clone()
	}
	out := toolenv.NewCollection(c.Name, c.Kind, tools)
	out.Version, out.Policy, out.Backend, out.Description = c.Version, c.Policy, c.Backend, c.Description
	return out
}

func mustVirtual(t testing.TB, c *toolenv.Collection) toolenv.Handler {
	t.Helper()
	b, err := virtual.Build(virtual.Options{Tools: c.Tools})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func callSearch(t *testing.T, cs *mcp.ClientSession, args map[string]any) (*searchAnswer, *mcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpSearchTool, Arguments: args})
	if err != nil {
		t.Fatalf("search_tools %v: %v", args, err)
	}
	if res.IsError {
		return nil, res
	}
	var ans searchAnswer
	if err := json.Unmarshal([]byte(resultText(t, res)), &ans); err != nil {
		t.Fatal(err)
	}
	return &ans, res
}

// TestMCPSearchTools offers search_tools above the threshold and finds
// tools by what they do; hidden tools stay hidden; bad arguments are an
// error result that says what to send.
func TestMCPSearchTools(t *testing.T) {
	c := demoCollection(t)
	c.Tool("exchange_rates").Meta = map[string]string{toolenv.MetaHidden: "true"}
	fx := newMCPFixtureWith(t, MCPOptions{SearchAbove: 3}, c)
	cs := connectMemory(t, fx.server)
	names, _ := listNames(t, cs, "")
	if !slices.Contains(names, mcpSearchTool) {
		t.Fatalf("%d listed tools above a threshold of 3, and no %s: %v", len(names)-1, mcpSearchTool, names)
	}
	if ins := cs.InitializeResult().Instructions; !strings.Contains(ins, mcpSearchTool) {
		t.Errorf("instructions do not mention %s: %q", mcpSearchTool, ins)
	}
	ans, res := callSearch(t, cs, map[string]any{"query": "weather forecast for the next days in a city", "limit": 2})
	if ans == nil {
		t.Fatalf("search failed: %s", resultText(t, res))
	}
	if len(ans.Tools) == 0 || len(ans.Tools) > 2 || ans.Tools[0].Name != "weather_forecast" {
		t.Fatalf("hits %+v, want weather_forecast first and at most 2", ans.Tools)
	}
	if h := ans.Tools[0]; h.Collection != "demo" || !strings.Contains(string(h.InputSchema), `"city"`) || h.Description == "" {
		t.Errorf("hit %+v lacks what a client needs to call it", h)
	}
	// The hit is callable as returned.
	call, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ans.Tools[0].Name, Arguments: map[string]any{"city": "Oslo"}})
	if err != nil || call.IsError {
		t.Fatalf("calling a search hit: %v %+v", err, call)
	}
	ans, _ = callSearch(t, cs, map[string]any{"query": "currency exchange rates euro dollar"})
	for _, h := range ans.Tools {
		if h.Name == "exchange_rates" {
			t.Error("search_tools revealed a hidden tool")
		}
	}
	for _, bad := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, `needs "query"`},
		{map[string]any{"query": "  "}, `needs "query"`},
		{map[string]any{"query": "x", "limit": 0}, `"limit" must be an integer from 1 to 50`},
		{map[string]any{"query": "x", "limit": 2.5}, `"limit" must be an integer`},
		{map[string]any{"query": "x", "collection": "nope"}, `the collections are demo`},
		{map[string]any{"query": "x", "top_k": 3}, `not "top_k"`},
	} {
		if ans, res := callSearch(t, cs, bad.args); ans != nil || !strings.Contains(resultText(t, res), bad.want) {
			t.Errorf("search_tools %v: %v, want an error result saying %q", bad.args, res.Content, bad.want)
		}
	}

	below := newMCPFixture(t, demoCollection(t))
	bcs := connectMemory(t, below.server)
	if names, _ := listNames(t, bcs, ""); slices.Contains(names, mcpSearchTool) {
		t.Error("search_tools is offered below the threshold")
	}
	if _, err := bcs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpSearchTool, Arguments: map[string]any{"query": "x"}}); err == nil {
		t.Error("search_tools answered below the threshold")
	}
}

// listChangedWatcher is an MCP client that reports
// notifications/tools/list_changed, and knows when the server will send
// it one: the SDK's Connect returns before the server has registered the
// subscription (subscriptions/listen under the 2026-07-28 protocol is sent
// and not awaited; over streamable HTTP with older protocols the
// notification travels on the standalone GET stream the client opens in
// the background, and the SDK drops messages sent before that stream is
// open). A notification sent before then is lost by design, so a test
// waits on subscribed before it hot-loads.
type listChangedWatcher struct {
	client     *mcp.Client
	changed    chan struct{}
	acked      chan struct{} // closed at notifications/subscriptions/acknowledged
	ackOnce    sync.Once
	streamOpen chan struct{} // closed when the standalone GET stream answered 200
	streamOnce sync.Once
}

func newListChangedWatcher() *listChangedWatcher {
	w := &listChangedWatcher{changed: make(chan struct{}, 64), acked: make(chan struct{}), streamOpen: make(chan struct{})}
	w.client = mcp.NewClient(&mcp.Implementation{Name: "toolenv-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { w.changed <- struct{}{} },
	})
	w.client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				w.ackOnce.Do(func() { close(w.acked) })
			}
			return next(ctx, method, req)
		}
	})
	return w
}

// httpClient is an HTTP client that closes streamOpen when the server
// answers the standalone stream's GET: the SDK server writes those
// headers while holding the stream, and makes it live before releasing
// it, so every message sent after the client sees them is delivered.
func (w *listChangedWatcher) httpClient() *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil && r.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
			w.streamOnce.Do(func() { close(w.streamOpen) })
		}
		return resp, err
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// subscribed waits until the server will notify cs (over HTTP when
// overHTTP), or fails the test when ctx ends first.
func (w *listChangedWatcher) subscribed(ctx context.Context, t *testing.T, cs *mcp.ClientSession, overHTTP bool) {
	t.Helper()
	var ready <-chan struct{}
	switch {
	case cs.InitializeResult().ProtocolVersion >= "2026-07-28":
		ready = w.acked
	case overHTTP:
		ready = w.streamOpen
	default:
		return // notifications go over the one connection
	}
	select {
	case <-ready:
	case <-ctx.Done():
		t.Fatalf("the client's subscription to tools/list_changed was never in place (protocol %s): %v", cs.InitializeResult().ProtocolVersion, ctx.Err())
	}
}

// TestMCPHotLoadNotifies replaces the served collection with a new
// version (a tool renamed, as drift renames): MCP clients over both
// transports receive notifications/tools/list_changed, the list and
// calls follow the new version, and so do the HTTP front-ends. The test
// waits on events, not on time: for each client's subscription to be in
// place, then for its notification, under one generous deadline.
func TestMCPHotLoadNotifies(t *testing.T) {
	c := demoCollection(t)
	fx := newMCPFixture(t, c)
	srv := fx.httpServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	watchers := map[string]*listChangedWatcher{"http": newListChangedWatcher(), "memory": newListChangedWatcher()}
	httpCS, err := watchers["http"].client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: watchers["http"].httpClient()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer httpCS.Close()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := fx.server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	memCS, err := watchers["memory"].client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { memCS.Close(); ss.Wait() }()
	watchers["http"].subscribed(ctx, t, httpCS, true)
	watchers["memory"].subscribed(ctx, t, memCS, false)
	t.Logf("protocols: HTTP %s, in memory %s", httpCS.InitializeResult().ProtocolVersion, memCS.InitializeResult().ProtocolVersion)
	for name, w := range watchers {
		select {
		case <-w.changed:
			t.Fatalf("%s client: tools/list_changed before any hot-load", name)
		default:
		}
	}

	v2 := cloneCollection(c)
	v2.Version = "v2"
	renamed := v2.Tool("current_weather")
	renamed.Name = "weather_now"
	if _, err := fx.reg.Replace(v2, mustVirtual(t, v2)); err != nil {
		t.Fatal(err)
	}
	for name, w := range watchers {
		select {
		case <-w.changed:
		case <-ctx.Done():
			t.Fatalf("%s client: no notifications/tools/list_changed after the hot-load: %v", name, ctx.Err())
		}
	}
	for name, cs := range map[string]*mcp.ClientSession{"http": httpCS, "memory": memCS} {
		names, _ := listNames(t, cs, "")
		if !slices.Contains(names, "weather_now") || slices.Contains(names, "current_weather") {
			t.Errorf("%s: tools/list after the hot-load: %v", name, names)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "weather_now", Arguments: map[string]any{"city": "Oslo"}})
		if err != nil || res.IsError || res.Meta[MCPMetaTool] != "demo/weather_now" {
			t.Errorf("%s: calling the new name: %v %+v", name, err, res)
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "current_weather", Arguments: map[string]any{"city": "Oslo"}}); err == nil || !strings.Contains(err.Error(), `unknown tool "current_weather"`) {
			t.Errorf("%s: the old name: %v, want unknown", name, err)
		}
	}
	// The HTTP front-ends serve the new version too.
	resp, err := http.Get(srv.URL + "/collections/demo/tools")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"weather_now"`) || strings.Contains(string(body), `"current_weather"`) {
		t.Errorf("GET /collections/demo/tools after the hot-load lists the old version")
	}
	req, _ := json.Marshal(map[string]any{"category": renamed.Category, "tool_name": renamed.GroupOrCollection(), "api_name": "weather_now", "tool_input": map[string]any{"city": "Oslo"}})
	resp, err = http.Post(srv.URL+"/virtual", "application/json", strings.NewReader(string(req)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("X-Toolenv-Status") != "ok" {
		t.Errorf("/virtual of the new name: %s %s", resp.Header.Get("X-Toolenv-Status"), body)
	}
}

// TestMCPInstructionsFollowTheCatalog: the catalog is built in the
// background, and the instructions a client gets at initialize come from
// the catalog of that moment: the tools it counts, and after a hot-load
// the new version's count (over both transports).
func TestMCPInstructionsFollowTheCatalog(t *testing.T) {
	fx := newMCPFixtureWith(t, MCPOptions{SearchAbove: 3}, demoCollection(t))
	cs := connectMemory(t, fx.server)
	ins := cs.InitializeResult().Instructions
	if !strings.Contains(ins, "serves 7 documented APIs") || !strings.Contains(ins, "demo (6)") || !strings.Contains(ins, mcpSearchTool) {
		t.Fatalf("instructions %q: want 6 demo tools and %s counted", ins, mcpSearchTool)
	}
	next := demoCollection(t)
	next.Tools = next.Tools[:4]
	backend, err := virtual.Build(virtual.Options{Tools: next.Tools})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fx.reg.Replace(next, backend); err != nil {
		t.Fatal(err)
	}
	for name, cs := range map[string]*mcp.ClientSession{"memory": connectMemory(t, fx.server), "http": connectHTTP(t, fx.httpServer(t).URL)} {
		if ins := cs.InitializeResult().Instructions; !strings.Contains(ins, "serves 5 documented APIs") || !strings.Contains(ins, "demo (4)") {
			t.Errorf("%s: instructions after the hot-load %q, want 4 demo tools", name, ins)
		}
	}
}

// TestMCPMetaToolsOnFirstPage: search_tools and the documentation tools
// open the first tools/list page, whatever their names and the page
// size, since MCP Inspector and the TypeScript SDK's listTools() read
// that page only; every tool is still listed exactly once over all pages.
func TestMCPMetaToolsOnFirstPage(t *testing.T) {
	withDocs := func(name string) *toolenv.Collection {
		c := demoCollection(t)
		c = cloneCollection(c)
		c.Name = name
		drift.AddDocsTool(c)
		return c
	}
	cases := []struct {
		name      string
		opts      MCPOptions
		colls     []*toolenv.Collection
		firstPage []string // the meta tools page 1 must start with, in order
	}{
		{"search_tools, page of 4", MCPOptions{PageSize: 4, SearchAbove: 3}, []*toolenv.Collection{demoCollection(t)}, []string{"search_tools"}},
		{"search_tools, page of 1", MCPOptions{PageSize: 1, SearchAbove: 3}, []*toolenv.Collection{demoCollection(t)}, []string{"search_tools"}},
		{"docs tool of one collection", MCPOptions{PageSize: 2, SearchAbove: -1}, []*toolenv.Collection{withDocs("aaa")}, []string{"get_api_documentation"}},
		{"search and the docs tools of two collections", MCPOptions{PageSize: 3, SearchAbove: 5},
			[]*toolenv.Collection{withDocs("aaa"), withDocs("zzz")}, []string{"search_tools", "aaa__get_api_documentation", "zzz__get_api_documentation"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fx := newMCPFixtureWith(t, tc.opts, tc.colls...)
			cs := connectMemory(t, fx.server)
			first, cur := listNames(t, cs, "")
			if len(first) < len(tc.firstPage) || !slices.Equal(first[:len(tc.firstPage)], tc.firstPage) {
				t.Fatalf("page 1 = %v, want it to start with %v", first, tc.firstPage)
			}
			all := slices.Clone(first)
			for pages := 1; cur != ""; pages++ {
				if pages > 100 {
					t.Fatal("more than 100 pages")
				}
				var p []string
				p, cur = listNames(t, cs, cur)
				all = append(all, p...)
			}
			want := 0
			for _, c := range tc.colls {
				want += len(c.Tools)
			}
			if tc.firstPage[0] == "search_tools" {
				want++
			}
			seen := map[string]bool{}
			for _, n := range all {
				if seen[n] {
					t.Errorf("%s is listed twice", n)
				}
				seen[n] = true
			}
			if len(all) != want {
				t.Errorf("%d tools over all pages, want %d: %v", len(all), want, all)
			}
			if rest := all[len(tc.firstPage):]; !slices.IsSorted(rest) {
				t.Errorf("the other tools are not in name order: %v", rest)
			}
		})
	}
}

// TestMCPSearchToolsLargeArguments: a search_tools call whose arguments
// the HTTP handler read ahead of the SDK (over 16 KiB) is answered from
// those arguments, not from the handle standing for them.
func TestMCPSearchToolsLargeArguments(t *testing.T) {
	stash := NewMCPArguments()
	fx := newMCPFixtureWith(t, MCPOptions{SearchAbove: 3, Arguments: stash}, demoCollection(t))
	srv := httptest.NewServer(NewMCPHandler(fx.server, MCPHTTPOptions{MaxBodyBytes: 1 << 20, Arguments: stash}))
	t.Cleanup(srv.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	ans, res := callSearch(t, cs, map[string]any{"query": "weather forecast for the next days in a city" + strings.Repeat(" ", 2*mcpStashMin), "limit": 2})
	if ans == nil {
		t.Fatalf("search failed: %s", resultText(t, res))
	}
	if len(ans.Tools) == 0 || ans.Tools[0].Name != "weather_forecast" {
		t.Errorf("hits %+v, want weather_forecast first", ans.Tools)
	}
	stash.mu.Lock()
	left := len(stash.args)
	stash.mu.Unlock()
	if left != 0 {
		t.Errorf("%d arguments kept after their requests", left)
	}
}
