package invoke

import (
	"context"
	"log/slog"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
)

// Cache is what the cache middleware needs of a store. *store.Store
// implements it.
type Cache interface {
	Get(ctx context.Context, tool, args string) (*store.Entry, bool, error)
	Put(ctx context.Context, e *store.Entry) (bool, error)
}

var _ Cache = (*store.Store)(nil)

// MetaCacheable is the Result.Meta key a backend sets to "false" to keep a
// successful result out of the cache (a simulated answer that failed its
// checks, a response that depends on time).
const MetaCacheable = "cacheable"

// MetaOrigin is the Result.Meta key that says where a cached answer first
// came from.
const MetaOrigin = "origin"

// CacheMiddleware serves calls to collections whose policy enables caching
// from c, keyed by tool ID and canonical arguments, and stores successful
// answers from the real upstream and the simulator. Answers from the
// offline synthesizer are not stored: they are deterministic anyway, and
// must never pass for recorded ones once a simulator is configured.
// Concurrent misses of the same key make one backend call.
//
// A store failure never fails a call: it is logged and the call goes on.
func CacheMiddleware(c Cache, log *slog.Logger) toolenv.Middleware {
	if c == nil {
		return nil
	}
	var flight group
	return func(next toolenv.Handler) toolenv.Handler {
		return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
			if call.Tool == nil || !policyOf(call).Cache {
				return next.Invoke(ctx, call)
			}
			canon, err := toolenv.Canonical(call.Args)
			if err != nil {
				return toolenv.Errorf(toolenv.StatusInvalidArguments, "send arguments as a JSON object", "arguments cannot be encoded: %v", err)
			}
			tool, args := call.Tool.ID, string(canon)
			if !call.Options.NoCache {
				if e, ok, err := c.Get(ctx, tool, args); err != nil {
					log.Warn("cache read failed; calling the backend", "tool", tool, "err", err)
				} else if ok {
					return fromEntry(e)
				}
			}
			res, _ := flight.do(ctx, tool+"\x00"+args, func() *toolenv.Result {
				res := next.Invoke(ctx, call)
				if cacheable(res) {
					e := &store.Entry{Tool: tool, Args: args, Status: res.Status, Body: res.Body, Error: res.Error, Origin: string(res.Source)}
					if _, err := c.Put(context.WithoutCancel(ctx), e); err != nil {
						log.Warn("cache write failed; the answer is served but not kept", "tool", tool, "err", err)
					}
				}
				return res
			})
			return res
		})
	}
}

func cacheable(res *toolenv.Result) bool {
	if !res.OK() || res.Meta[MetaCacheable] == "false" || len(res.Body) == 0 {
		return false
	}
	return res.Source == toolenv.SourceUpstream || res.Source == toolenv.SourceSimulator
}

func fromEntry(e *store.Entry) *toolenv.Result {
	r := &toolenv.Result{Status: e.Status, Body: e.Body, Error: e.Error, Source: toolenv.SourceCache}
	r.SetMeta(MetaOrigin, e.Origin)
	return r
}

// group runs one function per key at a time and shares its result with
// concurrent callers of the same key.
type group struct {
	mu sync.Mutex
	m  map[string]*flightCall
}

type flightCall struct {
	done chan struct{}
	res  *toolenv.Result // a snapshot nobody mutates; waiters clone it; nil if fn panicked
	// abandoned says the call failed because its caller's context ended:
	// its result belongs to that caller alone.
	abandoned bool
}

// do runs fn for key, or waits for the run already in flight and shares
// its result. A waiter depends on its own ctx only: it stops waiting when
// ctx ends, and when the run it waited for failed because that caller's
// context ended, it runs fn again rather than inherit the failure. ctx is
// the context fn runs under.
func (g *group) do(ctx context.Context, key string, fn func() *toolenv.Result) (res *toolenv.Result, shared bool) {
	for {
		if err := ctx.Err(); err != nil {
			return toolenv.ResultOf(err), false
		}
		g.mu.Lock()
		if g.m == nil {
			g.m = map[string]*flightCall{}
		}
		c, ok := g.m[key]
		if !ok {
			break
		}
		g.mu.Unlock()
		select {
		case <-c.done:
		case <-ctx.Done():
			return toolenv.Errorf(toolenv.StatusOf(ctx.Err()), "", "gave up waiting for the same call already in flight: %v", ctx.Err()), true
		}
		switch {
		case c.res == nil:
			return toolenv.Errorf(toolenv.StatusInternal, "this is a bug in toolenv; the server log has the details", "the same call in flight failed unexpectedly"), true
		case c.abandoned:
			continue // that caller went away; try again for this one
		}
		return c.res.Clone(), true
	}
	c := &flightCall{done: make(chan struct{})}
	g.m[key] = c
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.m, key)
		g.mu.Unlock()
		close(c.done)
	}()
	res = fn()
	c.abandoned = !res.OK() && ctx.Err() != nil
	c.res = res.Clone()
	return res, false
}
