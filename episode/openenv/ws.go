package openenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/coder/websocket"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/server/guard"
)

// The WebSocket error codes of OpenEnv's WSErrorCode.
const (
	codeInvalidJSON = "INVALID_JSON"
	codeUnknownType = "UNKNOWN_TYPE"
	codeValidation  = "VALIDATION_ERROR"
	codeExecution   = "EXECUTION_ERROR"
	codeCapacity    = "CAPACITY_REACHED"
	codeSession     = "SESSION_ERROR"
)

type wsMessage struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// wsSession is one WebSocket connection: at most one episode at a time.
type wsSession struct {
	h         *handler
	conn      *websocket.Conn
	principal string
	client    string
	episode   string
}

// errClientGone is why a step is cut when its WebSocket closes under it.
var errClientGone = errors.New("the client's WebSocket closed")

// serveWS serves one WebSocket. A reader takes the client's messages
// while the loop below answers them one at a time, so that a client gone
// in the middle of a step cuts the step (its calls are cancelled and it
// does not happen). The connection is closed when no message came for
// WSIdle while no answer was due, and WSMaxLifetime after it opened.
func (h *handler) serveWS(w http.ResponseWriter, r *http.Request) {
	client := guard.ClientKey(r)
	if !h.wsEnter(client) {
		w.Header().Set("Retry-After", "1")
		writeDetail(w, http.StatusTooManyRequests, fmt.Sprintf("this client holds %d WebSockets open, the most it may (%s)", h.opts.MaxWSPerClient, MaxWSPerClientFlag),
			"close WebSockets you no longer use (each holds one episode), or use POST /reset and /step; the server's operator can raise "+MaxWSPerClientFlag, "rate_limited")
		return
	}
	defer h.wsLeave(client)
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept answered
	}
	conn.SetReadLimit(h.opts.MaxBodyBytes)
	s := &wsSession{h: h, conn: conn, principal: principal(r), client: client}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	defer cancel(nil)
	defer func() {
		s.end(context.WithoutCancel(ctx))
		conn.CloseNow()
	}()
	msgs := make(chan []byte)
	go func() { // the reader
		defer close(msgs)
		for {
			typ, data, err := conn.Read(ctx)
			if err != nil {
				cancel(errClientGone)
				return
			}
			if typ != websocket.MessageText {
				data = nil // answered as an error below
			}
			select {
			case msgs <- data:
			case <-ctx.Done():
				return
			}
		}
	}()
	var life <-chan time.Time
	if h.opts.WSMaxLifetime > 0 {
		t := time.NewTimer(h.opts.WSMaxLifetime)
		defer t.Stop()
		life = t.C
	}
	var idle *time.Timer
	var idleC <-chan time.Time
	if h.opts.WSIdle > 0 {
		idle = time.NewTimer(h.opts.WSIdle)
		defer idle.Stop()
		idleC = idle.C
	}
	for {
		var data []byte
		var ok bool
		select {
		case data, ok = <-msgs:
			if !ok {
				return // closed by the client, or gone
			}
		case <-idleC:
			conn.Close(websocket.StatusPolicyViolation, fmt.Sprintf("no message for %s (%s)", h.opts.WSIdle, WSIdleFlag))
			return
		case <-life:
			conn.Close(websocket.StatusPolicyViolation, fmt.Sprintf("open for %s (%s): reconnect", h.opts.WSMaxLifetime, WSMaxLifetimeFlag))
			return
		}
		if idle != nil {
			idle.Stop()
		}
		var reply any
		closeNow := false
		if data == nil {
			reply = errorMsg("binary messages are not read: send JSON text", codeInvalidJSON, "")
		} else {
			reply, closeNow = s.handle(ctx, data)
		}
		if ctx.Err() != nil {
			return
		}
		if reply != nil {
			if err := s.send(ctx, reply); err != nil {
				return
			}
		}
		if closeNow {
			conn.Close(websocket.StatusNormalClosure, "closed")
			return
		}
		if idle != nil {
			idle.Reset(h.opts.WSIdle)
		}
	}
}

