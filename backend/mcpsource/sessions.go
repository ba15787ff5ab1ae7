package mcpsource

import (
	"context"
	"fmt"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/upstream"
)

// exitNotice bounds the wait, after a call failed with a broken
// connection, for the instance's client to notice that its server
// exited (Once: it then stops for good).
const exitNotice = 5 * time.Second

// exits reports whether the instance's client stops within d.
func (in *Instance) exits(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-in.client.Exited():
		return true
	case <-t.C:
		return false
	}
}

// infraFailure is the result of a call whose episode lost its instance.
func infraFailure(server, kind, why string) *toolenv.Result {
	r := &toolenv.Result{Status: toolenv.StatusUnavailable, Source: toolenv.SourceUpstream,
		Error: fmt.Sprintf("MCP server %s: this episode's own instance %s; the episode's state is lost with it, so the episode cannot go on", server, why),
		Hint:  "start a new episode (the pool replaces the instance): this failure is the environment's, not the agent's"}
	r.SetMeta(MetaInfraFailure, kind)
	r.SetMeta(upstream.MetaClass, string(upstream.ClassNotConnected))
	r.SetMeta(upstream.MetaCacheable, "false")
	return r
}

// routedUpstream is an isolated server's upstream in backend/virtual's
// chain: a call without a session goes to the shared client, a session
// that has no instance (the server does not start) fails as a server
// that is down, so that the chain answers from the simulator.
type routedUpstream struct {
	*Upstream
	iso *isolated
}

func (u *routedUpstream) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	if call == nil || call.Tool == nil {
		return toolenv.Errorf(toolenv.StatusUnknownTool, "", "mcp upstream: the call has no tool")
	}
	if call.Session == "" {
		return u.invokeOn(ctx, u.iso.shared, call)
	}
	if w := u.iso.lookup(call.Session); w != nil && w.inst != nil {
		return u.invokeOn(ctx, w.inst.client, call)
	}
	cause := "it has no instance"
	if w := u.iso.lookup(call.Session); w != nil && w.err != nil {
		cause = w.err.Error()
	}
	return failure(ctx, fmt.Errorf("%w (%s): this session's instance: %s", ErrDown, u.client.Name(), cause))
}

// invokeIsolated answers a call of an isolated server: on the session's
// own instance, never falling through to the simulator once the
// instance has served the session (its answers would not be the
// session's state); a session whose server does not start goes through
// the chain, as a shared server's calls do when it is down.
func (b *Backend) invokeIsolated(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	name := b.client.Name()
	if call.Session == "" {
		return b.invokeShared(ctx, call)
	}
	w, res := b.iso.worldFor(ctx, call.Session)
	if res != nil {
		return res
	}
	if why := w.failure(); why != "" {
		return infraFailure(name, InfraInstanceExited, why)
	}
	if w.inst == nil {
		return b.invokeShared(ctx, call)
	}
	start := time.Now()
	r := b.up.invokeOn(ctx, w.inst.client, call)
	if r.OK() || r.Meta[MetaRPCCode] != "" || r.Status == toolenv.StatusCanceled {
		return r
	}
	if r.Status != toolenv.StatusTimeout && w.inst.exits(exitNotice) || !w.inst.Alive() {
		why := w.fail(fmt.Sprintf("exited after %s of this call: %s", time.Since(start).Round(time.Millisecond), w.inst.exitCause()))
		return infraFailure(name, InfraInstanceExited, why)
	}
	if r.Status == toolenv.StatusTimeout {
		r.SetMeta(MetaInfraFailure, InfraTimeout)
	}
	return r
}

// StartSession starts session id (an episode) from init: on an isolated
// server, it hands the session a fresh instance now, its folder seeded
// from init.Files (a folder, its path resolved), reset as the isolation
// says, so that the episode's first call does not wait. On a shared
// server it does nothing, and initial files are an error (they need an
// instance of the episode's own). Bad input and an episode that can get
// no instance (every one in use, a failed reset) are *toolenv.Error
// values; a server that does not start is not an error (the session is
// answered from recordings and the simulator, as a shared server's
// calls are when it is down).
func (b *Backend) StartSession(ctx context.Context, id string, init *toolenv.InitialState) error {
	name := "this MCP collection"
	if b.client != nil {
		name = "MCP server " + b.client.Name()
	}
	var files string
	if init != nil {
		switch {
		case init.SQL != "" || init.Database != "":
			return toolenv.Errorw(toolenv.StatusInvalidArguments, "seed an MCP server with initial_state.files", "initial_state.sql and initial_state.database start SQL collections; %s takes files", name)
		case init.Name != "":
			return toolenv.Errorw(toolenv.StatusInvalidArguments, "give its files (initial_state.files)", "%s declares no named initial states (initial_state.name %q)", name, init.Name)
		}
		files = init.Files
	}
	if b.iso == nil {
		if files != "" {
			return toolenv.Errorw(toolenv.StatusInvalidArguments, "serve the server with isolation episode (--mcp-isolation NAME=episode, or \"isolation\": \"episode\" in its mcpServers entry)",
				"initial_state.files seeds the folder of an episode's own instance, and %s is shared by every episode", name)
		}
		return nil
	}
	return b.iso.start(ctx, id, files)
}

// DropSession releases session id's instance (stopping it and removing
// its folder, unless the isolation keeps folders); it reports whether
// the session had one. server.DropSessions calls it when a session or an
// episode ends.
func (b *Backend) DropSession(id string) bool {
	if b.iso == nil {
		return false
	}
	return b.iso.drop(id)
}

// SessionOrigin names the state session id started from, for the cache
// keys of its calls (invoke.Episodes): "" on a shared server (whatever
// state the server had), else a digest of the session's initial files
// and the reset made, so that recordings made from one initial state
// answer only episodes that start from it. world tells the session's
// instance from the one before when a session id is started again, so
// that its history starts again too.
func (b *Backend) SessionOrigin(id string) (origin string, world uint64) {
	if b.iso == nil {
		return "", 0
	}
	return b.iso.sessionOrigin(id)
}

// Warm starts an isolated server's instances ahead of the first
// episodes (Pool.Warm); a shared server's backend does nothing.
func (b *Backend) Warm() {
	if b.iso != nil {
		b.iso.pool.Warm()
	}
}

// Pool returns the pool of an isolated server's instances, nil for a
// shared server.
func (b *Backend) Pool() *Pool {
	if b.iso == nil {
		return nil
	}
	return b.iso.pool
}

// InstanceDir returns the folder of session id's own instance ("" when
// it has none): where its state files are, for inspection and tests.
func (b *Backend) InstanceDir(id string) string {
	if b.iso == nil {
		return ""
	}
	if w := b.iso.lookup(id); w != nil {
		select {
		case <-w.ready:
			if w.inst != nil {
				return w.inst.Dir()
			}
		default:
		}
	}
	return ""
}
