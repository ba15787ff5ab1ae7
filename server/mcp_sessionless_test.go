package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// postMCP POSTs one JSON-RPC message to url with the given headers and
// returns the status, the headers and the JSON-RPC answer (read from an
// event stream when the server streams it).
func postMCP(t testing.TB, url string, headers map[string]string, body string) (int, http.Header, rpcMsg) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last []byte
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok && bytes.Contains(d, []byte(`"id"`)) {
				last = append([]byte(nil), d...)
			}
		}
		raw = last
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return resp.StatusCode, resp.Header, rpcMsg{}
	}
	return resp.StatusCode, resp.Header, decodeMsg(t, raw)
}

// sessionlessHeaders are the headers of a 2026-07-28 request.
func sessionlessHeaders(method, name string) map[string]string {
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

// sessionlessRequest is a 2026-07-28 request: the protocol version, the
// client's identity and capabilities in its _meta.
func sessionlessRequest(id int, method string, params map[string]any) string {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return string(b)
}

// TestMCPServesBothProtocols: /mcp serves the sessionless 2026-07-28
// protocol beside the session protocols, each client getting the
// revision it asks for. The go-sdk's client (which asks for 2026-07-28
// first) gets it with no Mcp-Session-Id and works; one asking for
// 2025-11-25 gets that, with a session. Raw requests show the wire:
// server/discover lists every revision, lists carry ttlMs and
// cacheScope in a fixed order, no answer opens a session, and
// Mcp-Method/Mcp-Name must match the body.
func TestMCPServesBothProtocols(t *testing.T) {
	fx := newMCPFixture(t)
	srv := fx.httpServer(t)
	ctx := context.Background()

	cs := connectHTTP(t, srv.URL)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the go-sdk client negotiated %q, want 2026-07-28", v)
	}
	if cs.ID() != "" {
		t.Errorf("a 2026-07-28 client has the session id %q", cs.ID())
	}
	if !strings.Contains(cs.InitializeResult().Instructions, "documented APIs") {
		t.Errorf("server/discover gave no instructions: %q", cs.InitializeResult().Instructions)
	}
	lr, err := cs.ListTools(ctx, nil)
	if err != nil || len(lr.Tools) != 6 {
		t.Fatalf("tools/list at 2026-07-28: %v %+v", err, lr)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "current_weather", Arguments: map[string]any{"city": "Paris"}})
	if err != nil || res.IsError || res.Meta[MCPMetaStatus] != "ok" {
		t.Fatalf("tools/call at 2026-07-28: %v %+v", err, res)
	}

	// A session the client names, with no MCP session to scope it to:
	// scoped to the principal (here none: "mcp").
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Meta: mcp.Meta{MCPMetaSession: "episode-7"}, Name: "exchange_rates", Arguments: map[string]any{}})
	if err != nil || res.Meta[MCPMetaSession] != "mcp/episode-7" {
		t.Fatalf("a named session at 2026-07-28: %v %v", err, res.Meta)
	}

	old, err := mcp.NewClient(&mcp.Implementation{Name: "old", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if v := old.InitializeResult().ProtocolVersion; v != "2025-11-25" || old.ID() == "" {
		t.Fatalf("a 2025-11-25 client got %q with session %q", v, old.ID())
	}
	res, err = old.CallTool(ctx, &mcp.CallToolParams{Name: "current_weather", Arguments: map[string]any{"city": "Paris"}})
	if err != nil || res.IsError || res.Meta[MCPMetaSession] != old.ID() {
		t.Fatalf("tools/call at 2025-11-25: %v %+v", err, res)
	}

	url := srv.URL + "/mcp"
	// server/discover lists every revision.
	for _, probe := range []struct {
		h    map[string]string
		body string
	}{
		{sessionlessHeaders("server/discover", ""), sessionlessRequest(1, "server/discover", nil)},
	} {
		h := probe.h
		status, hdr, m := postMCP(t, url, h, probe.body)
		var d struct {
			SupportedVersions []string `json:"supportedVersions"`
		}
		json.Unmarshal(m.Result, &d)
		if status != http.StatusOK || m.Error != nil || !slices.Contains(d.SupportedVersions, "2026-07-28") ||
			!slices.Contains(d.SupportedVersions, "2025-11-25") || hdr.Get(mcpSessionHeader) != "" {
			t.Errorf("server/discover (headers %v): %d %+v %s session %q", h, status, m.Error, m.Result, hdr.Get(mcpSessionHeader))
		}
	}
	// tools/list: caching hints and one order, every time.
	var first []string
	for i := range 3 {
		status, hdr, m := postMCP(t, url, sessionlessHeaders("tools/list", ""), sessionlessRequest(2, "tools/list", nil))
		var l struct {
			TTLMs      *int   `json:"ttlMs"`
			CacheScope string `json:"cacheScope"`
			Tools      []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		json.Unmarshal(m.Result, &l)
		if status != http.StatusOK || m.Error != nil || l.TTLMs == nil || *l.TTLMs != 0 || l.CacheScope != "public" || hdr.Get(mcpSessionHeader) != "" {
			t.Fatalf("tools/list: %d %+v %.300s", status, m.Error, m.Result)
		}
		var names []string
		for _, tl := range l.Tools {
			names = append(names, tl.Name)
		}
		if !slices.IsSorted(names) {
			t.Errorf("tools/list is not in name order: %v", names)
		}
		if i == 0 {
			first = names
		} else if !slices.Equal(first, names) {
			t.Errorf("tools/list changed order: %v then %v", first, names)
		}
	}
	// A server whose lists do not change says how long they stay fresh.
	fresh := newMCPFixtureWith(t, MCPOptions{ListTTL: 90 * time.Second}).httpServer(t)
	for _, method := range []string{"tools/list", "resources/list"} {
		if _, _, m := postMCP(t, fresh.URL+"/mcp", sessionlessHeaders(method, ""), sessionlessRequest(2, method, nil)); !bytes.Contains(m.Result, []byte(`"ttlMs":90000`)) {
			t.Errorf("%s with ListTTL 90 s: %+v %.200s", method, m.Error, m.Result)
		}
	}
	// resources/list and resources/read carry the hints too.
	_, _, m := postMCP(t, url, sessionlessHeaders("resources/list", ""), sessionlessRequest(3, "resources/list", nil))
	if !bytes.Contains(m.Result, []byte(`"cacheScope":"public"`)) {
		t.Errorf("resources/list: %+v %s", m.Error, m.Result)
	}
	_, _, m = postMCP(t, url, sessionlessHeaders("resources/read", "toolenv://collections/demo"),
		sessionlessRequest(4, "resources/read", map[string]any{"uri": "toolenv://collections/demo"}))
	if !bytes.Contains(m.Result, []byte(`"cacheScope":"public"`)) {
		t.Errorf("resources/read: %+v %.200s", m.Error, m.Result)
	}
	// A tool call with its routing headers; with a wrong Mcp-Name it is
	// refused (the header must match the body).
	call := sessionlessRequest(5, "tools/call", map[string]any{"name": "current_weather", "arguments": map[string]any{"city": "Oslo"}})
	if status, _, m := postMCP(t, url, sessionlessHeaders("tools/call", "current_weather"), call); status != http.StatusOK || m.Error != nil || !bytes.Contains(m.Result, []byte(`"resultType":"complete"`)) {
		t.Errorf("tools/call: %d %+v %.200s", status, m.Error, m.Result)
	}
	// An unknown method: 404 and -32601, as 2026-07-28 says.
	if status, _, m := postMCP(t, url, sessionlessHeaders("tools/frobnicate", ""), sessionlessRequest(6, "tools/frobnicate", nil)); status != http.StatusNotFound || m.Error == nil || m.Error.Code != mcpCodeMethodNotFound {
		t.Errorf("an unknown method: %d %+v", status, m.Error)
	}
	if status, _, m := postMCP(t, url, sessionlessHeaders("tools/call", "exchange_rates"), call); status != http.StatusBadRequest || m.Error == nil {
		t.Errorf("tools/call with a mismatched Mcp-Name: %d %+v", status, m.Error)
	}
	// The version in _meta without the header is refused, saying so.
	if status, _, m := postMCP(t, url, nil, call); status != http.StatusBadRequest || m.Error == nil || !strings.Contains(m.Error.Message, "Mcp-Protocol-Version") {
		t.Errorf("a 2026-07-28 request without its header: %d %+v", status, m.Error)
	}
}

// TestMCPStdioServesBothProtocols: over stdio (MCPStdioTransport, as
// toolenv mcp serves) the go-sdk's client gets 2026-07-28 (server/discover,
// no initialize) and one asking for 2025-11-25 gets that; both call.
func TestMCPStdioServesBothProtocols(t *testing.T) {
	fx := newMCPFixture(t)
	for _, want := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		t.Run(want, func(t *testing.T) {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- fx.server.Run(ctx, &MCPStdioTransport{Reader: inR, Writer: outW}) }()
			version := want
			if want == "2026-07-28" {
				version = "" // the client's own choice
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio", Version: "1"}, nil).Connect(ctx,
				&mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			if v := cs.InitializeResult().ProtocolVersion; v != want {
				t.Errorf("negotiated %q, want %q", v, want)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "current_weather", Arguments: map[string]any{"city": "Paris"}})
			if err != nil || res.IsError {
				t.Errorf("call: %v %+v", err, res)
			}
			cs.Close()
			if err := <-done; err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
				t.Errorf("the server ended with %v", err)
			}
			cancel()
		})
	}
}
