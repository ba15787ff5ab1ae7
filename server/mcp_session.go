package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/server/session"
)

// MCPSessionArg is the argument through which a tool of a collection
// with task sessions (SLOT/SEL: Policy.Sessions) takes its session
// handle over MCP, where MCP 2026-07-28 has no sessions: the handle the
// setup call's result carries (_meta "toolenv/session"), passed back as an
// ordinary tool argument, as the specification recommends for state that
// spans calls. It is listed in each such tool's input schema (optional:
// a client with an MCP session needs it not), and taken out of the
// arguments before the call is validated. A tool whose own input has a
// parameter of that name takes the handle as "toolenv_session" instead.
const MCPSessionArg = "session"

// mcpSessionArg is the name of t's session argument.
func mcpSessionArg(t *toolenv.Tool) string {
	if t.Input != nil {
		if _, ok := t.Input.Properties[MCPSessionArg]; ok {
			return "toolenv_" + MCPSessionArg
		}
	}
	return MCPSessionArg
}

// takeSessionArg removes the session argument from args and returns its
// value: "" when absent or null, an invalid-arguments result when it is
// not a string.
func takeSessionArg(args map[string]any, name string) (string, *toolenv.Result) {
	v, ok := args[name]
	if !ok {
		return "", nil
	}
	delete(args, name)
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(v), nil
	}
	return "", &toolenv.Result{Status: toolenv.StatusInvalidArguments,
		Error:    fmt.Sprintf("argument `%s` must be a string: the session handle the task's setup call returned", name),
		Problems: []toolenv.Problem{{Param: name, Code: "wrong_type", Message: fmt.Sprintf("argument `%s` is not a string", name), Expected: "string"}}}
}

// withSessionArg adds the session argument to an input schema.
func withSessionArg(raw json.RawMessage, name string) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	props, _ := m["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	props[name] = map[string]any{"type": "string",
		"description": "The task session this call runs in: the handle the task's setup call returned (its result's _meta \"toolenv/session\"). Needed where MCP has no session (protocol 2026-07-28); a client with an MCP session may leave it out."}
	m["properties"] = props
	return json.Marshal(m)
}

// The _meta keys a tools/call request may carry to adjust the call.
const (
	// MCPMetaSession names the toolenv session of the call, overriding
	// the MCP session. A harness that runs several episodes over one
	// MCP connection gives each its own session this way.
	MCPMetaSession = "toolenv/session"
	// MCPMetaFeedback is how much a rejected call is told: "none",
	// "terse" or "helpful".
	MCPMetaFeedback = "toolenv/feedback"
	// MCPMetaNoCache skips the cache lookup when true.
	MCPMetaNoCache = "toolenv/no_cache"
)

// mcpSessions gives every MCP connection a toolenv session id. Streamable
// HTTP sessions have an id of their own (Mcp-Session-Id), which is used
// as is; stdio and in-memory connections have none, so each gets a random
// one for its lifetime. The table holds sessions weakly: an entry goes
// away when the SDK drops its session.
type mcpSessions struct {
	issuer SessionIssuer // checks named sessions over HTTP; nil: none are issued
	mu     sync.Mutex
	ids    map[weak.Pointer[mcp.ServerSession]]string
}

// mcpSessionCall is what sessionOf needs of a tools/call besides the
// request: the session handle passed as a tool argument (see
// MCPSessionArg), and whether the tool starts task sessions (the hidden
// initialisation tool of a collection with sessions).
type mcpSessionCall struct {
	handle string
	arg    string // the name of the session argument
	setup  bool
	// sessions: the tool's collection keeps per-session state.
	sessions bool
}

