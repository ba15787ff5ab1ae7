package mcpsource

import (
	"context"
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
	client    *Client
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
	v.Upstream = NewUpstream(opts.Client, opts.UpstreamTimeout)
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
	case call.Meta[invoke.CallMetaReplayed] == "true":
		r := b.sim.Invoke(ctx, call)
		r.SetMeta(MetaNotLive, "replayed")
		r.Warnings = append(r.Warnings, ReplayedWarning)
		return r
	}
	return b.live.Invoke(ctx, call)
}

// Client returns the server's client, nil for documentation only.
func (b *Backend) Client() *Client { return b.client }

// Close stops the server's client.
func (b *Backend) Close() error {
	if b.client != nil {
		return b.client.Close()
	}
	return nil
}
