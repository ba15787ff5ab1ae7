package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolenv/toolenv/backend/mcpsource"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/store"
)

// sourceServer is an MCP server made with the go-sdk that asks its client
// for input the MCP 2026-07-28 way (its tools return input requests; the
// SDK asks a client of an older revision itself), sends progress and log
// messages during a call, fails with a JSON-RPC error, and offers
// resources (one that changes), a template, a prompt and completions.
func sourceServer() *mcp.Server {
	var mu sync.Mutex
	subscribed := map[string]bool{}
	s := mcp.NewServer(&mcp.Implementation{Name: "source", Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			var out []string
			for _, v := range []string{"Ada", "Alan", "Grace"} {
				if strings.HasPrefix(v, req.Params.Argument.Value) {
					out = append(out, v)
				}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: out, Total: len(out)}}, nil
		},
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			mu.Lock()
			subscribed[req.Params.URI] = true
			mu.Unlock()
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			mu.Lock()
			delete(subscribed, req.Params.URI)
			mu.Unlock()
			return nil
		},
	})
	obj := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult); ok {
			return text(fmt.Sprintf("hello %v (%s)", r.Content["name"], r.Action)), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{Message: "Your name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}}}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "sample", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["llm"].(*mcp.CreateMessageWithToolsResult); ok && len(r.Content) > 0 {
			if tc, ok := r.Content[0].(*mcp.TextContent); ok {
				return text("the model said: " + tc.Text), nil
			}
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"llm": &mcp.CreateMessageParams{MaxTokens: 50,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Say yes"}}}}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "roots", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["roots"].(*mcp.ListRootsResult); ok {
			var uris []string
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
			return text("roots: " + strings.Join(uris, ",")), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i := range 3 {
			if tok := req.Params.GetProgressToken(); tok != nil {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)})
			}
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "source", Data: fmt.Sprintf("working %d", i)})
		}
		return text("done"), nil
	})
	s.AddTool(&mcp.Tool{Name: "refuse", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: -32021, Message: "this tool needs the client's sampling capability", Data: json.RawMessage(`{"requiredCapabilities":{"sampling":{}}}`)}
	})
	s.AddResource(&mcp.Resource{URI: "test://doc", Name: "doc", MIMEType: "text/plain"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "the document"}}}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://item/{id}", Name: "item"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "item " + strings.TrimPrefix(req.Params.URI, "test://item/")}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Greet " + req.Params.Arguments["name"]}}}}, nil
	})
	return s
}

// proxyFixture serves a source server's collection through toolenv's
// pipeline and MCP front-end, with the source as an MCPSource.
type proxyFixture struct {
	src    *mcp.Server
	srcWeb *httptest.Server // the source's HTTP server
	client *mcpsource.Client
	url    string // toolenv's MCP endpoint
}

func newProxyFixture(t *testing.T, stateless bool) *proxyFixture {
	t.Helper()
	return newProxyFixtureWith(t, stateless, nil)
}

// memRecordings keeps recordings in memory (environment keeps them in
// the store).
type memRecordings struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (r *memRecordings) Record(_ context.Context, key string, body []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string][]byte{}
	}
	r.m[key] = append([]byte(nil), body...)
	return nil
}

func (r *memRecordings) Recorded(_ context.Context, key string) ([]byte, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.m[key]
	return b, ok, nil
}

