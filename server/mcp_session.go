package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"runtime"
	"strings"
	"sync"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/server/session"
)

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

// sessionOf returns the toolenv session of a tools/call request, held
// until release: the request's _meta "toolenv/session", else the
// X-Toolenv-Session header of an HTTP request, else the MCP session's id
// (issued by the server, bound to the token that opened it), else the
// connection's own generated id.
//
// Over HTTP a named session must be one the server issued to the same
// principal (POST /sessions); any other name is scoped to the MCP session
// ("<mcp session>/<name>"), so a client cannot reach another's state by
// naming it. Over stdio the connection is its one client and names are
// taken as they are.
func (s *mcpSessions) sessionOf(ctx context.Context, req *mcp.CallToolRequest) (id string, release func(), res *toolenv.Result) {
	named := ""
	if req.Params != nil {
		if v, ok := req.Params.Meta[MCPMetaSession].(string); ok && strings.TrimSpace(v) != "" {
			named = v
		}
	}
	if named == "" && req.Extra != nil && req.Extra.Header != nil {
		named = req.Extra.Header.Get(SessionHeader)
	}
	own := ""
	if ss := req.Session; ss != nil {
		if own = ss.ID(); own == "" {
			own = s.generated(ss)
		}
	}
	if named == "" {
		return own, noRelease, nil
	}
	if req.Extra == nil { // stdio, in-memory: one client per connection
		return named, noRelease, nil
	}
	principal := ""
	if ti := req.Extra.TokenInfo; ti != nil {
		principal = ti.UserID
	}
	if s.issuer != nil {
		backend, release, err := s.issuer.Acquire(ctx, named, principal)
		switch {
		case err == nil:
			return backend, release, nil
		case !errors.Is(err, session.ErrUnknown) || strings.HasPrefix(named, session.Prefix):
			return "", nil, sessionResult(err)
		}
	}
	scope := own
	if scope == "" {
		scope = principal
	}
	return scope + "/" + named, noRelease, nil
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
