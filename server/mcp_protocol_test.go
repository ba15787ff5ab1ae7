package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
)

const pingMsg = `{"jsonrpc":"2.0","id":"p","method":"ping"}`

// TestMCPDuplicateInitialize: a second initialize on one session (in one
// batch, or resent with the session id just issued, or twice over stdio)
// is answered with -32600 and the session and the process go on. The
// SDK answers it with an error and a typed nil result, which the
// server's middleware once wrote into, in a goroutine nothing recovered:
// the process died.
func TestMCPDuplicateInitialize(t *testing.T) {
	fx := newMCPFixture(t)
	hs := fx.httpServer(t)
	c := newRawHTTP(hs.URL)

	t.Run("batch of two over HTTP", func(t *testing.T) {
		a := c.do(t, http.MethodPost, "", "["+initMsg(1, "2025-03-26")+","+initMsg(2, "2025-03-26")+"]", nil)
		checkAnswer(t, a)
		got := responses(t, a.msgs)
		if a.status != http.StatusOK || got["1"].Error != nil || got["2"].Error == nil || got["2"].Error.Code != mcpCodeInvalidRequest {
			t.Fatalf("%d %s", a.status, a.body)
		}
		sid := a.header.Get(mcpSessionHeader)
		if a := c.do(t, http.MethodPost, sid, pingMsg, nil); a.status != http.StatusOK || responses(t, a.msgs)[`"p"`].Error != nil {
			t.Fatalf("ping after: %d %s", a.status, a.body)
		}
	})
	t.Run("resent with the session id over HTTP", func(t *testing.T) {
		sid := c.openSession(t, "2025-06-18")
		a := c.do(t, http.MethodPost, sid, initMsg(7, "2025-06-18"), map[string]string{"Mcp-Protocol-Version": "2025-06-18"})
		checkAnswer(t, a)
		r := responses(t, a.msgs)["7"]
		if r.Error == nil || r.Error.Code != mcpCodeInvalidRequest || !strings.Contains(r.Error.Message, "initialize once per session") {
			t.Fatalf("%d %s", a.status, a.body)
		}
		if a := c.do(t, http.MethodPost, sid, pingMsg, nil); responses(t, a.msgs)[`"p"`].Error != nil {
			t.Fatalf("ping after: %d %s", a.status, a.body)
		}
	})
	t.Run("twice over stdio", func(t *testing.T) {
		s := serveRawStdio(t, func(ctx context.Context, tr *MCPStdioTransport) error { return fx.server.Run(ctx, tr) })
		s.send(t, initMsg(1, "2025-06-18"))
		if m := decodeMsg(t, s.answer(t)); m.Error != nil {
			t.Fatalf("first initialize: %+v", m.Error)
		}
		s.send(t, initMsg(2, "2025-06-18"))
		if m := decodeMsg(t, s.answer(t)); m.Error == nil || m.Error.Code != mcpCodeInvalidRequest {
			t.Fatalf("second initialize: %s", m.Result)
		}
		s.send(t, pingMsg)
		if m := decodeMsg(t, s.answer(t)); m.Error != nil {
			t.Fatalf("ping after: %+v", m.Error)
		}
		if bad := s.invalid(); len(bad) > 0 {
			t.Fatal(bad)
		}
	})
}