func newProxyFixtureWith(t *testing.T, stateless bool, rec mcpsource.Recordings) *proxyFixture {
	t.Helper()
	src := sourceServer()
	srcHTTP := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return src }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
	t.Cleanup(srcHTTP.Close)
	ctx := context.Background()
	// A new tool list replaces the collection, as environment does.
	var (
		mu  sync.Mutex
		reg *invoke.Registry
		b   *mcpsource.Backend
	)
	changed := func(tools []*mcp.Tool) {
		mu.Lock()
		defer mu.Unlock()
		if reg == nil {
			return
		}
		if coll, _, err := mcpsource.NewCollection("src", tools, mcpsource.CollectionOptions{Server: &mcpsource.Server{Name: "src", URL: srcHTTP.URL}}); err == nil {
			reg.Replace(coll, b)
		}
	}
	cl, err := mcpsource.Start(ctx, &mcpsource.Server{Name: "src", URL: srcHTTP.URL}, mcpsource.Options{OnToolsChanged: changed, Recordings: rec, MinBackoff: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	tools, err := cl.Ready(ctx)
	if err != nil {
		t.Fatal(err)
	}
	coll, _, err := mcpsource.NewCollection("src", tools, mcpsource.CollectionOptions{Server: &mcpsource.Server{Name: "src", URL: srcHTTP.URL}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	mu.Lock()
	b, err = mcpsource.NewBackend(mcpsource.BackendOptions{Client: cl, Virtual: virtual.Options{Examples: st, Tools: coll.Tools}})
	if err != nil {
		t.Fatal(err)
	}
	reg = invoke.NewRegistry()
	if err := reg.Add(coll, b); err != nil {
		t.Fatal(err)
	}
	mu.Unlock()
	p := invoke.New(reg, invoke.Options{Cache: st})
	srv, err := NewMCPServer(MCPOptions{Pipeline: p, Registry: reg, Sources: []MCPSource{cl}, SearchAbove: -1})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(New(Options{Pipeline: p, Registry: reg, MCP: NewMCPHandler(srv, MCPHTTPOptions{})}))
	t.Cleanup(front.Close)
	return &proxyFixture{src: src, srcWeb: srcHTTP, client: cl, url: front.URL + "/mcp"}
}

// downstream is a client of toolenv that answers elicitation, sampling
// and roots, and records progress, log messages and resource updates.
type downstream struct {
	mu       sync.Mutex
	name     string // its answer to elicitation
	asked    []string
	progress []string
	logs     []string
	updated  chan string
	noted    chan struct{} // a progress or log message arrived
	cs       *mcp.ClientSession
}

// await waits until the client holds n progress notifications and m log
// messages of the source (the go-sdk client hands a call's answer over
// before the notifications read ahead of it are handled), or ctx ends.
func (d *downstream) await(ctx context.Context, n, m int) {
	for {
		_, progress, logs := d.snapshot()
		if len(progress) >= n && len(sourceLogs(logs)) >= m {
			return
		}
		select {
		case <-d.noted:
		case <-ctx.Done():
			return
		}
	}
}

// sourceLogs are the log messages that came from the source (toolenv
// logs its own too).
func sourceLogs(logs []string) []string {
	var out []string
	for _, l := range logs {
		if strings.HasPrefix(l, "working") {
			out = append(out, l)
		}
	}
	return out
}

func connectDownstream(t *testing.T, url, version, name string) *downstream {
	t.Helper()
	d := &downstream{name: name, updated: make(chan string, 16), noted: make(chan struct{}, 64)}
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			d.note("elicit: " + req.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": d.name}}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			d.note("sample")
			return &mcp.CreateMessageResult{Model: "test", Role: "assistant", Content: &mcp.TextContent{Text: "yes from " + d.name}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			d.mu.Lock()
			d.progress = append(d.progress, fmt.Sprintf("%v:%s", req.Params.ProgressToken, req.Params.Message))
			d.mu.Unlock()
			d.noted <- struct{}{}
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			d.mu.Lock()
			d.logs = append(d.logs, fmt.Sprint(req.Params.Data))
			d.mu.Unlock()
			d.noted <- struct{}{}
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { d.updated <- req.Params.URI },
	})
	c.AddRoots(&mcp.Root{URI: "file:///work/" + name, Name: name})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect at %q: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; version != "" && v != version || version == "" && v != "2026-07-28" {
		t.Fatalf("asked for %q, negotiated %q", version, v)
	}
	d.cs = cs
	return d
}

func (d *downstream) note(s string) {
	d.mu.Lock()
	d.asked = append(d.asked, s)
	d.mu.Unlock()
}

func (d *downstream) snapshot() (asked, progress, logs []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.asked...), append([]string(nil), d.progress...), append([]string(nil), d.logs...)
}

// TestMCPProxy: behind toolenv, an MCP server's requests for elicitation,
// sampling and roots reach the client that made the call and its answers
// reach the server (two clients, two different answers: nothing is
// replayed from one to the other); its progress reaches the client with
// the client's token, its log messages the client that asked for them;
// its JSON-RPC error is the client's; its resources, template, prompt and
// completions are offered beside toolenv's own, and a subscribed client
// hears of a change. Each for a source that keeps sessions (it asks its
// client by requests) and a stateless one (MCP 2026-07-28: by
// input-required results), and clients of 2025-11-25 and 2026-07-28.
func TestMCPProxy(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		fx := newProxyFixture(t, stateless)
		for _, version := range []string{"2025-11-25", ""} {
			name := fmt.Sprintf("source stateless %v, client %s", stateless, version)
			t.Run(name, func(t *testing.T) {
				testProxy(t, fx, version, stateless)
			})
		}
	}
}

func testProxy(t *testing.T, fx *proxyFixture, version string, stateless bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ada := connectDownstream(t, fx.url, version, "Ada")
	grace := connectDownstream(t, fx.url, version, "Grace")
	for _, d := range []*downstream{ada, grace} {
		res, err := d.cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
		if err != nil || res.IsError || proxyText(res) != "hello "+d.name+" (accept)\n" {
			t.Fatalf("%s: ask: %v %q", d.name, err, proxyText(res))
		}
		res, err = d.cs.CallTool(ctx, &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{}})
		if err != nil || res.IsError || proxyText(res) != "the model said: yes from "+d.name+"\n" {
			t.Fatalf("%s: sample: %v %q", d.name, err, proxyText(res))
		}
		res, err = d.cs.CallTool(ctx, &mcp.CallToolParams{Name: "roots", Arguments: map[string]any{}})
		if err != nil || res.IsError || proxyText(res) != "roots: file:///work/"+d.name+"\n" {
			t.Fatalf("%s: roots: %v %q", d.name, err, proxyText(res))
		}
		if asked, _, _ := d.snapshot(); len(asked) != 2 {
			t.Errorf("%s was asked %v, want an elicitation and a sampling", d.name, asked)
		}
	}
	if version == "" {
		// A request state that names no parked call is refused.
		_, err := ada.cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}, RequestState: mcpParkPrefix + "nope",
			InputResponses: mcp.InputResponseMap{mcpParkInput: &mcp.ElicitResult{Action: "decline"}}})
		if err == nil || !strings.Contains(err.Error(), "names no call waiting") {
			t.Errorf("a request state naming no parked call: %v", err)
		}
	}
	// Progress and log messages, to the client that asked.
	if version != "" {
		if err := ada.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
	}
	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}}
	params.SetProgressToken("ada-1")
	if version == "" {
		params.Meta[mcp.MetaKeyLogLevel] = "info"
	}
	if res, err := ada.cs.CallTool(ctx, params); err != nil || res.IsError {
		t.Fatalf("slow: %v %+v", err, res)
	}
	ada.await(ctx, 3, 3)
	_, progress, logs := ada.snapshot()
	if strings.Join(progress, ";") != "ada-1:step 0;ada-1:step 1;ada-1:step 2" {
		t.Errorf("progress at the client: %v", progress)
	}
	if strings.Join(sourceLogs(logs), ";") != "working 0;working 1;working 2" {
		t.Errorf("the source's log messages at the client: %v", logs)
	}
	if _, _, glogs := grace.snapshot(); len(glogs) != 0 {
		t.Errorf("a client that asked for no log messages got %v", glogs)
	}
	// The source's JSON-RPC error, as it is.
	_, err := ada.cs.CallTool(ctx, &mcp.CallToolParams{Name: "refuse", Arguments: map[string]any{}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != -32021 || !strings.Contains(we.Message, "sampling capability") {
		t.Errorf("the source's JSON-RPC error: %v", err)
	}
	// Resources, the template, the prompt, completions.
	var uris []string
	for r, err := range ada.cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	if !contains(uris, "test://doc") || !contains(uris, MCPCollectionURI("src")) {
		t.Errorf("resources/list: %v", uris)
	}
	for uri, want := range map[string]string{"test://doc": "the document", "test://item/7": "item 7", MCPCollectionURI("src"): "refuse"} {
		rr, err := ada.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(rr.Contents) == 0 || !strings.Contains(rr.Contents[0].Text, want) {
			t.Errorf("read %s: %v %+v", uri, err, rr)
		}
	}
	if _, err := ada.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://nothing"}); err == nil {
		t.Error("an unknown resource was read")
	}
	pl, err := ada.cs.ListPrompts(ctx, nil)
	if err != nil || len(pl.Prompts) != 1 || pl.Prompts[0].Name != "greet" {
		t.Fatalf("prompts/list: %v %+v", err, pl)
	}
	gp, err := ada.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil || len(gp.Messages) != 1 || gp.Messages[0].Content.(*mcp.TextContent).Text != "Greet Ada" {
		t.Fatalf("prompts/get: %v %+v", err, gp)
	}
	cr, err := ada.cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, Argument: mcp.CompleteParamsArgument{Name: "name", Value: "A"}})
	if err != nil || strings.Join(cr.Completion.Values, ",") != "Ada,Alan" {
		t.Errorf("completion/complete: %v %+v", err, cr)
	}
	// A subscription (sessions only: the 2026-07-28 client subscribes by
	// subscriptions/listen, which toolenv answers for its own resources).
	if version != "" {
		if err := ada.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://doc"}); err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		if err := fx.src.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "test://doc"}); err != nil {
			t.Fatal(err)
		}
		select {
		case uri := <-ada.updated:
			if uri != "test://doc" {
				t.Errorf("updated %s", uri)
			}
		case <-ctx.Done():
			t.Fatal("the subscribed client was never told the resource changed")
		}
		if err := ada.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "test://doc"}); err != nil {
			t.Errorf("unsubscribe: %v", err)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// proxyText is the text of a result's text contents, each on a line.
func proxyText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text + "\n")
		}
	}
	return b.String()
}

