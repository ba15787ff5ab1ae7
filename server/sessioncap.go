package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolenv/toolenv/server/guard"
	"github.com/toolenv/toolenv/server/session"
)

// mcpSessionHeader is the streamable-HTTP transport's session header.
const mcpSessionHeader = "Mcp-Session-Id"

// mcpCapOptions are the caps of an mcpCap; zero values are no cap.
type mcpCapOptions struct {
	max          int // live sessions in all
	perClient    int // live sessions of one client (guard.ClientKey)
	streams      int // event streams (GET) one client holds open
	streamIdle   time.Duration
	streamMax    time.Duration
	onEnd        func(id string)
	log          *slog.Logger
	onEvict      func(n int)
	streamsEnded *atomic.Int64 // streams the lifetimes ended (for tests)
}

// mcpCap caps what MCP clients of a streamable-HTTP handler hold: the
// live sessions in all and per client, and the event streams (GET /mcp)
// per client, which also get an idle and a maximum lifetime. A request
// that would open a session over a cap first closes the session idle
// longest that has no request in flight (the client's own, at its
// per-client cap); when every one has one, it is refused (503 at the
// server's cap, 429 at the client's) with a message naming the flag. The
// SDK keeps no cap of its own, and each session holds about 14 KB.
type mcpCap struct {
	next            http.Handler
	srv             *mcp.Server
	opts            mcpCapOptions
	evictions       *session.Evictions
	clientEvictions *session.Evictions

	mu        sync.Mutex
	use       map[string]*mcpUse // by Mcp-Session-Id
	closing   map[string]bool    // victims being closed
	pending   int                // sessions being opened
	evicted   int
	gone      *session.Recent // the last sessions evicted: principal and the flag of the cap
	perClient map[string]int  // live and pending sessions by client
	streams   map[string]int  // open event streams by client
}

type mcpUse struct {
	last      time.Time
	inFlight  int
	principal string
	client    string
}

func newMCPCap(next http.Handler, srv *mcp.Server, o mcpCapOptions) *mcpCap {
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	return &mcpCap{next: next, srv: srv, opts: o,
		evictions:       session.NewEvictions(session.EvictionOptions{Kind: "MCP", Max: o.max, Logger: o.log, OnEvict: o.onEvict}),
		clientEvictions: session.NewEvictions(session.EvictionOptions{Kind: "MCP", Flag: "--max-sessions-per-client", Max: o.perClient, Logger: o.log, OnEvict: o.onEvict}),
		use:             map[string]*mcpUse{}, closing: map[string]bool{}, perClient: map[string]int{}, streams: map[string]int{},
		gone: session.NewRecent(min(max(4*o.max, 1024), 1<<16))}
}

func (c *mcpCap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get(mcpSessionHeader); id != "" {
		c.serveSession(w, r, id)
		return
	}
	if r.Method != http.MethodPost {
		c.next.ServeHTTP(w, r) // the SDK answers: no session to open
		return
	}
	client := guard.ClientKey(r)
	if code, err := c.reserve(client); err != nil {
		w.Header().Set("Retry-After", "1")
		if code == http.StatusTooManyRequests {
			guard.WriteError(w, code, "rate_limited", err.Error(),
				"close MCP sessions you no longer need (DELETE /mcp with their Mcp-Session-Id) and retry; the server's operator can raise --max-sessions-per-client")
			return
		}
		guard.WriteError(w, code, "unavailable", err.Error(),
			"retry in a moment, close MCP sessions you no longer need (DELETE /mcp with their Mcp-Session-Id), or start the server with a larger --max-sessions")
		return
	}
	c.next.ServeHTTP(w, r)
	id := w.Header().Get(mcpSessionHeader)
	c.mu.Lock()
	c.pending--
	switch {
	case id != "" && c.use[id] == nil:
		c.use[id] = &mcpUse{last: time.Now(), principal: guard.Principal(r.Context()), client: client}
	default: // no session was opened (or the id was known): the reservation goes
		c.dropClientLocked(client)
	}
	c.mu.Unlock()
}

