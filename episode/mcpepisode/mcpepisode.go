// Package mcpepisode serves RL episodes (package episode) over MCP: an
// MCP session is an episode. A client that connects to the episode URL
// (toolenv serve: /openenv/mcp) with the reset options in its query
// (?collection=bird-slot&task_id=bird-717, or &split=...&seed=...; the
// reward as JSON in reward=, faults in faults=) starts an episode at
// initialize. The server's instructions are the task's query and how to
// act; get_task gives them again; tools/list lists the task's tools and
// submit_answer; every tools/call is a step, and submit_answer ends the
// episode, returning its reward in structuredContent. A trainer whose
// tool layer speaks MCP needs nothing else.
//
// Each episode has its own MCP server (its tools are its task's), served
// over the project's streamable-HTTP front (server.NewMCPHandler, with
// its JSON-RPC answers for every refusal) and guarded by server.MCPGuard.
//
// Under the sessionless protocol (MCP 2026-07-28: no initialize, no
// Mcp-Session-Id) no session can be the episode: StartTool starts one
// and returns its id, a handle the client passes back as the EpisodeArg
// argument of every later call (GetTaskTool, EndTool, the task's tools,
// submit_answer), as the specification recommends for state that spans
// calls. A client asking for an older revision gets the session form.
package mcpepisode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/openai"
	"github.com/toolenv/toolenv/server"
	"github.com/toolenv/toolenv/server/guard"
)

// GetTaskTool is the tool that repeats the episode's task.
const GetTaskTool = "get_task"

// Options configure the handler.
type Options struct {
	// Version is toolenv's version, the MCP server's.
	Version string
	// MaxBodyBytes bounds a POST body (default 1 MiB).
	MaxBodyBytes int64
	// Logger logs failures; nil discards.
	Logger *slog.Logger
}

type handler struct {
	eps  *episode.Env
	opts Options
	log  *slog.Logger
	mcp  http.Handler
	// placeholder answers the protocol-version check of requests of
	// sessions already open (their own server serves them).
	placeholder *mcp.Server
	// owners are the principals episodes were issued to, by session id:
	// a request of another principal is told the session is unknown.
	owners sync.Map
	// tools are the MCP definitions of the tools episodes offered, by
	// tool (every episode of a task offers the same *toolenv.Tool
	// values): rendering a definition marshals its input schema, and
	// each MCP session's server is given every tool of its task.
	toolsMu sync.Mutex
	tools   map[*toolenv.Tool]*mcp.Tool
}

// maxCachedTools bounds handler.tools: past it (collections reloaded
// many times over) the cache starts afresh.
const maxCachedTools = 1 << 14

// tool returns t's MCP definition, shared: callers must not modify it.
func (h *handler) tool(t *toolenv.Tool) (*mcp.Tool, error) {
	h.toolsMu.Lock()
	mt := h.tools[t]
	h.toolsMu.Unlock()
	if mt != nil {
		return mt, nil
	}
	mt, err := mcpTool(t)
	if err != nil {
		return nil, err
	}
	h.toolsMu.Lock()
	if h.tools == nil || len(h.tools) >= maxCachedTools {
		h.tools = map[*toolenv.Tool]*mcp.Tool{}
	}
	h.tools[t] = mt
	h.toolsMu.Unlock()
	return mt, nil
}

type slotKey struct{}

// slot carries the server made for an initialize request to the SDK's
// getServer, which is called more than once per request.
type slot struct {
	srv *mcp.Server
	id  string
}

// NewHandler serves eps over MCP's streamable HTTP transport.
func NewHandler(eps *episode.Env, opts Options) http.Handler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	h := &handler{eps: eps, opts: opts, log: opts.Logger}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.placeholder = mcp.NewServer(&mcp.Implementation{Name: "toolenv-episode", Version: opts.Version}, nil)
	idle := eps.Idle()
	if idle <= 0 {
		idle = -1
	}
	h.mcp = server.NewMCPHandler(nil, server.MCPHTTPOptions{Logger: h.log, MaxBodyBytes: opts.MaxBodyBytes,
		SessionTimeout: idle, // a session lives as long as its episode
		GetServer: func(r *http.Request) *mcp.Server {
			if s, ok := r.Context().Value(slotKey{}).(*slot); ok && s.srv != nil {
				return s.srv
			}
			return h.placeholder
		}})
	return h
}

