// Package openenv serves toolenv's RL episodes (package episode) in
// OpenEnv's wire protocol, as meta-pytorch/OpenEnv's source defines it
// (src/openenv/core/env_server/http_server.py, types.py, mcp_types.py,
// serialization.py; src/openenv/core/env_client.py and mcp_client.py for
// the client side):
//
//   - GET /ws: a WebSocket session. The client sends {"type": "reset",
//     "data": {...}}, {"type": "step", "data": action}, {"type":
//     "state"}, {"type": "close"} and {"type": "mcp", "data": JSON-RPC};
//     the server answers {"type": "observation", "data": {"observation",
//     "reward", "done", "metadata"}}, {"type": "state", "data": state},
//     {"type": "mcp", "data": JSON-RPC response} or {"type": "error",
//     "data": {"message", "code"}}. One connection holds one episode at a
//     time: a reset closes the one before, close and disconnecting close
//     it.
//   - POST /reset and POST /step: OpenEnv's HTTP endpoints, which in
//     OpenEnv are one-shot (each request a fresh environment). Here the
//     reset's metadata carries the episode's id, and a step that names it
//     ("episode_id" beside "action", which StepRequest's extra fields
//     allow) continues it: a multi-step episode over plain HTTP, served
//     by any replica when episodes live in the store.
//   - GET /state?episode_id=, POST /close (extensions), GET /health,
//     GET /schema, GET /metadata; GET /tasks and GET /trajectory
//     (extensions: the tasks an episode can be reset to, and an
//     episode's record as JSONL or an SFT format).
//
// Actions are OpenEnv's MCP actions (call_tool, list_tools) and
// toolenv's (tool_calls, final_answer): see episode.ParseAction.
package openenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/server/guard"
)

// Options configure the handler.
type Options struct {
	// Name is the environment's name in /metadata (default "toolenv").
	Name string
	// Version is toolenv's version, in /metadata.
	Version string
	// MaxBodyBytes bounds request bodies and WebSocket messages (default
	// 1 MiB).
	MaxBodyBytes int64
	// WSIdle closes a WebSocket that sent no message this long while no
	// answer was due (default 5 min; negative: never); WSMaxLifetime one
	// open this long (default 2 h; negative: never). Closing a WebSocket
	// closes its episode.
	WSIdle, WSMaxLifetime time.Duration
	// MaxWSPerClient caps the WebSockets one client (its token, or its
	// address without tokens) holds open (default 64; negative: none):
	// over it the handshake is refused with 429.
	MaxWSPerClient int
	// Logger logs failures; nil discards.
	Logger *slog.Logger
}

// The flags of the WebSocket limits, named in messages.
const (
	WSIdleFlag         = "--ws-idle"
	WSMaxLifetimeFlag  = "--ws-max-lifetime"
	MaxWSPerClientFlag = "--max-ws-per-client"
)

func capOr[T int | time.Duration](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

type handler struct {
	eps  *episode.Env
	opts Options
	log  *slog.Logger
	mux  *http.ServeMux

	wsMu      sync.Mutex
	wsClients map[string]int // open WebSockets by client
}

// NewHandler serves eps in OpenEnv's protocol. Mount it under a prefix
// with http.StripPrefix (toolenv serve mounts it at /openenv, so that an
// OpenEnv client's base_url is http://host:port/openenv).
func NewHandler(eps *episode.Env, opts Options) http.Handler {
	if opts.Name == "" {
		opts.Name = "toolenv"
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	opts.WSIdle = capOr(opts.WSIdle, 5*time.Minute)
	opts.WSMaxLifetime = capOr(opts.WSMaxLifetime, 2*time.Hour)
	opts.MaxWSPerClient = capOr(opts.MaxWSPerClient, 64)
	h := &handler{eps: eps, opts: opts, log: opts.Logger, mux: http.NewServeMux(), wsClients: map[string]int{}}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.mux.HandleFunc("GET /ws", h.serveWS)
	h.mux.HandleFunc("POST /reset", h.handleReset)
	h.mux.HandleFunc("POST /step", h.handleStep)
	h.mux.HandleFunc("GET /state", h.handleState)
	h.mux.HandleFunc("POST /close", h.handleClose)
	h.mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"status": "healthy"})
	})
	h.mux.HandleFunc("GET /metadata", h.handleMetadata)
	h.mux.HandleFunc("GET /schema", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, schemaJSON)
	})
	h.mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, openAPIDocument(opts.Version))
	})
	h.mux.HandleFunc("GET /tasks", h.handleTasks)
	h.mux.HandleFunc("GET /trajectory", h.handleTrajectory)
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeDetail(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path),
			"the OpenEnv routes are GET /ws, POST /reset, POST /step, GET /state, POST /close, GET /health, GET /schema, GET /metadata, GET /openapi.json, GET /tasks, GET /trajectory, and POST /mcp (MCP)", "not_found")
	})
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			h.log.Error("panic in an OpenEnv request", "path", r.URL.Path, "panic", p)
			writeDetail(w, http.StatusInternalServerError, "internal error: this is a bug in toolenv, the server log has the details", "", "internal")
		}
	}()
	h.mux.ServeHTTP(w, r)
}