// serveSession serves a request of session id: its event stream (GET)
// within the client's stream cap and the lifetimes, anything else as
// it is.
func (c *mcpCap) serveSession(w http.ResponseWriter, r *http.Request, id string) {
	stream := r.Method == http.MethodGet
	client := ""
	c.mu.Lock()
	u := c.use[id] // nil for an id this handler never opened: the SDK answers 404
	v, evicted := c.gone.Get(id)
	p, flag := splitGone(v)
	evicted = evicted && u == nil && p == guard.Principal(r.Context())
	if u != nil && stream && c.opts.streams > 0 {
		client = guard.ClientKey(r)
		if c.streams[client] >= c.opts.streams {
			n := c.streams[client]
			c.mu.Unlock()
			w.Header().Set("Retry-After", "1")
			guard.WriteError(w, http.StatusTooManyRequests, "rate_limited",
				fmt.Sprintf("this client holds %d MCP event streams (GET /mcp) open, as many as one client may (--max-streams-per-client)", n),
				"close the event streams of sessions you no longer use (or the sessions: DELETE /mcp) and retry; the server's operator can raise --max-streams-per-client")
			return
		}
		c.streams[client]++
	}
	if u != nil {
		u.inFlight++
		u.last = time.Now()
	}
	c.mu.Unlock()
	if evicted {
		// As the SDK answers any session it no longer has (404, so that
		// the client opens a new one), saying why.
		n := c.opts.max
		if flag == "--max-sessions-per-client" {
			n = c.opts.perClient
		}
		writeJSONRPCError(w, http.StatusNotFound, -32001, fmt.Sprintf(
			"MCP session evicted: %s %d was reached and it was the idlest session with no request in flight; send initialize without %s to open a new one, and raise %s or close sessions you no longer need (DELETE /mcp)",
			flag, n, mcpSessionHeader, flag))
		return
	}
	if u != nil {
		defer func() {
			c.mu.Lock()
			u.inFlight--
			u.last = time.Now()
			if client != "" {
				if c.streams[client]--; c.streams[client] <= 0 {
					delete(c.streams, client)
				}
			}
			c.mu.Unlock()
		}()
	}
	if stream && u != nil && (c.opts.streamIdle > 0 || c.opts.streamMax > 0) {
		c.serveStream(w, r)
		return
	}
	c.next.ServeHTTP(w, r)
}

// serveStream serves an event stream that ends when it has sent nothing
// for streamIdle or has been open for streamMax: the client opens
// another (as it does after any interruption), so that a stream nobody
// reads holds no connection for ever.
func (c *mcpCap) serveStream(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if c.opts.streamMax > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, c.opts.streamMax)
		defer stop()
	}
	iw := &idleWriter{ResponseWriter: w}
	iw.touch()
	if c.opts.streamIdle > 0 {
		tick := min(max(c.opts.streamIdle/4, 10*time.Millisecond), 10*time.Second)
		go func() {
			t := time.NewTicker(tick)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					if time.Since(time.Unix(0, iw.last.Load())) > c.opts.streamIdle {
						cancel()
						return
					}
				}
			}
		}()
	}
	c.next.ServeHTTP(iw, r.WithContext(ctx))
	if r.Context().Err() == nil && ctx.Err() != nil && c.opts.streamsEnded != nil {
		c.opts.streamsEnded.Add(1)
	}
}

// idleWriter records when its stream last sent something.
type idleWriter struct {
	http.ResponseWriter
	last atomic.Int64 // UnixNano
}

func (w *idleWriter) touch() { w.last.Store(time.Now().UnixNano()) }

func (w *idleWriter) Write(p []byte) (int, error) {
	w.touch()
	return w.ResponseWriter.Write(p)
}