// TestMCPHTTPAnswersAreJSONRPC: every answer of /mcp, the transport's
// refusals included, is a JSON-RPC message with a standard code and the
// status the streamable-HTTP transport prescribes.
func TestMCPHTTPAnswersAreJSONRPC(t *testing.T) {
	fx := newMCPFixture(t)
	hs := fx.httpServer(t)
	c := newRawHTTP(hs.URL)
	sid := c.openSession(t, "2025-06-18")
	v := map[string]string{"Mcp-Protocol-Version": "2025-06-18"}
	cases := []struct {
		name          string
		method, sid   string
		body          string
		hdr           map[string]string
		status        int
		code          int64  // the error's code; 0: no error
		id            string // the id the error answers (its JSON)
		inMessage     string
		noMessages    bool
		header, value string // a header the answer must keep
	}{
		{name: "unknown method", method: "POST", sid: sid, body: `{"jsonrpc":"2.0","id":3,"method":"tools/frobnicate"}`, hdr: v,
			status: 200, code: mcpCodeMethodNotFound, id: "3", inMessage: "tools/frobnicate"},
		{name: "unknown notification is ignored", method: "POST", sid: sid, body: `{"jsonrpc":"2.0","method":"notifications/frobnicated"}`, hdr: v,
			status: 202, noMessages: true},
		{name: "a request without the session id", method: "POST", body: `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, hdr: v,
			status: 400, code: mcpCodeInvalidRequest, id: "4", inMessage: "Mcp-Session-Id"},
		{name: "a ping without the session id", method: "POST", body: pingMsg, hdr: v,
			status: 400, code: mcpCodeInvalidRequest, id: `"p"`, inMessage: "Mcp-Session-Id"},
		{name: "a notification without the session id", method: "POST", body: initializedMsg, hdr: v,
			status: 400, code: mcpCodeInvalidRequest, id: "null"},
		{name: "not JSON", method: "POST", sid: sid, body: `{"jsonrpc":"2.0","id":5,"method":`, hdr: v,
			status: 400, code: mcpCodeParse, id: "null"},
		{name: "not JSON-RPC", method: "POST", sid: sid, body: `{"id":6,"method":"ping"}`, hdr: v,
			status: 400, code: mcpCodeInvalidRequest, id: "6"},
		{name: "empty batch", method: "POST", sid: sid, body: `[]`, hdr: v,
			status: 400, code: mcpCodeInvalidRequest, id: "null"},
		{name: "a batch where the protocol has none", method: "POST", sid: sid, body: "[" + pingMsg + "]", hdr: v,
			status: 400, code: mcpCodeInvalidRequest, id: "null", inMessage: "batching"},
		{name: "unknown session", method: "POST", sid: "no-such-session", body: pingMsg, hdr: v,
			status: 404, code: mcpCodeInvalidRequest, id: `"p"`, inMessage: "session not found"},
		{name: "wrong Accept", method: "POST", sid: sid, body: pingMsg, hdr: map[string]string{"Accept": "application/json", "Mcp-Protocol-Version": "2025-06-18"},
			status: 400, code: mcpCodeInvalidRequest, id: `"p"`, inMessage: "Accept"},
		{name: "unsupported protocol version", method: "POST", sid: sid, body: pingMsg, hdr: map[string]string{"Mcp-Protocol-Version": "1999-01-01"},
			status: 400, code: mcpCodeInvalidRequest, id: `"p"`, inMessage: "protocol version"},
		{name: "GET without the session id", method: "GET",
			status: 400, code: mcpCodeInvalidRequest, id: "null", inMessage: "Mcp-Session-Id"},
		{name: "PUT", method: "PUT", sid: sid, body: pingMsg, hdr: map[string]string{"Content-Type": "application/json"},
			status: 405, code: mcpCodeInvalidRequest, id: "null", header: "Allow", value: "GET, POST, DELETE"},
		{name: "prompts are not offered", method: "POST", sid: sid, body: `{"jsonrpc":"2.0","id":8,"method":"prompts/list"}`, hdr: v,
			status: 200, code: mcpCodeMethodNotFound, id: "8", inMessage: "prompts/list"},
		{name: "completions are not offered", method: "POST", sid: sid,
			body: `{"jsonrpc":"2.0","id":9,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":"b"}}}`, hdr: v,
			status: 200, code: mcpCodeMethodNotFound, id: "9", inMessage: "completion/complete"},
		{name: "bad params", method: "POST", sid: sid, body: `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":7}}`, hdr: v,
			status: 200, code: mcpCodeInvalidParams, id: "10"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := c.do(t, tc.method, tc.sid, tc.body, tc.hdr)
			checkAnswer(t, a)
			if a.status != tc.status {
				t.Fatalf("status %d, want %d: %s", a.status, tc.status, a.body)
			}
			if tc.header != "" && a.header.Get(tc.header) != tc.value {
				t.Errorf("%s: %q, want %q", tc.header, a.header.Get(tc.header), tc.value)
			}
			if tc.noMessages {
				if len(a.msgs) != 0 {
					t.Fatalf("want no body: %s", a.body)
				}
				return
			}
			if len(a.msgs) != 1 {
				t.Fatalf("want one message: %s", a.body)
			}
			m := decodeMsg(t, a.msgs[0])
			if tc.code == 0 {
				if m.Error != nil {
					t.Fatalf("error %+v", m.Error)
				}
				return
			}
			if m.Error == nil || m.Error.Code != tc.code || string(m.ID) != tc.id || !strings.Contains(m.Error.Message, tc.inMessage) {
				t.Fatalf("want error %d for id %s mentioning %q: %s", tc.code, tc.id, tc.inMessage, a.body)
			}
		})
	}
}

// TestMCPDeleteEndsSession: the streamable-HTTP session ends with a DELETE
// carrying its id and no body (what the official SDKs'
// terminateSession sends), through the server's guard; later requests
// on it get 404. A cross-origin DELETE is still refused.
func TestMCPDeleteEndsSession(t *testing.T) {
	fx := newMCPFixture(t)
	hs := fx.httpServer(t)
	c := newRawHTTP(hs.URL)
	sid := c.openSession(t, "2025-06-18")
	if a := c.do(t, http.MethodDelete, sid, "", map[string]string{"Origin": "http://evil.example"}); a.status != http.StatusForbidden {
		t.Fatalf("cross-origin DELETE: %d %s", a.status, a.body)
	}
	a := c.do(t, http.MethodDelete, sid, "", nil)
	if a.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", a.status, a.body)
	}
	a = c.do(t, http.MethodPost, sid, pingMsg, nil)
	checkAnswer(t, a)
	if a.status != http.StatusNotFound {
		t.Fatalf("after DELETE: %d %s", a.status, a.body)
	}
	for ss := range fx.server.Sessions() {
		if ss.ID() == sid {
			t.Fatal("the session is still live")
		}
	}
}