// wsEnter counts a WebSocket of client, unless it holds its most.
func (h *handler) wsEnter(client string) bool {
	h.wsMu.Lock()
	defer h.wsMu.Unlock()
	if h.opts.MaxWSPerClient > 0 && h.wsClients[client] >= h.opts.MaxWSPerClient {
		return false
	}
	h.wsClients[client]++
	return true
}

func (h *handler) wsLeave(client string) {
	h.wsMu.Lock()
	defer h.wsMu.Unlock()
	if h.wsClients[client]--; h.wsClients[client] <= 0 {
		delete(h.wsClients, client)
	}
}

// observation is an observation message, its data encoded by encode.
type observation struct{ data *result }

func (s *wsSession) send(ctx context.Context, v any) error {
	if o, ok := v.(observation); ok {
		data, err := encode(o.data)
		if err == nil {
			b := make([]byte, 0, len(data)+32)
			b = append(b, `{"type":"observation","data":`...)
			b = append(append(b, data...), '}')
			return s.conn.Write(ctx, websocket.MessageText, b)
		}
		v = errorMsg("the response does not encode: "+err.Error(), codeExecution, "")
	}
	b, err := toolenv.MarshalJSONNoHTML(v)
	if err != nil {
		b, _ = json.Marshal(errorMsg("the response does not encode: "+err.Error(), codeExecution, ""))
	}
	return s.conn.Write(ctx, websocket.MessageText, b)
}

// end closes the connection's episode.
func (s *wsSession) end(ctx context.Context) {
	if s.episode == "" {
		return
	}
	_ = s.h.eps.End(ctx, s.principal, s.episode)
	s.episode = ""
}

func errorMsg(msg, code, hint string) map[string]any {
	data := map[string]any{"message": msg, "code": code}
	if hint != "" {
		data["hint"] = hint
	}
	return map[string]any{"type": "error", "data": data}
}

// errorFor is an episode error as a WebSocket error message.
func errorFor(err error) map[string]any {
	msg, hint := split(err)
	code := codeExecution
	switch {
	case errors.Is(err, episode.ErrFull):
		code = codeCapacity
	case errors.Is(err, episode.ErrConflict):
		code = codeSession
	default:
		switch toolenv.StatusOf(err) {
		case toolenv.StatusInvalidArguments, toolenv.StatusUnknownTool, toolenv.StatusBadRequest:
			code = codeValidation
		}
	}
	m := errorMsg(msg, code, hint)
	m["data"].(map[string]any)["status"] = string(toolenv.StatusOf(err))
	return m
}

// handle answers one message; closeNow ends the connection after the
// answer.
func (s *wsSession) handle(ctx context.Context, data []byte) (reply any, closeNow bool) {
	var m wsMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return errorMsg("Invalid JSON: "+err.Error(), codeInvalidJSON, ""), false
	}
	switch m.Type {
	case "reset":
		o, err := episode.ParseResetOptions(m.Data)
		if err != nil {
			return errorFor(err), false
		}
		s.end(ctx) // OpenEnv: a reset starts the session's environment anew
		o.Client = s.client
		sr, err := s.h.eps.Reset(ctx, s.principal, o)
		if err != nil {
			return errorFor(err), false
		}
		s.episode = sr.Observation.EpisodeID
		return observation{toResult(sr)}, false
	case "step":
		if len(m.Data) == 0 || string(m.Data) == "null" {
			return errorMsg("a step message needs data: the action", codeValidation, `send {"type": "step", "data": {"type": "call_tool", "tool_name": "...", "arguments": {...}}}`), false
		}
		a, err := episode.ParseAction(m.Data)
		if err != nil {
			return errorFor(err), false
		}
		if s.episode == "" {
			return errorMsg("no episode: send a reset message first", codeExecution, `send {"type": "reset", "data": {"collection": "...", "task_id": "..."}}`), false
		}
		sr, err := s.h.eps.Step(ctx, s.principal, s.episode, a)
		if err != nil {
			return errorFor(err), false
		}
		return observation{toResult(sr)}, false
	case "state":
		if s.episode == "" {
			return map[string]any{"type": "state", "data": map[string]any{"episode_id": nil, "step_count": 0}}, false
		}
		st, err := s.h.eps.State(ctx, s.principal, s.episode)
		if err != nil {
			return errorFor(err), false
		}
		return map[string]any{"type": "state", "data": st}, false
	case "close":
		s.end(ctx)
		return nil, true
	case "mcp":
		return map[string]any{"type": "mcp", "data": s.mcp(ctx, m.Data)}, false
	}
	return errorMsg(fmt.Sprintf("Unknown message type: %s", m.Type), codeUnknownType, "the message types are reset, step, state, close and mcp"), false
}

