package mcpsource

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/invoke"
)

// MetaNotLive is the Result.Meta key set to why the server was not
// asked: "replayed" (the session's earlier writes were answered from
// recordings or the simulator, so the server's state is not the
// session's) or "no_server" (documentation only).
const MetaNotLive = "mcp_not_live"

// ReplayedWarning is the warning on an answer simulated because the
// session's history was replayed rather than sent to the server.
const ReplayedWarning = "this session's earlier state-changing calls were answered from recordings (or simulated), so the MCP server has not seen them and its answer would belong to another state: this answer is simulated"

// Backend is an MCP collection's backend: backend/virtual's chain with
// the server as its real upstream (Upstream) and the simulator and
// synthesizer answering in CallToolResult's shape (Reshape). A call of a
// session the server has not followed (invoke.CallMetaReplayed) skips
// the server. Close stops the server's client.
type Backend struct {
	live, sim toolenv.Handler
	up        *Upstream
	route     toolenv.Handler // the chain's upstream: up, or up routed by session
	fail      bool
	client    *Client
	iso       *isolated // nil: one instance shared by every session
}

var _ toolenv.Handler = (*Backend)(nil)

// BackendOptions configure NewBackend.
type BackendOptions struct {
	// Client reaches the server; nil serves documentation only (the
	// cache, then the simulator).
	Client *Client
	// UpstreamTimeout bounds one call to the server (0: the call's own
	// deadline only).
	UpstreamTimeout time.Duration
	// Virtual configures the simulator and synthesizer stages (its
	// upstream fields are ignored).
	Virtual virtual.Options
	// FailOnServerError returns the server's failure (down, crashed, hung,
	// too large) instead of simulating, so that failover can send the call
	// elsewhere; calls the server has not followed (replayed sessions) are
	// still simulated.
	FailOnServerError bool
	// Pool, when set, isolates the server: each session (an episode)
	// gets an instance of its own from it, released when the session
	// ends (DropSession); calls without a session go to Client. Close
	// closes it.
	Pool *Pool
}

// NewBackend composes the backend.
func NewBackend(opts BackendOptions) (*Backend, error) {
	v := opts.Virtual
	v.UpstreamURL, v.UpstreamDirect, v.Upstream = "", false, nil
	v.Reshape = Reshape
	sim, err := virtual.Build(v)
	if err != nil {
		return nil, fmt.Errorf("mcp backend: %w", err)
	}
	b := &Backend{sim: sim, client: opts.Client}
	if opts.Client == nil {
		return b, nil
	}
	b.up = NewUpstream(opts.Client, opts.UpstreamTimeout)
	b.fail = opts.FailOnServerError
	b.route = b.up
	if opts.Pool != nil {
		b.iso = newIsolated(opts.Pool, opts.Client)
		b.route = &routedUpstream{Upstream: b.up, iso: b.iso}
	}
	v.Upstream = b.route
	if b.live, err = virtual.Build(v); err != nil {
		return nil, fmt.Errorf("mcp backend: %w", err)
	}
	return b, nil
}

// Invoke answers the call: from the server when it is live and follows
// the session, else from the simulator chain, marked.
func (b *Backend) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	switch {
	case b.live == nil:
		r := b.sim.Invoke(ctx, call)
		r.SetMeta(MetaNotLive, "no_server")
		return r
	case b.iso != nil && b.iso.failed(call.Session) != "":
		return infraFailure(b.client.Name(), InfraInstanceExited, b.iso.failed(call.Session))
	case call.Meta[invoke.CallMetaReplayed] == "true":
		r := b.sim.Invoke(ctx, call)
		r.SetMeta(MetaNotLive, "replayed")
		r.Warnings = append(r.Warnings, ReplayedWarning)
		return r
	case b.iso != nil:
		return b.invokeIsolated(ctx, call)
	}
	return b.invokeShared(ctx, call)
}

// invokeShared answers a call through the chain: the server, then the
// simulator (or, with FailOnServerError, the server's failure).
func (b *Backend) invokeShared(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	if b.fail {
		return b.route.Invoke(ctx, call)
	}
	return b.live.Invoke(ctx, call)
}

// Client returns the server's client, nil for documentation only.
func (b *Backend) Client() *Client { return b.client }

// Close stops the server's client and its episodes' instances.
func (b *Backend) Close() error {
	if b.iso != nil {
		b.iso.pool.Close()
	}
	if b.client != nil {
		return b.client.Close()
	}
	return nil
}

// LiveUpstream is the upstream of a collection's own server, started by
// DialUpstream; Close stops the server.
type LiveUpstream struct {
	*Upstream
	client *Client
}

// Close stops the server.
func (l *LiveUpstream) Close() error { return l.client.Close() }

// DialUpstream starts the server an MCP collection's Backend.Config names
// (the collection folder toolenv mcp save writes), waits for it to list
// its tools, and returns the upstream that calls it, each call bounded by
// timeout: the real API alone, for collecting real answers (toolenv
// mirror). A collection with no server is an error.
func DialUpstream(ctx context.Context, c *toolenv.Collection, timeout time.Duration, opts Options) (*LiveUpstream, error) {
	var cfg BackendConfig
	if len(c.Backend.Config) > 0 {
		if err := json.Unmarshal(c.Backend.Config, &cfg); err != nil {
			return nil, fmt.Errorf("collection %s: backend config: %w", c.Name, err)
		}
	}
	if cfg.Server == nil {
		return nil, fmt.Errorf("collection %s holds an MCP server's documentation only (no server to call)", c.Name)
	}
	s := *cfg.Server
	s.Name = c.Name
	cl, err := Start(ctx, &s, opts)
	if err != nil {
		return nil, err
	}
	if _, err := cl.Ready(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	return &LiveUpstream{Upstream: NewUpstream(cl, timeout), client: cl}, nil
}