// ServeHTTP starts an episode for an initialize request (a POST without
// Mcp-Session-Id), then lets the MCP transport serve.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		if p, ok := h.owners.Load(sid); ok && p.(string) != guard.Principal(r.Context()) {
			// Ids are bound to the token that started the episode.
			writeRPCError(w, http.StatusNotFound, nil, -32600, "session not found: this session was not started with your token")
			return
		}
		h.mcp.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		h.mcp.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		writeRPCError(w, http.StatusRequestEntityTooLarge, nil, -32600, fmt.Sprintf("the request body could not be read: %v", err))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if code, text, bad := notJSONRPC(body); bad {
		// As OpenEnv's own POST /mcp answers what is not a JSON-RPC
		// request: 200 and a JSON-RPC error (its validator checks it).
		writeRPCError(w, http.StatusOK, nil, code, text)
		return
	}
	if server.MCPSessionless(r, body) {
		h.serveSessionless(w, r)
		return
	}
	var msg struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "initialize" {
		h.mcp.ServeHTTP(w, r) // the transport answers it (400, -32600)
		return
	}
	o, err := resetOptions(r)
	if err != nil {
		h.writeErr(w, msg.ID, err)
		return
	}
	principal := guard.Principal(r.Context())
	o.Client = guard.ClientKey(r)
	first, err := h.eps.Reset(r.Context(), principal, o)
	if err != nil {
		h.writeErr(w, msg.ID, err)
		return
	}
	id := first.Observation.EpisodeID
	srv, err := h.newServer(principal, first)
	if err != nil {
		_ = h.eps.End(context.WithoutCancel(r.Context()), principal, id)
		h.writeErr(w, msg.ID, err)
		return
	}
	h.owners.Store(id, principal)
	s := &slot{srv: srv, id: id}
	rec := &headerSpy{ResponseWriter: w}
	h.mcp.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), slotKey{}, s)))
	if rec.Header().Get("Mcp-Session-Id") != id {
		// No session was opened: the episode has no client.
		h.owners.Delete(id)
		_ = h.eps.End(context.WithoutCancel(r.Context()), principal, id)
	}
}

// notJSONRPC tells a body that is no JSON-RPC message at all (not JSON,
// or an object that is neither a request, a notification nor a
// response) and the JSON-RPC error to answer it with. A batch (a JSON
// array) and anything that looks like a message go to the transport.
func notJSONRPC(body []byte) (code int, text string, bad bool) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		return 0, "", false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return -32700, "Parse error: the body is not a JSON object", true
	}
	_, method := m["method"]
	_, result := m["result"]
	_, rpcErr := m["error"]
	if !method && !result && !rpcErr {
		return -32600, `Invalid Request: a JSON-RPC 2.0 message has a method (an MCP client starts with {"jsonrpc": "2.0", "method": "initialize", ...})`, true
	}
	return 0, "", false
}

// headerSpy lets ServeHTTP read the headers the transport wrote.
type headerSpy struct{ http.ResponseWriter }

func (h *headerSpy) Unwrap() http.ResponseWriter { return h.ResponseWriter }

func (h *headerSpy) Flush() {
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// resetOptions reads the reset options from the URL's query: each key a
// reset option, reward and faults as JSON.
func resetOptions(r *http.Request) (*episode.ResetOptions, error) {
	m := map[string]any{}
	for k, vs := range r.URL.Query() {
		v := vs[len(vs)-1]
		switch k {
		case "seed", "max_steps":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("%s=%q is not an integer", k, v), Hint: "write it in decimal, e.g. seed=7"}
			}
			m[k] = n
		case "reward", "faults":
			var x any
			if err := json.Unmarshal([]byte(v), &x); err != nil {
				return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("%s is not JSON: %v", k, err), Hint: `URL-encode a JSON object, e.g. reward={"success":"intent_f1"}`}
			}
			m[k] = x
		default:
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return episode.ParseResetOptions(b)
}

