package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// mcpKnownMethods are the methods a client may send an MCP server (every
// revision the go-sdk speaks). A request for any other method is answered
// -32601 by mcpHTTP, as stdio's transport answers it; a notification of
// another method is dropped, as JSON-RPC asks.
var mcpKnownMethods = map[string]bool{
	"initialize": true, "ping": true, "server/discover": true,
	"tools/list": true, "tools/call": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "subscriptions/listen": true,
	"prompts/list": true, "prompts/get": true, "completion/complete": true, "logging/setLevel": true,
	"notifications/initialized": true, "notifications/cancelled": true,
	"notifications/progress": true, "notifications/roots/list_changed": true,
}

// mcpMetaProtocolVersion is the _meta key of the 2026-07-28 sessionless
// protocol's requests, which need no session.
const mcpMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// mcpHTTP puts the streamable-HTTP transport's answers to the letter of
// MCP and JSON-RPC in front of the SDK's handler (next):
//
//   - a POST body that is not JSON is answered 400 with error -32700, a
//     message that is not JSON-RPC 2.0 with -32600;
//   - a POST without Mcp-Session-Id that is not an initialize (nor a
//     server/discover or a request of the sessionless 2026-07-28
//     protocol, which the SDK answers) is answered 400 with -32600: the
//     session id the server returned for initialize is required;
//   - a request for a method MCP does not have is answered 200 with
//     -32601 (the SDK answers 400 text/plain), a notification of one is
//     dropped (202);
//   - every error the handler behind it answers in text or in toolenv's
//     own error JSON (unknown session 404, wrong Accept 400, a batch
//     where the protocol has none 400, 405, the session cap's 503) is
//     rewritten as a JSON-RPC error response: -32600 for a 4xx, -32603
//     for a 5xx, with the request's id when the body held one request.
type mcpHTTP struct {
	next        http.Handler // sessions: initialize, Mcp-Session-Id
	sessionless http.Handler // the 2026-07-28 protocol; nil: none
	max         int64
	log         *slog.Logger
	args        *MCPArguments // large arguments read ahead of the SDK; nil: none
}

func (h *mcpHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ew := &mcpErrorWriter{ResponseWriter: w}
	defer ew.finish()
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := readBody(r, h.max)
		r.Body.Close()
		switch {
		case err != nil:
			ew.fail(http.StatusBadRequest, mcpCodeInvalidRequest, "could not read the request body: "+err.Error())
			return
		case int64(len(body)) > h.max:
			ew.fail(http.StatusRequestEntityTooLarge, mcpCodeInvalidRequest, fmt.Sprintf("request body over the server's limit of %d bytes (--max-body): send smaller messages", h.max))
			return
		}
		// Large arguments are read first (the rest of the message is
		// then checked without them): see MCPArguments. Not when
		// Mcp-Param-* headers (2026-07-28) are to be checked against
		// them by the SDK.
		release := func() {}
		if !mcpParamHeaders(r.Header) {
			body, release = h.args.stash(body)
		}
		defer release()
		body, sessionless, ok := h.check(ew, r, body)
		if !ok {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		if sessionless && h.sessionless != nil {
			h.sessionless.ServeHTTP(ew, r)
			return
		}
	}
	h.next.ServeHTTP(ew, r)
}

// mcpSessionless reports whether a POST without Mcp-Session-Id is for the
// sessionless protocol (2026-07-28 and later): its Mcp-Protocol-Version
// header names such a revision, a request carries the protocol version
// in its _meta (which only that protocol does; the SDK checks it against
// the header), or it holds server/discover only, which lists every
// revision the server speaks.
func mcpSessionless(r *http.Request, msgs []jsonrpc.Message) bool {
	if r.Header.Get(mcpSessionHeader) != "" {
		return false
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v >= mcpVersionSessionless {
		return true
	}
	discover := len(msgs) > 0
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			return false
		}
		if mcpHasMeta(req.Params, mcpMetaProtocolVersion) {
			return true
		}
		discover = discover && req.Method == "server/discover"
	}
	return discover
}