// TestMCPStdioAnswersEveryLine: over stdio a line that is not a message is
// answered and the session goes on (the SDK's IOTransport ends the
// session on one), a request before initialize gets -32600 (the SDK
// answers code 0), an unknown method -32601, and batches follow the
// negotiated protocol.
func TestMCPStdioAnswersEveryLine(t *testing.T) {
	fx := newMCPFixture(t)
	s := serveRawStdio(t, func(ctx context.Context, tr *MCPStdioTransport) error { return fx.server.Run(ctx, tr) })
	expect := func(line string, code int64, id string) {
		t.Helper()
		s.send(t, line)
		m := decodeMsg(t, s.answer(t))
		if code == 0 {
			if m.Error != nil {
				t.Fatalf("%s: error %+v", line, m.Error)
			}
			return
		}
		if m.Error == nil || m.Error.Code != code || string(m.ID) != id {
			t.Fatalf("%s: want error %d for id %s, got id %s %+v %s", line, code, id, m.ID, m.Error, m.Result)
		}
	}
	expect(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, mcpCodeInvalidRequest, "1") // before initialize
	expect(`{"jsonrpc":"2.0","id":2,"method":`, mcpCodeParse, "null")
	expect(`not json at all`, mcpCodeParse, "null")
	expect(`{"id":3,"method":"ping"}`, mcpCodeInvalidRequest, "3")
	expect(`[]`, mcpCodeInvalidRequest, "null")
	// A 2025-03-26 session takes batches, notifications in them too.
	s.send(t, "["+initMsg(10, "2025-03-26")+","+initializedMsg+"]")
	var batch []json.RawMessage
	if err := json.Unmarshal(s.answer(t), &batch); err != nil || len(batch) != 1 || decodeMsg(t, batch[0]).Error != nil {
		t.Fatalf("batch initialize: %v %s", err, batch)
	}
	s.send(t, `[{"jsonrpc":"2.0","id":11,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}},{"jsonrpc":"2.0","id":11,"method":"ping"},{"bad":1}]`)
	batch = nil
	if err := json.Unmarshal(s.answer(t), &batch); err != nil || len(batch) != 3 {
		t.Fatalf("batch: %v %s", err, batch)
	}
	got := responses(t, batch)
	if got["11"].Error != nil || got["null"].Error == nil {
		t.Fatalf("batch answers: %s", batch)
	}
	expect(`{"jsonrpc":"2.0","id":12,"method":"tools/frobnicate"}`, mcpCodeMethodNotFound, "12")
	expect(`{"jsonrpc":"2.0","id":13,"method":"prompts/list"}`, mcpCodeMethodNotFound, "13")
	expect(`{"jsonrpc":"2.0","id":14,"method":"tools/list"}`, 0, "")
	if bad := s.invalid(); len(bad) > 0 {
		t.Fatal(bad)
	}
}