func (h *handler) writeErr(w http.ResponseWriter, id json.RawMessage, err error) {
	code := http.StatusBadRequest
	rpc := -32602
	switch {
	case errors.Is(err, episode.ErrFull):
		code, rpc = http.StatusServiceUnavailable, -32603
		w.Header().Set("Retry-After", "1")
	case toolenv.StatusOf(err) == toolenv.StatusNotFound:
		code = http.StatusNotFound
	case toolenv.StatusOf(err) == toolenv.StatusInternal:
		code, rpc = http.StatusInternalServerError, -32603
	}
	writeRPCError(w, code, id, rpc, err.Error())
}

func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// newServer makes the MCP server of one episode.
func (h *handler) newServer(principal string, first *episode.StepResult) (*mcp.Server, error) {
	obs := first.Observation
	id := obs.EpisodeID
	instructions := fmt.Sprintf("Task %s of %s.\nQuestion: %s\n\n%s\nThe episode allows %d steps (each tools/call is one); %s ends it and its result holds the reward.",
		obs.TaskID, obs.Collection, obs.Query, obs.Instructions, obs.MaxSteps, episode.SubmitTool)
	var once sync.Once
	srv := mcp.NewServer(&mcp.Implementation{Name: "toolenv-episode", Version: h.opts.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		GetSessionID: func() string { return id },
		InitializedHandler: func(ctx context.Context, req *mcp.InitializedRequest) {
			once.Do(func() {
				go func() { // the episode ends with its session (DELETE, or the client gone)
					_ = req.Session.Wait()
					h.owners.Delete(id)
					_ = h.eps.End(context.Background(), principal, id)
				}()
			})
		},
	})
	tools, err := h.eps.Tools(context.Background(), principal, id)
	if err != nil {
		return nil, err
	}
	// The task's tools are answered from the definitions h holds, not
	// registered with AddTool: AddTool marshals and decodes each input
	// schema twice to check it, per episode (a BIRD task's schemas list
	// its columns), and every trainer pays that on every reset.
	defs := make([]*mcp.Tool, 0, len(tools))
	for _, t := range tools {
		mt, err := h.tool(t)
		if err != nil {
			return nil, err
		}
		defs = append(defs, mt)
	}
	srv.AddReceivingMiddleware(server.MCPGuard(h.log), h.taskTools(principal, id, defs))
	task := map[string]any{"episode_id": id, "task_id": obs.TaskID, "collection": obs.Collection, "query": obs.Query, "instructions": obs.Instructions, "max_steps": obs.MaxSteps}
	srv.AddTool(&mcp.Tool{Name: GetTaskTool, Description: "Repeat the episode's task: the question, how to act, the step limit. It is not a step.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			st, err := h.eps.State(ctx, principal, id)
			if err != nil {
				return errorResult(err), nil
			}
			out := map[string]any{}
			for k, v := range task {
				out[k] = v
			}
			out["step"], out["done"] = st.StepCount, st.Done
			b, _ := json.Marshal(out)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: obs.Query}}, StructuredContent: json.RawMessage(b)}, nil
		})
	return srv, nil
}