// MCPSessionless reports whether a POST (its body given) is a request of
// the sessionless MCP protocol (2026-07-28 and later), which
// NewMCPHandler serves without sessions: no Mcp-Session-Id, and a
// Mcp-Protocol-Version header naming such a revision, the protocol
// version in a request's _meta, or server/discover alone.
func MCPSessionless(r *http.Request, body []byte) bool {
	if r.Header.Get(mcpSessionHeader) != "" {
		return false
	}
	body = bytes.TrimSpace(body)
	var raws []json.RawMessage
	if len(body) > 0 && body[0] == '[' {
		if json.Unmarshal(body, &raws) != nil {
			return false
		}
	} else {
		raws = []json.RawMessage{body}
	}
	msgs := make([]jsonrpc.Message, 0, len(raws))
	for _, raw := range raws {
		msg, _, _, _ := peekMCPMessage(raw)
		if msg == nil {
			return false
		}
		msgs = append(msgs, msg)
	}
	return mcpSessionless(r, msgs)
}

// mcpVersionSessionless is the first protocol revision without sessions.
const mcpVersionSessionless = "2026-07-28"

// check reads the messages of a POST body and answers what the SDK would
// answer off the letter. It returns the body to pass on (without
// notifications of unknown methods) and whether it is for the sessionless
// protocol, or false when it answered.
func (h *mcpHTTP) check(w *mcpErrorWriter, r *http.Request, body []byte) (out []byte, sessionless, ok bool) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		w.fail(http.StatusBadRequest, mcpCodeInvalidRequest, "the POST has no body: send a JSON-RPC message")
		return nil, false, false
	}
	batch := body[0] == '['
	var raws []json.RawMessage
	if batch {
		if err := json.Unmarshal(body, &raws); err != nil {
			w.fail(http.StatusBadRequest, mcpCodeParse, "parse error: the body is not JSON: "+err.Error())
			return nil, false, false
		}
		if len(raws) == 0 {
			w.fail(http.StatusBadRequest, mcpCodeInvalidRequest, "an empty batch: send at least one message")
			return nil, false, false
		}
	} else {
		raws = []json.RawMessage{body}
	}
	all := make([]jsonrpc.Message, 0, len(raws))
	for i, raw := range raws {
		msg, id, code, why := peekMCPMessage(raw)
		if msg == nil {
			if batch {
				why = fmt.Sprintf("message %d of the batch: %s; nothing in the batch was processed", i+1, why)
				id = jsonrpc.ID{}
			}
			w.id = id
			w.fail(http.StatusBadRequest, code, why)
			return nil, false, false
		}
		all = append(all, msg)
	}
	if !batch {
		if req, ok := all[0].(*jsonrpc.Request); ok && req.IsCall() {
			w.id = req.ID
		}
	}
	if r.Header.Get(mcpSessionHeader) == "" {
		if why := mcpNeedsSession(r, all); why != "" {
			w.fail(http.StatusBadRequest, mcpCodeInvalidRequest, why)
			return nil, false, false
		}
	}
	msgs := all[:0:0]
	var kept []json.RawMessage  // the raw messages of msgs
	var rejected []mcpRejection // calls answered here
	dropped := false
	for i, msg := range all {
		req, ok := msg.(*jsonrpc.Request)
		if ok && !mcpKnownMethods[req.Method] {
			if req.IsCall() {
				rejected = append(rejected, mcpRejection{req, &jsonrpc.Error{Code: mcpCodeMethodNotFound,
					Message: fmt.Sprintf("method %q not found: MCP has no such method", req.Method)}})
			} else {
				dropped = true // a notification nobody handles: ignored
			}
			continue
		}
		if ok && req.IsCall() {
			if err := mcpCheckParams(req); err != nil {
				rejected = append(rejected, mcpRejection{req, err})
				continue
			}
		}
		msgs = append(msgs, msg)
		kept = append(kept, raws[i])
	}
	if len(rejected) > 0 {
		status := http.StatusOK
		if !batch && mcpSessionless(r, all) && rejected[0].err.Code == mcpCodeMethodNotFound {
			// MCP 2026-07-28 answers an unknown method with HTTP 404.
			status = http.StatusNotFound
		}
		h.answerRejected(w, batch, rejected, msgs, status)
		return nil, false, false
	}
	if len(msgs) == 0 { // only notifications of unknown methods
		w.WriteHeader(http.StatusAccepted)
		return nil, false, false
	}
	sessionless = mcpSessionless(r, msgs)
	if !dropped || !batch {
		return body, sessionless, true
	}
	out = []byte{'['}
	for i, raw := range kept {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, raw...)
	}
	return append(out, ']'), sessionless, true
}