// result is serialize_observation's form, which OpenEnv's
// ResetResponse and StepResponse accept and nothing more: the
// observation, its reward and done promoted beside it. toolenv's own
// fields (the step's info, truncated, the episode's id, a reset's task)
// are in the observation's metadata, where OpenEnv's Observation keeps
// metadata and its MCPToolClient reads it.
type result struct {
	Observation *episode.Observation `json:"observation"`
	Reward      *float64             `json:"reward"`
	Done        bool                 `json:"done"`
}

func toResult(sr *episode.StepResult) *result {
	o := sr.Observation
	md := map[string]any{"truncated": sr.Truncated, "info": sr.Info, "episode_id": o.EpisodeID}
	if o.Query != "" { // a reset: the task, for clients that keep only metadata
		md["task"] = map[string]any{"task_id": o.TaskID, "collection": o.Collection, "query": o.Query, "instructions": o.Instructions, "max_steps": o.MaxSteps}
	}
	o.Metadata = md
	return &result{Observation: o, Reward: sr.Reward, Done: sr.Done}
}

// encode writes a result as JSON. A reset's tools, rendered once per
// task when the episode's tools were made, are spliced in as they are
// rather than re-read by the encoder: for a task offering a few dozen
// documented tools they are most of the answer and most of its cost.
func encode(res *result) ([]byte, error) {
	key, tools := "tools", res.Observation.Tools
	if len(tools) == 0 {
		key, tools = "openai_tools", res.Observation.OpenAITools
	}
	if len(tools) == 0 {
		return toolenv.MarshalJSONNoHTML(res)
	}
	obs := *res.Observation
	obs.Tools, obs.OpenAITools = nil, nil
	cp := *res
	cp.Observation = &obs
	b, err := toolenv.MarshalJSONNoHTML(&cp)
	if err != nil {
		return nil, err
	}
	const prefix = `{"observation":{`
	if !bytes.HasPrefix(b, []byte(prefix)) {
		return toolenv.MarshalJSONNoHTML(res)
	}
	out := make([]byte, 0, len(b)+len(tools)+20)
	out = append(out, prefix...)
	out = append(out, `"`+key+`":`...)
	out = append(out, tools...)
	out = append(out, ',')
	return append(out, b[len(prefix):]...), nil
}

func writeResult(w http.ResponseWriter, res *result) {
	b, err := encode(res)
	if err != nil {
		http.Error(w, `{"detail":"the response does not encode"}`, http.StatusInternalServerError)
		return
	}
	writeRaw(w, http.StatusOK, b)
}

func principal(r *http.Request) string { return guard.Principal(r.Context()) }

func (h *handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	var body []byte
	var err error
	if n := r.ContentLength; n > 512 && n <= h.opts.MaxBodyBytes {
		// A large body read in one go, not grown by copies.
		var b bytes.Buffer
		b.Grow(int(n) + 1)
		_, err = b.ReadFrom(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
		body = b.Bytes()
	} else {
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeDetail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is over %d bytes", mbe.Limit), "send a smaller body, or start the server with a larger --max-body", "too_large")
			return nil, false
		}
		writeDetail(w, http.StatusBadRequest, "the request body could not be read: "+err.Error(), "", "bad_request")
		return nil, false
	}
	return body, true
}

func (h *handler) handleReset(w http.ResponseWriter, r *http.Request) {
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	o, err := episode.ParseResetOptions(body)
	if err != nil {
		h.writeErr(w, err)
		return
	}
	o.Client = guard.ClientKey(r)
	sr, err := h.eps.Reset(r.Context(), principal(r), o)
	if err != nil {
		h.writeErr(w, err)
		return
	}
	writeResult(w, toResult(sr))
}

