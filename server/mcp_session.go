package server

import (
	"crypto/rand"
	"encoding/hex"
	"runtime"
	"strings"
	"sync"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	mu  sync.Mutex
	ids map[weak.Pointer[mcp.ServerSession]]string
}

// sessionOf returns the toolenv session of a tools/call request: the
// request's _meta "toolenv/session", else the X-Toolenv-Session header of
// an HTTP request, else the MCP session's id, else the connection's own
// generated id.
func (s *mcpSessions) sessionOf(req *mcp.CallToolRequest) string {
	if req.Params != nil {
		if v, ok := req.Params.Meta[MCPMetaSession].(string); ok && strings.TrimSpace(v) != "" {
			return v
		}
	}
	if req.Extra != nil && req.Extra.Header != nil {
		if v := req.Extra.Header.Get(SessionHeader); v != "" {
			return v
		}
	}
	ss := req.Session
	if ss == nil {
		return ""
	}
	if id := ss.ID(); id != "" {
		return id
	}
	return s.generated(ss)
}

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
