package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// This file holds a raw MCP client for tests: it sends JSON-RPC exactly
// as written, over streamable HTTP or stdio, and checks that every
// answer is valid JSON-RPC (validJSONRPC), so tests can send what the
// SDKs' clients never would.

// rawAnswer is what one HTTP exchange returned.
type rawAnswer struct {
	status int
	header http.Header
	body   []byte
	msgs   []json.RawMessage // the JSON-RPC messages of the body (JSON or SSE)
}

// rawHTTP posts raw MCP messages to a /mcp endpoint.
type rawHTTP struct {
	url    string // …/mcp
	client *http.Client
}

func newRawHTTP(base string) *rawHTTP {
	return &rawHTTP{url: base + "/mcp", client: &http.Client{Timeout: 60 * time.Second}}
}

// do sends one HTTP request to /mcp. hdr may set or (with "") remove
// headers; by default a POST has the Content-Type and Accept a
// streamable-HTTP client sends.
func (c *rawHTTP) do(t testing.TB, method, session, body string, hdr map[string]string) rawAnswer {
	t.Helper()
	a, err := c.try(method, session, body, hdr)
	if err != nil {
		t.Fatalf("%s /mcp %s: %v", method, short([]byte(body)), err)
	}
	return a
}

func (c *rawHTTP) try(method, session, body string, hdr map[string]string) (rawAnswer, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.url, rd)
	if err != nil {
		return rawAnswer{}, err
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	if method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	}
	if session != "" {
		req.Header.Set(mcpSessionHeader, session)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return rawAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return rawAnswer{}, err
	}
	a := rawAnswer{status: resp.StatusCode, header: resp.Header, body: b}
	a.msgs, err = splitMessages(resp.Header.Get("Content-Type"), b)
	return a, err
}

// splitMessages reads the JSON-RPC messages of a body: an SSE stream's
// data lines, or a JSON message or batch.
func splitMessages(ctype string, b []byte) ([]json.RawMessage, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, nil
	}
	if strings.HasPrefix(ctype, "text/event-stream") {
		var out []json.RawMessage
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.TrimSpace(data) != "" {
				out = append(out, json.RawMessage(strings.TrimSpace(data)))
			}
		}
		return out, sc.Err()
	}
	if !strings.HasPrefix(ctype, "application/json") {
		return nil, fmt.Errorf("a body of type %q: %s", ctype, short(b))
	}
	if b[0] == '[' {
		var out []json.RawMessage
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, err
		}
		return out, nil
	}
	return []json.RawMessage{b}, nil
}

// validJSONRPC checks that raw is one JSON-RPC 2.0 message the server may
// send: a response (an "id", exactly one of result and error, an error
// with a non-zero integer code and a message) or a request or
// notification (a method), or an array of them.
func validJSONRPC(raw []byte) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var arr []json.RawMessage
		if err := json.Unmarshal(raw, &arr); err != nil {
			return fmt.Errorf("not JSON: %v", err)
		}
		if len(arr) == 0 {
			return fmt.Errorf("an empty array")
		}
		for _, m := range arr {
			if err := validJSONRPC(m); err != nil {
				return fmt.Errorf("in a batch: %w", err)
			}
		}
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("not a JSON object: %v: %s", err, short(raw))
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		return fmt.Errorf(`"jsonrpc" is %s, not "2.0": %s`, m["jsonrpc"], short(raw))
	}
	if method, ok := m["method"]; ok {
		var s string
		if json.Unmarshal(method, &s) != nil || s == "" {
			return fmt.Errorf("a method that is not a string: %s", short(raw))
		}
		return nil
	}
	id, hasID := m["id"]
	if !hasID {
		return fmt.Errorf(`a response without "id": %s`, short(raw))
	}
	var idv any
	if err := json.Unmarshal(id, &idv); err != nil {
		return err
	}
	switch idv.(type) {
	case nil, string, float64:
	default:
		return fmt.Errorf("id %s is neither a string, a number nor null", id)
	}
	res, hasRes := m["result"]
	e, hasErr := m["error"]
	if hasRes == hasErr {
		return fmt.Errorf("a response must hold exactly one of result and error: %s", short(raw))
	}
	if hasRes {
		if len(res) == 0 || res[0] != '{' {
			return fmt.Errorf("an MCP result must be an object: %s", short(raw))
		}
		return nil
	}
	var we struct {
		Code    *json.Number `json:"code"`
		Message *string      `json:"message"`
	}
	if err := json.Unmarshal(e, &we); err != nil || we.Code == nil || we.Message == nil {
		return fmt.Errorf("an error without an integer code and a message: %s", short(raw))
	}
	code, err := we.Code.Int64()
	if err != nil || code == 0 {
		return fmt.Errorf("error code %s is not a JSON-RPC code: %s", we.Code, short(raw))
	}
	return nil
}

