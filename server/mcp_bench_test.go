package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/toolbench"
)

// stableToolBench loads the 1,920 APIs of StableToolBench's four test
// query files as one collection.
func stableToolBench(tb testing.TB) *toolenv.Collection {
	tb.Helper()
	dir := shareddata.Require(tb, "stabletoolbench", "solvable_queries", "test_instruction")
	src, err := toolbench.Load(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
}

// TestMCPListsStableToolBench lists every StableToolBench API through the
// SDK's client: each is offered once, under its ToolBench function name,
// over pages of DefaultMCPPageSize tools, beside search_tools.
func TestMCPListsStableToolBench(t *testing.T) {
	c := stableToolBench(t)
	fx := newMCPFixture(t, c)
	cs := connectMemory(t, fx.server)
	first, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Tools) != DefaultMCPPageSize || first.NextCursor == "" {
		t.Fatalf("first tools/list page: %d tools (next cursor %q), want %d and a cursor", len(first.Tools), first.NextCursor, DefaultMCPPageSize)
	}
	if len(c.Tools) < 1900 {
		t.Errorf("loaded only %d StableToolBench APIs", len(c.Tools))
	}
	names := map[string]bool{}
	for tl, err := range cs.Tools(context.Background(), nil) { // follows the cursors
		if err != nil {
			t.Fatal(err)
		}
		if names[tl.Name] || mcpSanitize(tl.Name) != tl.Name {
			t.Errorf("tool name %q is repeated or invalid", tl.Name)
		}
		names[tl.Name] = true
	}
	if len(names) != len(c.Tools)+1 || !names[mcpSearchTool] {
		t.Errorf("%d tools over all pages, want the %d APIs and %s", len(names), len(c.Tools), mcpSearchTool)
	}
	for _, tool := range c.Tools {
		if !names[tool.Name] {
			t.Errorf("%s is missing from tools/list", tool.Name)
		}
	}
}

// BenchmarkMCPListTools measures listing the 1,920 StableToolBench APIs
// (two tools/list pages, search_tools among them) through the SDK's
// client, in memory and over streamable HTTP on loopback (the figure in
// docs/frontends.md).
func BenchmarkMCPListTools(b *testing.B) {
	c := stableToolBench(b)
	fx := newMCPFixture(b, c)
	b.Run("in-memory", func(b *testing.B) {
		benchList(b, connectMemory(b, fx.server), len(c.Tools)+1)
	})
	b.Run("streamable-http", func(b *testing.B) {
		srv := fx.httpServer(b)
		benchList(b, connectHTTP(b, srv.URL), len(c.Tools)+1)
	})
}

func benchList(b *testing.B, cs *mcp.ClientSession, n int) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		got := 0
		for _, err := range cs.Tools(ctx, nil) {
			if err != nil {
				b.Fatal(err)
			}
			got++
		}
		if got != n {
			b.Fatalf("%d tools listed, want %d", got, n)
		}
	}
}

// BenchmarkNewMCPServer measures building the MCP server of the 1,920
// StableToolBench APIs (done once at start-up).
func BenchmarkNewMCPServer(b *testing.B) {
	c := stableToolBench(b)
	fx := newMCPFixture(b, c)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewMCPServer(MCPOptions{Pipeline: fx.pipeline, Registry: fx.reg, SearchAbove: -1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMCPCallTool measures one tools/call of a demo tool through the
// SDK's client and the whole pipeline (a cache hit after the first call:
// the demo collection caches, but synthesized answers are not cached, so
// this is the synthesizer's time plus the transport's).
func BenchmarkMCPCallTool(b *testing.B) {
	fx := newMCPFixture(b)
	run := func(b *testing.B, cs *mcp.ClientSession) {
		ctx := context.Background()
		// The SDK's client writes the protocol version into the
		// params' _meta: params are not shared between sessions.
		params := &mcp.CallToolParams{Name: "current_weather", Arguments: map[string]any{"city": "Paris"}}
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				b.Fatalf("%v %+v", err, res)
			}
		}
	}
	b.Run("in-memory", func(b *testing.B) { run(b, connectMemory(b, fx.server)) })
	b.Run("streamable-http", func(b *testing.B) { run(b, connectHTTP(b, fx.httpServer(b).URL)) })
}

// BenchmarkMCPListToolsWire measures the server's side of one tools/list
// page (1,000 of the 1,920 StableToolBench APIs): a plain HTTP client posts the JSON-RPC
// request to /mcp and reads the answer's bytes without decoding them
// (the SDK client's own decoding and checks are most of
// BenchmarkMCPListTools).
func BenchmarkMCPListToolsWire(b *testing.B) {
	c := stableToolBench(b)
	fx := newMCPFixture(b, c)
	srv := fx.httpServer(b)
	cs := connectHTTP(b, srv.URL) // initialize through the SDK, then speak raw JSON-RPC in its session
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	var size int
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || n < int64(len(c.Tools))*100 {
			b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
		}
		size = int(n)
	}
	b.ReportMetric(float64(size)/1e6, "MB/list")
}