// stepRequest is OpenEnv's StepRequest with toolenv's episode_id.
type stepRequest struct {
	Action    json.RawMessage `json:"action"`
	TimeoutS  *float64        `json:"timeout_s"`
	RequestID string          `json:"request_id"`
	EpisodeID string          `json:"episode_id"`
}

// decodeStep decodes a step request as json.Unmarshal does, without its
// passes over the action (all but a few bytes of a large step): the
// members are split once (toolenv.SplitJSONObject) and the small ones
// decoded. A body of another shape (a member named otherwise, a value of
// the wrong type, data after the object) goes through json.Unmarshal,
// which words the error.
func decodeStep(body []byte, req *stepRequest) error {
	members, end, err := toolenv.SplitJSONObject(body)
	if err == nil && len(bytes.TrimLeft(body[end:], " \t\r\n")) == 0 {
		var out stepRequest
		ok := true
		for k, v := range members {
			switch k {
			case "action":
				out.Action = v
			case "timeout_s":
				ok = ok && json.Unmarshal(v, &out.TimeoutS) == nil
			case "request_id":
				ok = ok && json.Unmarshal(v, &out.RequestID) == nil
			case "episode_id":
				ok = ok && json.Unmarshal(v, &out.EpisodeID) == nil
			default:
				ok = false // json.Unmarshal matches names without regard to case
			}
		}
		if ok {
			*req = out
			return nil
		}
	}
	return json.Unmarshal(body, req)
}

func (h *handler) handleStep(w http.ResponseWriter, r *http.Request) {
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	var req stepRequest
	if err := decodeStep(body, &req); err != nil {
		writeDetail(w, http.StatusUnprocessableEntity, "the step request is not a JSON object with an action: "+err.Error(), `send {"episode_id": "...", "action": {...}}`, "invalid_arguments")
		return
	}
	if req.EpisodeID == "" {
		writeDetail(w, http.StatusUnprocessableEntity, "the step names no episode_id",
			"OpenEnv's HTTP /step is one-shot; toolenv's continues the episode a POST /reset started: send its episode_id (the reset's metadata.episode_id) beside the action, or use the WebSocket /ws", "invalid_arguments")
		return
	}
	if len(req.Action) == 0 {
		writeDetail(w, http.StatusUnprocessableEntity, "the step has no action", `send {"episode_id": "...", "action": {"type": "call_tool", "tool_name": "...", "arguments": {...}}}`, "invalid_arguments")
		return
	}
	a, err := episode.ParseAction(req.Action)
	if err != nil {
		h.writeErr(w, err)
		return
	}
	a.RequestID = req.RequestID
	ctx := r.Context()
	if req.TimeoutS != nil && *req.TimeoutS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, time.Duration(*req.TimeoutS*float64(time.Second)),
			fmt.Errorf("the step's timeout_s of %gs passed", *req.TimeoutS))
		defer cancel()
	}
	sr, err := h.eps.Step(ctx, principal(r), req.EpisodeID, a)
	if err != nil {
		h.writeErr(w, err)
		return
	}
	writeResult(w, toResult(sr))
}