// TestMCPProxyListChanged: a source's new tool is served at once, and a
// client of toolenv subscribed to list changes (2026-07-28's
// subscriptions/listen, or a session's stream) is told.
func TestMCPProxyListChanged(t *testing.T) {
	for _, version := range []string{"2025-11-25", ""} {
		fx := newProxyFixture(t, true)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		w := newListChangedWatcher()
		cs, err := w.client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: fx.url, HTTPClient: w.httpClient()}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		w.subscribed(ctx, t, cs, true)
		fx.src.AddTool(&mcp.Tool{Name: "added", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added"}}}, nil
		})
		select {
		case <-w.changed:
		case <-ctx.Done():
			t.Fatalf("%q: the client was never told the tools changed", version)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "added", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("%q: the new tool: %v %+v", version, err, res)
		}
	}
}

// TestMCPProxyReplay: a source's resources, template reads, prompts and
// completions are recorded; with the source gone they are answered from
// the recordings, marked, and what was never recorded is not found.
func TestMCPProxyReplay(t *testing.T) {
	rec := &memRecordings{}
	fx := newProxyFixtureWith(t, false, rec)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d := connectDownstream(t, fx.url, "2025-11-25", "Ada")
	ask := func() (texts []string, sources []any, err error) {
		for _, uri := range []string{"test://doc", "test://item/7"} {
			rr, err := d.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				return nil, nil, err
			}
			texts = append(texts, rr.Contents[0].Text)
			sources = append(sources, rr.Meta[MCPMetaSource])
		}
		gp, err := d.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
		if err != nil {
			return nil, nil, err
		}
		texts = append(texts, gp.Messages[0].Content.(*mcp.TextContent).Text)
		sources = append(sources, gp.Meta[MCPMetaSource])
		cr, err := d.cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, Argument: mcp.CompleteParamsArgument{Name: "name", Value: "G"}})
		if err != nil {
			return nil, nil, err
		}
		texts = append(texts, strings.Join(cr.Completion.Values, ","))
		return texts, sources, nil
	}
	live, liveSources, err := ask()
	if err != nil {
		t.Fatal(err)
	}
	fx.srcWeb.CloseClientConnections()
	fx.srcWeb.Close()
	replayed, sources, err := ask()
	if err != nil {
		t.Fatalf("with the source gone: %v", err)
	}
	if strings.Join(live, "|") != strings.Join(replayed, "|") || strings.Join(live, "|") != "the document|item 7|Greet Ada|Grace" {
		t.Errorf("live %q, replayed %q", live, replayed)
	}
	for i := range sources {
		if liveSources[i] != nil || sources[i] != "cache" {
			t.Errorf("answer %d: source live %v, replayed %v; want none, then cache", i, liveSources[i], sources[i])
		}
	}
	var we *jsonrpc.Error
	if _, err := d.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://item/8"}); !errors.As(err, &we) || we.Code != mcpCodeInvalidParams {
		t.Errorf("a resource never read, the source gone: %v", err)
	}
}