// sessionOf returns the toolenv session of a tools/call request, held
// until release: the handle passed as the tool's session argument, else
// the request's _meta "toolenv/session", else the X-Toolenv-Session
// header of an HTTP request, else the MCP session's id (issued by the
// server, bound to the token that opened it), else the connection's own
// generated id; under the sessionless protocol none ("", as a REST call
// without a session header). minted is the id of a session made for this
// call (to be handed back to the client), "" for none.
//
// Over HTTP a named session must be one the server issued to the same
// principal (POST /sessions); any other name is scoped to the MCP session
// ("<mcp session>/<name>"), or under the sessionless protocol to the
// principal, so a client cannot reach another's state by naming it. Over
// stdio the connection is its one client and names are taken as they
// are.
//
// Under the sessionless protocol (2026-07-28 over HTTP: no MCP session)
// a call to a collection's setup tool that names no session gets a new
// one from the issuer, which its result carries; a call to another tool
// of a collection with sessions that names none is refused with a result
// saying to pass the handle.
func (s *mcpSessions) sessionOf(ctx context.Context, req *mcp.CallToolRequest, c mcpSessionCall) (id, minted string, release func(), res *toolenv.Result) {
	named := c.handle
	if named == "" && req.Params != nil {
		if v, ok := req.Params.Meta[MCPMetaSession].(string); ok && strings.TrimSpace(v) != "" {
			named = v
		}
	}
	if named == "" && req.Extra != nil && req.Extra.Header != nil {
		named = req.Extra.Header.Get(SessionHeader)
	}
	own := ""
	if ss := req.Session; ss != nil {
		own = ss.ID()
	}
	sessionless := own == "" && req.Extra != nil // HTTP without an MCP session
	if own == "" && req.Session != nil && !sessionless {
		own = s.generated(req.Session) // stdio, in memory: the connection's
	}
	principal := ""
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		principal = req.Extra.TokenInfo.UserID
	}
	if named == "" {
		switch {
		case !sessionless:
			return own, "", noRelease, nil
		case !c.sessions:
			// No session: calls share the collection's anonymous
			// one (an MCP source's history, say), as calls over
			// REST without a session header do.
			return "", "", noRelease, nil
		case c.setup && s.issuer != nil:
			id, release, err := s.issuer.Issue(ctx, principal)
			if err != nil {
				return "", "", nil, sessionResult(err)
			}
			return id, id, release, nil
		case !c.setup:
			return "", "", nil, &toolenv.Result{Status: toolenv.StatusInvalidArguments,
				Error: "this tool runs in a task session, and this request has none: MCP 2026-07-28 has no sessions, so the session travels as an argument",
				Hint:  fmt.Sprintf("pass the session handle the task's setup call returned (its result's %q) as the %q argument", MCPMetaSession, c.arg)}
		}
		return own, "", noRelease, nil
	}
	if req.Extra == nil { // stdio, in-memory: one client per connection
		return named, "", noRelease, nil
	}
	if s.issuer != nil {
		backend, release, err := s.issuer.Acquire(ctx, named, principal)
		switch {
		case err == nil:
			return backend, "", release, nil
		case !errors.Is(err, session.ErrUnknown) || strings.HasPrefix(named, session.Prefix):
			return "", "", nil, sessionResult(err)
		}
	}
	scope := own
	if sessionless || scope == "" {
		scope = "mcp"
		if principal != "" {
			scope = principal
		}
	}
	return scope + "/" + named, "", noRelease, nil
}

func noRelease() {}

func (s *mcpSessions) generated(ss *mcp.ServerSession) string {
	key := weak.Make(ss)
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.ids[key]; ok {
		return id
	}
	if s.ids == nil {
		s.ids = map[weak.Pointer[mcp.ServerSession]]string{}
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	id := "mcp-" + hex.EncodeToString(b[:])
	s.ids[key] = id
	runtime.AddCleanup(ss, s.forget, key)
	return id
}

func (s *mcpSessions) forget(key weak.Pointer[mcp.ServerSession]) {
	s.mu.Lock()
	delete(s.ids, key)
	s.mu.Unlock()
}

// len reports how many generated ids are held (for tests).
func (s *mcpSessions) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids)
}