// TestMCPStdioBatchesEndWith20250618: from 2025-06-18 on a batch is
// answered with -32600 and the session goes on.
func TestMCPStdioBatchesEndWith20250618(t *testing.T) {
	fx := newMCPFixture(t)
	s := serveRawStdio(t, func(ctx context.Context, tr *MCPStdioTransport) error { return fx.server.Run(ctx, tr) })
	s.send(t, initMsg(1, "2025-06-18"))
	s.answer(t)
	s.send(t, "["+pingMsg+"]")
	if m := decodeMsg(t, s.answer(t)); m.Error == nil || m.Error.Code != mcpCodeInvalidRequest || !strings.Contains(m.Error.Message, "2025-06-18") {
		t.Fatalf("%+v", m)
	}
	s.send(t, pingMsg)
	if m := decodeMsg(t, s.answer(t)); m.Error != nil {
		t.Fatal(m.Error)
	}
}

var _ = mcp.DefaultPageSize

// panicSearch is a ToolSearch that panics: a stand-in for any bug below
// the MCP handlers that toolenv's pipeline does not already recover.
type panicSearch struct{}

func (panicSearch) Update([]*toolenv.Tool) {}

func (panicSearch) Search(context.Context, string, int, string) ([]string, []string, error) {
	panic("a bug in the search")
}

// TestMCPRecoversPanics: a panic in a handler that runs in one of the
// SDK's goroutines (search_tools is not a pipeline call, so invoke's
// Recover does not cover it) is answered with -32603 and the session
// and the process go on, over both transports.
func TestMCPRecoversPanics(t *testing.T) {
	fx := newMCPFixtureWith(t, MCPOptions{Search: panicSearch{}, SearchAbove: 1})
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"weather"}}}`
	t.Run("http", func(t *testing.T) {
		c := newRawHTTP(fx.httpServer(t).URL)
		sid := c.openSession(t, "2025-11-25")
		a := c.do(t, http.MethodPost, sid, call, nil)
		checkAnswer(t, a)
		if r := responses(t, a.msgs)["5"]; r.Error == nil || r.Error.Code != mcpCodeInternal || !strings.Contains(r.Error.Message, "bug in toolenv") {
			t.Fatalf("%d %s", a.status, a.body)
		}
		if a := c.do(t, http.MethodPost, sid, pingMsg, nil); responses(t, a.msgs)[`"p"`].Error != nil {
			t.Fatalf("ping after: %s", a.body)
		}
	})
	t.Run("stdio", func(t *testing.T) {
		s := serveRawStdio(t, func(ctx context.Context, tr *MCPStdioTransport) error { return fx.server.Run(ctx, tr) })
		s.send(t, initMsg(1, "2025-11-25"))
		s.answer(t)
		s.send(t, call)
		if m := decodeMsg(t, s.answer(t)); m.Error == nil || m.Error.Code != mcpCodeInternal {
			t.Fatalf("%+v %s", m.Error, m.Result)
		}
		s.send(t, pingMsg)
		if m := decodeMsg(t, s.answer(t)); m.Error != nil {
			t.Fatal(m.Error)
		}
	})
}