// checkAnswer fails the test unless every message of a is valid JSON-RPC.
func checkAnswer(t testing.TB, a rawAnswer) {
	t.Helper()
	for _, m := range a.msgs {
		if err := validJSONRPC(m); err != nil {
			t.Fatalf("HTTP %d: %v", a.status, err)
		}
	}
}

// rpcMsg is a decoded JSON-RPC message.
type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeMsg(t testing.TB, raw json.RawMessage) rpcMsg {
	t.Helper()
	var m rpcMsg
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return m
}

// responses returns the responses of a by id (as its JSON text).
func responses(t testing.TB, msgs []json.RawMessage) map[string]rpcMsg {
	t.Helper()
	out := map[string]rpcMsg{}
	for _, raw := range msgs {
		if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
			var arr []json.RawMessage
			json.Unmarshal(raw, &arr)
			for k, v := range responses(t, arr) {
				out[k] = v
			}
			continue
		}
		m := decodeMsg(t, raw)
		if m.Method == "" {
			out[string(m.ID)] = m
		}
	}
	return out
}

func initMsg(id any, version string) string {
	b, _ := json.Marshal(id)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, b, version)
}

const initializedMsg = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// openSession initializes an HTTP session at version and returns its id.
func (c *rawHTTP) openSession(t testing.TB, version string) string {
	t.Helper()
	a := c.do(t, http.MethodPost, "", initMsg(1, version), nil)
	checkAnswer(t, a)
	id := a.header.Get(mcpSessionHeader)
	if a.status != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s", a.status, a.body)
	}
	if a := c.do(t, http.MethodPost, id, initializedMsg, map[string]string{"Mcp-Protocol-Version": version}); a.status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", a.status, a.body)
	}
	return id
}

// rawStdio drives a server over MCPStdioTransport with raw lines.
type rawStdio struct {
	in    *io.PipeWriter
	lines chan []byte
	done  chan error
	mu    sync.Mutex
	bad   []string
}

// serveRawStdio connects srv over MCPStdioTransport on pipes; the server
// runs until the test ends (or in is closed).
func serveRawStdio(t testing.TB, run func(ctx context.Context, tr *MCPStdioTransport) error) *rawStdio {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &rawStdio{in: inW, lines: make(chan []byte, 1024), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		err := run(ctx, &MCPStdioTransport{Reader: inR, Writer: outW})
		outW.Close()
		s.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 32<<20)
		for sc.Scan() {
			line := append([]byte(nil), sc.Bytes()...)
			if err := validJSONRPC(line); err != nil {
				s.mu.Lock()
				s.bad = append(s.bad, err.Error())
				s.mu.Unlock()
			}
			s.lines <- line
		}
		close(s.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Error("the stdio server did not stop at the end of its input")
		}
	})
	return s
}

func (s *rawStdio) send(t testing.TB, line string) {
	t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		t.Fatalf("write %s: %v", short([]byte(line)), err)
	}
}

// next returns the next line the server wrote.
func (s *rawStdio) next(t testing.TB) []byte {
	t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			t.Fatal("the server closed its output")
		}
		return l
	case <-time.After(60 * time.Second):
		t.Fatal("no answer within a minute")
	}
	return nil
}

// answer returns the next line that is not a notification.
func (s *rawStdio) answer(t testing.TB) []byte {
	t.Helper()
	for {
		l := s.next(t)
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("{")) || decodeMsg(t, l).Method == "" {
			return l
		}
	}
}

func (s *rawStdio) invalid() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bad...)
}
