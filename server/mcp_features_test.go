package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
)

// connectWith connects the SDK's client with opts at a protocol version,
// over streamable HTTP (url set) or in memory.
func connectWith(t testing.TB, srv *mcp.Server, url string, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var tr mcp.Transport
	if url != "" {
		tr = &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}
	} else {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Wait() })
		tr = ct
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "toolenv-test", Version: "1"}, opts).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close(); cancel() })
	return cs
}

// transports runs f over streamable HTTP and in memory (as stdio).
func transports(t *testing.T, fx *mcpFixture, f func(t *testing.T, url string)) {
	t.Run("http", func(t *testing.T) { f(t, fx.httpServer(t).URL) })
	t.Run("memory", func(t *testing.T) { f(t, "") })
}

func wireCode(err error) int64 {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

// TestMCPDeclaredCapabilities: the server declares tools, resources
// (with subscriptions) and logging, and nothing else; the methods of
// what it does not declare are answered -32601.
func TestMCPDeclaredCapabilities(t *testing.T) {
	fx := newMCPFixture(t)
	for _, version := range []string{"2025-06-18", "2025-11-25"} {
		transports(t, fx, func(t *testing.T, url string) {
			cs := connectWith(t, fx.server, url, nil, version)
			init := cs.InitializeResult()
			if init.ProtocolVersion != version {
				t.Errorf("negotiated %s, asked %s", init.ProtocolVersion, version)
			}
			caps := init.Capabilities
			if caps.Tools == nil || !caps.Tools.ListChanged || caps.Resources == nil || !caps.Resources.Subscribe || !caps.Resources.ListChanged || caps.Logging == nil {
				t.Errorf("capabilities %+v: want tools, resources with subscribe and logging", caps)
			}
			if caps.Prompts != nil || caps.Completions != nil {
				t.Errorf("capabilities %+v declare prompts or completions", caps)
			}
			ctx := context.Background()
			if _, err := cs.ListPrompts(ctx, nil); wireCode(err) != mcpCodeMethodNotFound {
				t.Errorf("prompts/list: %v, want -32601", err)
			}
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "x"}); wireCode(err) != mcpCodeMethodNotFound {
				t.Errorf("prompts/get: %v, want -32601", err)
			}
			if _, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "x"}, Argument: mcp.CompleteParamsArgument{Name: "a", Value: "b"}}); wireCode(err) != mcpCodeMethodNotFound {
				t.Errorf("completion/complete: %v, want -32601", err)
			}
			if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
				t.Errorf("logging/setLevel: %v", err)
			}
		})
	}
}

// TestMCPResources: each collection's documentation and each listed
// tool's are resources; hidden tools and unknown URIs are -32602 (SEP-2164); a
// subscriber is told when a hot-load changes a collection, a client when
// a collection is added.
func TestMCPResources(t *testing.T) {
	c := demoCollection(t)
	c.Tool("exchange_rates").Meta = map[string]string{toolenv.MetaHidden: "true"}
	fx := newMCPFixture(t, c)
	transports(t, fx, func(t *testing.T, url string) {
		updated := make(chan string, 8)
		listChanged := make(chan struct{}, 8)
		cs := connectWith(t, fx.server, url, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
				updated <- r.Params.URI
			},
			ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { listChanged <- struct{}{} },
		}, "2025-11-25")
		ctx := context.Background()
		list, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Resources) != 1 || list.Resources[0].URI != "toolenv://collections/demo" || list.Resources[0].MIMEType != "text/markdown" {
			t.Fatalf("resources/list: %+v", list.Resources)
		}
		tmpl, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "toolenv://tools/{collection}/{tool}" {
			t.Fatalf("resources/templates/list: %v %+v", err, tmpl)
		}
		doc, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "toolenv://collections/demo"})
		if err != nil {
			t.Fatal(err)
		}
		md := doc.Contents[0].Text
		for _, want := range []string{"# demo", "## current_weather", "## get_book", "city (string, required)"} {
			if !strings.Contains(md, want) {
				t.Errorf("collection documentation lacks %q:\n%s", want, md)
			}
		}
		if strings.Contains(md, "exchange_rates") {
			t.Errorf("collection documentation reveals a hidden tool:\n%s", md)
		}
		tool, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "toolenv://tools/demo/current_weather"})
		if err != nil {
			t.Fatal(err)
		}
		var td mcpToolDoc
		if err := json.Unmarshal([]byte(tool.Contents[0].Text), &td); err != nil || td.Name != "current_weather" || td.ID != "demo/current_weather" ||
			!strings.Contains(string(td.InputSchema), `"city"`) || tool.Contents[0].MIMEType != "application/json" {
			t.Fatalf("tool documentation: %v %s", err, tool.Contents[0].Text)
		}
		for _, uri := range []string{"toolenv://tools/demo/exchange_rates", "toolenv://tools/demo/nope", "toolenv://collections/nope", "test://static-text"} {
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); wireCode(err) != mcp.CodeResourceNotFound {
				t.Errorf("read %s: %v, want -32602", uri, err)
			}
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); wireCode(err) != mcp.CodeResourceNotFound {
				t.Errorf("subscribe %s: %v, want -32602", uri, err)
			}
		}
		for _, uri := range []string{"toolenv://collections/demo", "toolenv://tools/demo/current_weather"} {
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
				t.Fatalf("subscribe %s: %v", uri, err)
			}
		}

		// A new version of demo with one more tool: both subscribers
		// are told, and the documentation names the new tool.
		v2 := cloneCollection(c)
		extra := v2.Tool("current_weather").Clone()
		extra.Name = "weather_alerts"
		v2.Tools = append(v2.Tools, extra)
		v2.Reindex()
		if _, err := fx.reg.Replace(v2, mustVirtual(t, v2)); err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for len(got) < 2 {
			select {
			case uri := <-updated:
				got[uri] = true
			case <-time.After(30 * time.Second):
				t.Fatalf("resources/updated for %v only", got)
			}
		}
		doc, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "toolenv://collections/demo"})
		if err != nil || !strings.Contains(doc.Contents[0].Text, "## weather_alerts") {
			t.Fatalf("after the hot-load: %v", err)
		}
		if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "toolenv://collections/demo"}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestMCPResourcesFollowNewCollections: adding a collection lists its