func (h *handler) handleState(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("episode_id")
	if id == "" {
		writeDetail(w, http.StatusUnprocessableEntity, "GET /state names no episode_id", "add ?episode_id=... (over the WebSocket, send {\"type\": \"state\"})", "invalid_arguments")
		return
	}
	st, err := h.eps.State(r.Context(), principal(r), id)
	if err != nil {
		h.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (h *handler) handleClose(w http.ResponseWriter, r *http.Request) {
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	var req struct {
		EpisodeID string `json:"episode_id"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.EpisodeID == "" {
		writeDetail(w, http.StatusUnprocessableEntity, "POST /close needs {\"episode_id\": \"...\"}", "", "invalid_arguments")
		return
	}
	if err := h.eps.End(r.Context(), principal(r), req.EpisodeID); err != nil {
		h.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"episode_id": req.EpisodeID, "closed": true})
}

func (h *handler) handleMetadata(w http.ResponseWriter, r *http.Request) {
	colls := 0
	tasks := 0
	for _, ts := range h.eps.Tasks() {
		colls++
		tasks += len(ts)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"name":              h.opts.Name,
		"description":       fmt.Sprintf("toolenv: tool-use episodes over %d tasks of %d collections, rewarded by verified answers (completion) or the papers' metrics; tool calls go through toolenv's pipeline (validation, drift, faults, cache, backends)", tasks, colls),
		"version":           h.opts.Version,
		"author":            "toolenv",
		"documentation_url": "https://github.com/toolenv/toolenv/blob/main/docs/episodes.md",
	})
}

func (h *handler) handleTasks(w http.ResponseWriter, r *http.Request) {
	coll := r.URL.Query().Get("collection")
	type task struct {
		ID         string `json:"id"`
		Split      string `json:"split,omitempty"`
		Difficulty string `json:"difficulty,omitempty"`
	}
	out := map[string][]task{}
	for name, ts := range h.eps.Tasks() {
		if coll != "" && name != coll {
			continue
		}
		list := make([]task, 0, len(ts))
		for _, t := range ts {
			list = append(list, task{ID: t.ID, Split: t.Group, Difficulty: t.Difficulty})
		}
		out[name] = list
	}
	if coll != "" && out[coll] == nil {
		writeDetail(w, http.StatusNotFound, fmt.Sprintf("no collection %q with tasks is served", coll), "GET /openenv/tasks lists every collection's", "not_found")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"tasks": out})
}

func (h *handler) handleTrajectory(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id, format := q.Get("episode_id"), q.Get("format")
	if id == "" {
		writeDetail(w, http.StatusUnprocessableEntity, "GET /trajectory names no episode_id", "add ?episode_id=...&format=jsonl|openai|sharegpt", "invalid_arguments")
		return
	}
	rec, err := h.eps.Record(r.Context(), principal(r), id)
	if err != nil {
		h.writeErr(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	if err := episode.WriteRecord(w, rec, format); err != nil {
		h.writeErr(w, err)
	}
}

// httpStatus maps an episode error to the HTTP status FastAPI's OpenEnv
// server would use for it: 422 for a request of the wrong shape, 404 for
// an unknown task or episode, 409 for a step after the end, 410 for an
// expired or closed episode, 503 at the cap.
func httpStatus(err error) (int, string) {
	st := toolenv.StatusOf(err)
	switch {
	case errors.Is(err, episode.ErrFull):
		return http.StatusServiceUnavailable, string(st)
	case errors.Is(err, episode.ErrDone):
		return http.StatusConflict, "done"
	case errors.Is(err, episode.ErrConflict):
		return http.StatusConflict, "conflict"
	case errors.Is(err, episode.ErrExpired):
		return http.StatusGone, "expired"
	case errors.Is(err, episode.ErrClosed):
		return http.StatusGone, "closed"
	}
	switch st {
	case toolenv.StatusInvalidArguments, toolenv.StatusUnknownTool, toolenv.StatusBadRequest:
		return http.StatusUnprocessableEntity, string(st)
	case toolenv.StatusNotFound:
		return http.StatusNotFound, string(st)
	case toolenv.StatusGone:
		return http.StatusGone, string(st)
	case toolenv.StatusUnavailable:
		return http.StatusServiceUnavailable, string(st)
	case toolenv.StatusTooLarge:
		return http.StatusRequestEntityTooLarge, string(st)
	case toolenv.StatusCanceled:
		return 499, string(st)
	case toolenv.StatusTimeout:
		return http.StatusGatewayTimeout, string(st)
	}
	return http.StatusInternalServerError, string(st)
}

func (h *handler) writeErr(w http.ResponseWriter, err error) {
	code, status := httpStatus(err)
	msg, hint := split(err)
	if code == http.StatusInternalServerError {
		h.log.Error("episode request failed", "err", err)
	}
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	writeDetail(w, code, msg, hint, status)
}

// split returns an error's message and hint.
func split(err error) (string, string) {
	var te *toolenv.Error
	if errors.As(err, &te) {
		msg := te.Message
		if te.Err != nil && !isSentinel(te.Err) {
			msg += ": " + te.Err.Error()
		}
		return msg, te.Hint
	}
	return err.Error(), ""
}

func isSentinel(err error) bool {
	for _, s := range []error{episode.ErrFull, episode.ErrUnknown, episode.ErrExpired, episode.ErrClosed, episode.ErrDone, episode.ErrConflict} {
		if err == s {
			return true
		}
	}
	return false
}

// writeDetail writes FastAPI's error body ({"detail": ...}) with
// toolenv's status and hint beside it.
func writeDetail(w http.ResponseWriter, code int, msg, hint, status string) {
	body := map[string]any{"detail": msg, "status": status}
	if hint != "" {
		body["hint"] = hint
	}
	writeJSON(w, code, body)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := toolenv.MarshalJSONNoHTML(v)
	if err != nil {
		http.Error(w, `{"detail":"the response does not encode"}`, http.StatusInternalServerError)
		return
	}
	writeRaw(w, code, b)
}

func writeRaw(w http.ResponseWriter, code int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