func (w *idleWriter) Flush() {
	w.touch()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *idleWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// splitGone reads what gone remembers of a session: its principal and
// the flag of the cap that evicted it.
func splitGone(v string) (principal, flag string) {
	for i := 0; i < len(v); i++ {
		if v[i] == 0 {
			return v[:i], v[i+1:]
		}
	}
	return v, "--max-sessions"
}

// writeJSONRPCError answers a JSON-RPC error that belongs to no request.
func writeJSONRPCError(w http.ResponseWriter, status, code int, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// dropClientLocked forgets one session (or reservation) of client.
func (c *mcpCap) dropClientLocked(client string) {
	if client == "" {
		return
	}
	if c.perClient[client]--; c.perClient[client] <= 0 {
		delete(c.perClient, client)
	}
}

// forgetClosedLocked forgets the sessions the SDK has closed (idle
// timeout, DELETE) and returns them and the live ones.
func (c *mcpCap) forgetClosedLocked() (gone []string, live map[string]*mcp.ServerSession) {
	live = map[string]*mcp.ServerSession{}
	for ss := range c.srv.Sessions() {
		if id := ss.ID(); id != "" && !c.closing[id] {
			live[id] = ss
		}
	}
	for id, u := range c.use {
		if live[id] == nil && u.inFlight == 0 {
			delete(c.use, id)
			c.dropClientLocked(u.client)
			gone = append(gone, id)
		}
	}
	return gone, live
}

// evictLocked picks the session idle longest with no request in flight
// among live (of client only, when client is not ""), forgets it and
// marks it closing; nil when there is none.
func (c *mcpCap) evictLocked(live map[string]*mcp.ServerSession, client, flag string) *mcp.ServerSession {
	var victim *mcp.ServerSession
	var oldest time.Time
	for id, ss := range live {
		u := c.use[id]
		if u == nil || u.inFlight > 0 || client != "" && u.client != client {
			continue // being opened (its initialize is in flight), busy, or another client's
		}
		if victim == nil || u.last.Before(oldest) {
			victim, oldest = ss, u.last
		}
	}
	if victim != nil {
		u := c.use[victim.ID()]
		c.gone.Add(victim.ID(), u.principal+"\x00"+flag)
		delete(c.use, victim.ID())
		c.dropClientLocked(u.client)
		c.closing[victim.ID()] = true
		c.evicted++
	}
	return victim
}

// reserve makes room for one more session of client: under the caps it
// only counts; at the client's cap it closes that client's session idle
// longest with no request in flight; at the server's cap it forgets the
// sessions the SDK has closed and, if still at the cap, closes the
// session idle longest with no request in flight. It returns the HTTP
// status and error of a refusal.
func (c *mcpCap) reserve(client string) (int, error) {
	c.mu.Lock()
	var gone []string
	var victims []*mcp.ServerSession
	var live map[string]*mcp.ServerSession
	if c.opts.perClient > 0 && c.perClient[client] >= c.opts.perClient {
		gone, live = c.forgetClosedLocked()
		if c.perClient[client] >= c.opts.perClient {
			v := c.evictLocked(live, client, "--max-sessions-per-client")
			if v == nil {
				n := c.perClient[client]
				c.mu.Unlock()
				c.ended(gone)
				return http.StatusTooManyRequests, fmt.Errorf("no new MCP session: this client holds %d, as many as one client may (--max-sessions-per-client), and all have a request in flight", n)
			}
			delete(live, v.ID())
			victims = append(victims, v)
			gone = append(gone, v.ID())
		}
	}
	own := len(victims) // evicted at the client's cap
	if c.opts.max > 0 && len(c.use)+c.pending >= c.opts.max {
		if live == nil {
			var g []string
			g, live = c.forgetClosedLocked()
			gone = append(gone, g...)
		}
		if len(live)+c.pending >= c.opts.max {
			v := c.evictLocked(live, "", "--max-sessions")
			if v == nil {
				n := len(live)
				c.mu.Unlock()
				c.finish(victims, own, 0)
				c.ended(gone)
				return http.StatusServiceUnavailable, fmt.Errorf("no new MCP session: all %d sessions have a request in flight", n)
			}
			victims = append(victims, v)
			gone = append(gone, v.ID())
		}
	}
	c.pending++
	c.perClient[client]++
	c.mu.Unlock()
	c.finish(victims, own, len(victims)-own)
	c.ended(gone)
	return 0, nil
}

// finish closes the victims and counts their evictions.
func (c *mcpCap) finish(victims []*mcp.ServerSession, ownCap, serverCap int) {
	c.clientEvictions.Evicted(ownCap)
	c.evictions.Evicted(serverCap)
	for _, v := range victims {
		v.Close()
		c.mu.Lock()
		delete(c.closing, v.ID())
		c.mu.Unlock()
	}
}

func (c *mcpCap) ended(ids []string) {
	if c.opts.onEnd == nil {
		return
	}
	for _, id := range ids {
		c.opts.onEnd(id)
	}
}