// documentation and tells clients the list changed.
func TestMCPResourcesFollowNewCollections(t *testing.T) {
	fx := newMCPFixture(t)
	changed := make(chan struct{}, 8)
	cs := connectWith(t, fx.server, fx.httpServer(t).URL, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
	}, "2025-11-25")
	other := cloneCollection(demoCollection(t))
	other.Name = "other"
	for _, tl := range other.Tools {
		tl.Collection, tl.ID = "other", "other/"+tl.Name
	}
	other.Reindex()
	if err := fx.reg.Add(other, mustVirtual(t, other)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no notifications/resources/list_changed")
	}
	list, err := cs.ListResources(context.Background(), nil)
	if err != nil || len(list.Resources) != 2 {
		t.Fatalf("%v %+v", err, list)
	}
}

// logSink collects log notifications.
type logSink struct {
	mu   sync.Mutex
	msgs []*mcp.LoggingMessageParams
	c    chan struct{}
}

func newLogSink() *logSink { return &logSink{c: make(chan struct{}, 64)} }

func (s *logSink) handler(_ context.Context, r *mcp.LoggingMessageRequest) {
	s.mu.Lock()
	s.msgs = append(s.msgs, r.Params)
	s.mu.Unlock()
	s.c <- struct{}{}
}

// wait returns the messages once n arrived (or fails after a minute),
// then takes them.
func (s *logSink) wait(t *testing.T, n int) []*mcp.LoggingMessageParams {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		s.mu.Lock()
		if len(s.msgs) >= n {
			out := s.msgs
			s.msgs = nil
			s.mu.Unlock()
			return out
		}
		s.mu.Unlock()
		select {
		case <-s.c:
		case <-deadline:
			t.Fatalf("%d log messages, want %d", len(s.msgs), n)
		}
	}
}

func (s *logSink) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.msgs)
}

// TestMCPLogging: a client that set a level is sent log messages about
// each of its calls at that level and above (a client that set none gets
// none), on both transports.
func TestMCPLogging(t *testing.T) {
	fx := newMCPFixture(t)
	transports(t, fx, func(t *testing.T, url string) {
		ctx := context.Background()
		quiet := newLogSink()
		cq := connectWith(t, fx.server, url, &mcp.ClientOptions{LoggingMessageHandler: quiet.handler}, "2025-11-25")
		sink := newLogSink()
		cs := connectWith(t, fx.server, url, &mcp.ClientOptions{LoggingMessageHandler: sink.handler}, "2025-11-25")
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "current_weather", Arguments: map[string]any{"city": "Paris"}}); err != nil {
			t.Fatal(err)
		}
		msgs := sink.wait(t, 3)
		levels := []mcp.LoggingLevel{}
		for _, m := range msgs {
			levels = append(levels, m.Level)
			d, _ := m.Data.(map[string]any)
			if m.Logger != "toolenv" || d["tool"] != "demo/current_weather" || d["message"] == "" || d["request"] == "" {
				t.Errorf("log message %+v", m)
			}
		}
		if len(levels) != 3 || levels[0] != "debug" || levels[1] != "warning" || levels[2] != "info" {
			t.Errorf("levels %v, want debug (called), warning (synthesized), info (answered)", levels)
		}
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "current_weather", Arguments: map[string]any{"city": 7}}); err != nil {
			t.Fatal(err)
		}
		msgs = sink.wait(t, 1)
		if d, _ := msgs[0].Data.(map[string]any); msgs[0].Level != "warning" || !strings.Contains(d["message"].(string), "invalid_arguments") {
			t.Errorf("a failed call at level warning: %+v", msgs[0])
		}
		if _, err := cq.CallTool(ctx, &mcp.CallToolParams{Name: "current_weather", Arguments: map[string]any{"city": "Oslo"}}); err != nil {
			t.Fatal(err)
		}
		// The calls above are answered after their log messages, on
		// the same stream: by now any message would have arrived.
		if n := quiet.len(); n != 0 {
			t.Errorf("a client that set no level got %d log messages", n)
		}
	})
}