// taskTools serves the task's tools, defs, in tools/list (beside the
// tools the server has, sorted by name as the SDK lists them) and
// tools/call (each call a step of episode id); any other request, and a
// call of another name, goes on to the server.
func (h *handler) taskTools(principal, id string, defs []*mcp.Tool) mcp.Middleware {
	names := make(map[string]bool, len(defs))
	for _, d := range defs {
		names[d.Name] = true
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch r := req.(type) {
			case *mcp.CallToolRequest:
				if method != "tools/call" || r.Params == nil || !names[r.Params.Name] {
					break
				}
				res := h.call(ctx, principal, id, r.Params.Name, r.Params.Arguments)
				if res.Content == nil {
					res.Content = []mcp.Content{} // as the SDK answers: never null
				}
				return res, nil
			case *mcp.ListToolsRequest:
				if method != "tools/list" {
					break
				}
				res, err := next(ctx, method, req)
				if err != nil {
					return res, err
				}
				lr, ok := res.(*mcp.ListToolsResult)
				// One page: the server's own tools (get_task) are one
				// page, and a cursor is past the task's tools too.
				if !ok || (r.Params != nil && r.Params.Cursor != "") {
					return res, nil
				}
				all := make([]*mcp.Tool, 0, len(defs)+len(lr.Tools))
				all = append(append(all, defs...), lr.Tools...)
				slices.SortStableFunc(all, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
				out := *lr
				out.Tools = all
				return &out, nil
			}
			return next(ctx, method, req)
		}
	}
}

// mcpTool is a task's tool as MCP lists it.
func mcpTool(t *toolenv.Tool) (*mcp.Tool, error) {
	raw, err := server.MCPInputSchema(t)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	mt := &mcp.Tool{Name: t.Name, Title: t.Title, Description: openai.Description(t), InputSchema: raw}
	server.StateAnnotations(mt, t)
	return mt, nil
}

// call is one tools/call: a step of the episode.
func (h *handler) call(ctx context.Context, principal, id, name string, rawArgs json.RawMessage) *mcp.CallToolResult {
	if len(bytes.TrimSpace(rawArgs)) == 0 {
		rawArgs = json.RawMessage("{}")
	}
	b, _ := json.Marshal(map[string]any{"type": "call_tool", "tool_name": name, "arguments": rawArgs})
	a, err := episode.ParseAction(b)
	if err != nil {
		return errorResult(err)
	}
	sr, err := h.eps.Step(ctx, principal, id, a)
	if err != nil {
		return errorResult(err)
	}
	em := map[string]any{"step": sr.Info.Step, "reward": sr.Reward, "return": sr.Info.Return, "done": sr.Done, "truncated": sr.Truncated}
	if sr.Info.InfraFailure != "" { // the environment failed the call (docs/episodes.md)
		em["infra_failure"] = sr.Info.InfraFailure
	}
	if sr.Info.InfraFailures > 0 {
		em["infra_failures"] = sr.Info.InfraFailures
	}
	meta := mcp.Meta{"toolenv/episode": em}
	if a.Type == episode.ActionFinalAnswer || (sr.Done && len(sr.Results) == 0) {
		out := map[string]any{"episode_id": id, "reward": sr.Reward, "return": sr.Info.Return, "done": sr.Done, "truncated": sr.Truncated,
			"success_kind": sr.Info.SuccessKind, "outcome": sr.Observation.Outcome, "steps": sr.Info.Step}
		sb, _ := json.Marshal(out)
		text := fmt.Sprintf("The episode is done after %d steps: reward %g (%s %g).", sr.Info.Step, deref(sr.Reward), sr.Info.SuccessKind, successOf(sr))
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(sb), Meta: meta}
	}
	res := server.MCPResult(sr.Results[0])
	if res.Meta == nil {
		res.Meta = mcp.Meta{}
	}
	for k, v := range meta {
		res.Meta[k] = v
	}
	if sr.Done { // the step limit ended the episode on this call
		res.Content = append(res.Content, &mcp.TextContent{Text: fmt.Sprintf("The episode reached its step limit (%d steps) and is done: reward %g.", sr.Info.Step, deref(sr.Reward))})
	}
	return res
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

func successOf(sr *episode.StepResult) float64 {
	if sr.Observation.Outcome == nil {
		return 0
	}
	return sr.Observation.Outcome.Success
}

// errorResult is an episode's refusal as a tool result the model reads:
// nothing changed.
func errorResult(err error) *mcp.CallToolResult {
	msg := err.Error()
	st := toolenv.StatusOf(err)
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Error (" + string(st) + "): " + msg + " Nothing changed in the episode."}},
		Meta: mcp.Meta{"toolenv/status": string(st)}}
}