// peekMCPMessage reads what mcpHTTP needs of a message — its kind, id,
// method and params — with the standard decoder (the SDK's allocates tens
// of kilobytes per message, and decodes the body again anyway), refusing
// what the SDK's decoder refuses. Results are not decoded.
func peekMCPMessage(raw []byte) (msg jsonrpc.Message, id jsonrpc.ID, code int, why string) {
	var m struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      any             `json:"id"`
		Method  *string         `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	raw = bytes.TrimSpace(raw)
	if !json.Valid(raw) {
		return nil, jsonrpc.ID{}, mcpCodeParse, "parse error: the message is not JSON"
	}
	invalid := func(what string) (jsonrpc.Message, jsonrpc.ID, int, string) {
		return nil, id, mcpCodeInvalidRequest, "invalid request: not a JSON-RPC 2.0 message (" + what + "); send {\"jsonrpc\": \"2.0\", \"id\": …, \"method\": …, \"params\": {…}}"
	}
	if len(raw) == 0 || raw[0] != '{' {
		return invalid("not an object")
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		var probe struct {
			ID any `json:"id"`
		}
		if json.Unmarshal(raw, &probe) == nil {
			id, _ = jsonrpc.MakeID(probe.ID)
		}
		return invalid(err.Error())
	}
	id, err := jsonrpc.MakeID(m.ID)
	if err != nil {
		return invalid("the id must be a string, a number or null")
	}
	if m.JSONRPC == nil || *m.JSONRPC != "2.0" {
		return invalid(`"jsonrpc" must be "2.0"`)
	}
	if m.Method != nil {
		return &jsonrpc.Request{ID: id, Method: *m.Method, Params: m.Params}, id, 0, ""
	}
	if !id.IsValid() {
		return invalid("neither a method nor an id")
	}
	return &jsonrpc.Response{ID: id}, id, 0, ""
}

// mcpNeedsSession says why a POST without Mcp-Session-Id cannot be
// served, or "" when it can: it opens a session (initialize), probes the
// server (server/discover), or speaks the sessionless protocol.
func mcpNeedsSession(r *http.Request, msgs []jsonrpc.Message) string {
	if v := r.Header.Get("Mcp-Protocol-Version"); v >= mcpVersionSessionless {
		return "" // the SDK answers the sessionless protocol
	}
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			return "a response needs the session it answers: send the Mcp-Session-Id header"
		}
		switch {
		case req.Method == "initialize" || req.Method == "server/discover":
			continue
		case mcpHasMeta(req.Params, mcpMetaProtocolVersion):
			continue
		}
		return fmt.Sprintf("%s needs the session: send the Mcp-Session-Id header the server returned for initialize (a new session starts with an initialize POST without it)", req.Method)
	}
	return ""
}

// mcpHasMeta reports whether params holds _meta[key].
func mcpHasMeta(params json.RawMessage, key string) bool {
	if !bytes.Contains(params, []byte(key)) {
		return false
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	_, ok := p.Meta[key]
	return ok
}

// mcpRejection is a request answered with an error before the SDK sees
// it.
type mcpRejection struct {
	req *jsonrpc.Request
	err *jsonrpc.Error
}

// answerRejected answers a POST holding requests answered here (an
// unknown method, params the SDK would refuse with no code): the error,
// or for a batch an array answering each of its requests (the others
// unprocessed, -32600).
func (h *mcpHTTP) answerRejected(w *mcpErrorWriter, batch bool, rejected []mcpRejection, others []jsonrpc.Message, status int) {
	var out []byte
	if !batch {
		out = mcpErrorJSON(rejected[0].req.ID, int(rejected[0].err.Code), rejected[0].err.Message)
	} else {
		out = []byte{'['}
		for i, r := range rejected {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, mcpErrorJSON(r.req.ID, int(r.err.Code), r.err.Message)...)
		}
		for _, m := range others {
			if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
				out = append(out, ',')
				out = append(out, mcpErrorJSON(req.ID, mcpCodeInvalidRequest,
					fmt.Sprintf("not processed: the batch also held an invalid request (%s: %s); send it without that request", rejected[0].req.Method, rejected[0].err.Message))...)
			}
		}
		out = append(out, ']')
	}
	w.Header().Set("Content-Type", "application/json")
	w.ResponseWriter.WriteHeader(status)
	w.written = true
	w.Write(out)
}

// mcpErrorWriter rewrites an error answer (status 400 or more) that is not
// a JSON-RPC message into one (see mcpHTTP). Other answers, streams among
// them, pass through.
type mcpErrorWriter struct {
	http.ResponseWriter
	id      jsonrpc.ID // the id of the one request the POST held
	status  int        // an error status being held
	buf     bytes.Buffer
	written bool // the header went out
}

// WriteHeader holds an error status until finish.
func (w *mcpErrorWriter) WriteHeader(code int) {
	if w.written || w.status != 0 {
		return
	}
	if code >= 400 {
		w.status = code
		return
	}
	w.written = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *mcpErrorWriter) Write(p []byte) (int, error) {
	if !w.written && w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.status != 0 {
		if w.buf.Len() < 64<<10 {
			w.buf.Write(p)
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Flush passes a flush through, except of a held error.
func (w *mcpErrorWriter) Flush() {
	if w.status != 0 {
		return
	}
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *mcpErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// fail answers with a JSON-RPC error at once.
func (w *mcpErrorWriter) fail(status, code int, msg string) {
	if w.written || w.status != 0 {
		return
	}
	w.written = true
	h := w.ResponseWriter.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	body := mcpErrorJSON(w.id, code, msg)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.ResponseWriter.WriteHeader(status)
	w.ResponseWriter.Write(body)
}

// finish writes a held error, as it was when it is a JSON-RPC message
// already, else as one.
func (w *mcpErrorWriter) finish() {
	if w.status == 0 {
		return
	}
	status, body := w.status, bytes.TrimSpace(w.buf.Bytes())
	w.status = 0
	if isJSONRPCResponse(body) {
		w.written = true
		w.ResponseWriter.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.ResponseWriter.WriteHeader(status)
		w.ResponseWriter.Write(body)
		return
	}
	code := mcpCodeInvalidRequest
	if status >= 500 {
		code = mcpCodeInternal
	}
	w.fail(status, code, errorMessage(status, body))
}

// isJSONRPCResponse reports whether body is a JSON-RPC response (or an
// array of them).
func isJSONRPCResponse(body []byte) bool {
	if len(body) == 0 {
		return false
	}
	if body[0] == '[' {
		var raws []json.RawMessage
		if json.Unmarshal(body, &raws) != nil || len(raws) == 0 {
			return false
		}
		for _, raw := range raws {
			if !isJSONRPCResponse(raw) {
				return false
			}
		}
		return true
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return false
	}
	_, ok := msg.(*jsonrpc.Response)
	return ok
}

// errorMessage is the message of a rewritten error: the text of a text
// answer, the error and hint of toolenv's error JSON.
func errorMessage(status int, body []byte) string {
	var p struct {
		Error string `json:"error"`
		Hint  string `json:"hint"`
	}
	if json.Unmarshal(body, &p) == nil && p.Error != "" {
		if p.Hint != "" {
			return p.Error + "; " + p.Hint
		}
		return p.Error
	}
	if msg := strings.TrimSpace(string(body)); msg != "" && len(msg) < 2000 {
		return msg
	}
	return http.StatusText(status)
}

// mcpParamHeaders reports whether h holds an Mcp-Param-* header, which
// the SDK checks against a call's arguments.
func mcpParamHeaders(h http.Header) bool {
	for k := range h {
		if len(k) > len("Mcp-Param-") && strings.EqualFold(k[:len("Mcp-Param-")], "Mcp-Param-") {
			return true
		}
	}
	return false
}

// readBody reads a request's body up to max+1 bytes (one more than
// allowed, so that a longer body shows). A body of a declared length is
// read into a buffer of that size at once, rather than through
// io.ReadAll's doublings (which copy a megabyte body about twice more and
// leave as much garbage).
func readBody(r *http.Request, max int64) ([]byte, error) {
	lim := io.LimitReader(r.Body, max+1)
	if r.ContentLength <= 0 || r.ContentLength > max {
		return io.ReadAll(lim)
	}
	buf := make([]byte, r.ContentLength+1) // +1: a longer body shows
	n, err := io.ReadFull(lim, buf)
	switch err {
	case io.EOF, io.ErrUnexpectedEOF:
		return buf[:n], nil
	case nil: // longer than declared
		rest, err := io.ReadAll(lim)
		return append(buf, rest...), err
	}
	return buf[:n], err
}