// mcp answers a JSON-RPC tools/list or tools/call on the connection's
// episode (OpenEnv's "mcp" message).
func (s *wsSession) mcp(ctx context.Context, raw json.RawMessage) map[string]any {
	var req struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
		ID      any             `json:"id"`
	}
	fail := func(code int, msg string) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": code, "message": msg}, "id": req.ID}
	}
	if err := json.Unmarshal(raw, &req); err != nil || req.Method == "" {
		return fail(-32600, "Invalid request: an mcp message's data is a JSON-RPC request with a method")
	}
	if s.episode == "" {
		return fail(-32600, "no episode: send a reset message first")
	}
	var action []byte
	switch req.Method {
	case "tools/list":
		action = []byte(`{"type":"list_tools"}`)
	case "tools/call":
		var p struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil || p.Name == "" {
			return fail(-32602, "Missing 'name' in params")
		}
		args := p.Args
		if len(args) == 0 {
			args = []byte("{}")
		}
		b, _ := json.Marshal(map[string]any{"type": "call_tool", "tool_name": p.Name, "arguments": args})
		action = b
	default:
		return fail(-32601, "Method not found: "+req.Method)
	}
	a, err := episode.ParseAction(action)
	if err != nil {
		msg, _ := split(err)
		return fail(-32602, msg)
	}
	sr, err := s.h.eps.Step(ctx, s.principal, s.episode, a)
	if err != nil {
		msg, _ := split(err)
		code := -32603
		if st := toolenv.StatusOf(err); st == toolenv.StatusInvalidArguments || st == toolenv.StatusUnknownTool || st == toolenv.StatusBadRequest {
			code = -32602
		}
		return fail(code, msg)
	}
	var res any
	if req.Method == "tools/list" {
		res = map[string]any{"tools": sr.Observation.Tools}
	} else {
		res = callToolResult(sr)
	}
	return map[string]any{"jsonrpc": "2.0", "result": res, "id": req.ID}
}

// callToolResult is a tools/call step's answer in the shape OpenEnv's
// server gives the WebSocket mcp message (its MCP client's
// CallToolResult: content, structured_content, data, is_error), with
// the step's reward, done and info in meta.
func callToolResult(sr *episode.StepResult) map[string]any {
	meta := map[string]any{"reward": sr.Reward, "done": sr.Done, "truncated": sr.Truncated, "info": sr.Info, "episode_id": sr.Observation.EpisodeID}
	if r := sr.Observation.Result; r != nil {
		out := map[string]any{"content": r.Content, "is_error": r.IsError, "data": r.Data, "structured_content": r.StructuredContent, "meta": meta}
		if r.Data == nil {
			out["data"] = nil
		}
		meta["status"], meta["label"] = r.Status, r.Label
		if r.InfraFailure != "" {
			meta["infra_failure"] = r.InfraFailure
		}
		if r.Injected {
			meta["injected"] = true
		}
		if r.StructuredContent == nil {
			out["structured_content"] = nil
		}
		return out
	}
	// A final answer (tools/call of submit_answer).
	data := map[string]any{"reward": sr.Reward, "done": sr.Done, "outcome": sr.Observation.Outcome, "return": sr.Info.Return}
	text := fmt.Sprintf("The episode is done after %d steps: reward %g.", sr.Info.Step, deref(sr.Reward))
	return map[string]any{"content": []episode.Content{{Type: "text", Text: text}}, "is_error": false, "data": data, "structured_content": data, "meta": meta}
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}
