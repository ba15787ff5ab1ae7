package server

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolenv/toolenv/server/guard"
	"github.com/toolenv/toolenv/server/session"
)

// mcpSessionHeader is the streamable-HTTP transport's session header.
const mcpSessionHeader = "Mcp-Session-Id"

// mcpCap caps the live MCP sessions of a streamable-HTTP handler: a
// request that would open a session over the cap first closes the
// session idle longest that has no request in flight; when every session
// has one, it is refused with 503 and a message saying so. The SDK keeps
// no cap of its own, and each session holds about 14 KB.
type mcpCap struct {
	next      http.Handler
	srv       *mcp.Server
	max       int
	onEnd     func(id string)
	evictions *session.Evictions

	mu      sync.Mutex
	use     map[string]*mcpUse // by Mcp-Session-Id
	closing map[string]bool    // victims being closed
	pending int                // sessions being opened
	evicted int
	gone    *session.Recent // the last sessions evicted, with their principal
}

type mcpUse struct {
	last      time.Time
	inFlight  int
	principal string
}

func newMCPCap(next http.Handler, srv *mcp.Server, limit int, onEnd func(string), log *slog.Logger, onEvict func(int)) *mcpCap {
	ev := session.NewEvictions(session.EvictionOptions{Kind: "MCP", Max: limit, Logger: log, OnEvict: onEvict})
	return &mcpCap{next: next, srv: srv, max: limit, onEnd: onEnd, evictions: ev, use: map[string]*mcpUse{}, closing: map[string]bool{},
		gone: session.NewRecent(min(max(4*limit, 1024), 1<<16))}
}

func (c *mcpCap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get(mcpSessionHeader); id != "" {
		c.mu.Lock()
		u := c.use[id] // nil for an id this handler never opened: the SDK answers 404
		if u != nil {
			u.inFlight++
			u.last = time.Now()
		}
		p, evicted := c.gone.Get(id)
		evicted = evicted && u == nil && p == guard.Principal(r.Context())
		c.mu.Unlock()
		if evicted {
			// As the SDK answers any session it no longer has (404, so
			// that the client opens a new one), saying why.
			writeJSONRPCError(w, http.StatusNotFound, -32001, fmt.Sprintf(
				"MCP session evicted: --max-sessions %d was reached and it was the idlest session with no request in flight; send initialize without %s to open a new one, and raise --max-sessions or close sessions you no longer need (DELETE /mcp)",
				c.max, mcpSessionHeader))
			return
		}
		if u != nil {
			defer func() {
				c.mu.Lock()
				u.inFlight--
				u.last = time.Now()
				c.mu.Unlock()
			}()
		}
		c.next.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		c.next.ServeHTTP(w, r) // the SDK answers: no session to open
		return
	}
	if err := c.reserve(); err != nil {
		w.Header().Set("Retry-After", "1")
		guard.WriteError(w, http.StatusServiceUnavailable, "unavailable", err.Error(),
			"retry in a moment, close MCP sessions you no longer need (DELETE /mcp with their Mcp-Session-Id), or start the server with a larger --max-sessions")
		return
	}
	c.next.ServeHTTP(w, r)
	id := w.Header().Get(mcpSessionHeader)
	c.mu.Lock()
	c.pending--
	if id != "" && c.use[id] == nil {
		c.use[id] = &mcpUse{last: time.Now(), principal: guard.Principal(r.Context())}
	}
	c.mu.Unlock()
}

// writeJSONRPCError answers a JSON-RPC error that belongs to no request.
func writeJSONRPCError(w http.ResponseWriter, status, code int, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// reserve makes room for one more session. Under the cap (counting the
// sessions it opened, some of which the SDK may have closed since) it
// only counts; at the cap it forgets the sessions the SDK has closed
// (idle timeout, DELETE) and, if still at the cap, closes the one idle
// longest with no request in flight.
func (c *mcpCap) reserve() error {
	c.mu.Lock()
	if len(c.use)+c.pending < c.max { // the common case: no need to look
		c.pending++
		c.mu.Unlock()
		return nil
	}
	live := map[string]*mcp.ServerSession{}
	for ss := range c.srv.Sessions() {
		if id := ss.ID(); id != "" && !c.closing[id] {
			live[id] = ss
		}
	}
	var gone []string
	for id, u := range c.use {
		if live[id] == nil && u.inFlight == 0 {
			delete(c.use, id)
			gone = append(gone, id)
		}
	}
	var victim *mcp.ServerSession
	if len(live)+c.pending >= c.max {
		var oldest time.Time
		for id, ss := range live {
			u := c.use[id]
			if u == nil || u.inFlight > 0 {
				continue // being opened (its initialize is in flight), or busy
			}
			if victim == nil || u.last.Before(oldest) {
				victim, oldest = ss, u.last
			}
		}
		if victim == nil {
			n := len(live)
			c.mu.Unlock()
			c.ended(gone)
			return fmt.Errorf("no new MCP session: all %d sessions have a request in flight", n)
		}
		c.gone.Add(victim.ID(), c.use[victim.ID()].principal)
		delete(c.use, victim.ID())
		gone = append(gone, victim.ID())
		c.closing[victim.ID()] = true
		c.evicted++
	}
	c.pending++
	c.mu.Unlock()
	if victim != nil {
		c.evictions.Evicted(1)
		victim.Close()
		c.mu.Lock()
		delete(c.closing, victim.ID())
		c.mu.Unlock()
	}
	c.ended(gone)
	return nil
}

func (c *mcpCap) ended(ids []string) {
	if c.onEnd == nil {
		return
	}
	for _, id := range ids {
		c.onEnd(id)
	}
}
