package invoke

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
)

// Cache is what the cache middleware needs of a store. store.Store
// implements it.
type Cache interface {
	// Get returns the canonical entry for args.
	Get(ctx context.Context, tool, args string) (*store.Entry, bool, error)
	// GetExact returns the entry recorded under the exact key, else the
	// canonical entry for args.
	GetExact(ctx context.Context, tool, exact, args string) (*store.Entry, bool, error)
	// Put stores an entry unless its key is taken, reporting whether it
	// was stored.
	Put(ctx context.Context, e *store.Entry) (bool, error)
}

var _ Cache = (store.Store)(nil)

// MetaCacheable is the Result.Meta key a backend sets to "false" to keep a
// successful result out of the cache (a simulated answer that failed its
// checks, a response that depends on time).
const MetaCacheable = "cacheable"

// MetaOrigin is the Result.Meta key that says where a cached answer first
// came from.
const MetaOrigin = "origin"

// MetaStoreError is the Result.Meta key the cache middleware sets when
// the store failed during the call: "read" (the call failed fast),
// "write" (the answer was served but not kept, and the result carries a
// warning) or "claim" (the fleet's claim on the key could not be taken;
// the call failed fast). Metrics count it.
const MetaStoreError = "store_error"

// MetaStoredBy is the Result.Meta key set to "another_call" when this
// call's answer lost the race to store its key (another process or
// replica stored one first) and the stored answer was served instead.
const MetaStoredBy = "stored_by"

// CallMetaExactKey is the Call.Meta key a front-end sets to the client's
// own text of the arguments (order and value types included; for
// StableToolBench's /virtual, the Python repr of tool_input), so that the
// cache keeps and finds an answer under that exact key before falling
// back to the canonical one (see store.Entry.Exact).
const CallMetaExactKey = "exact_key"

// CallMetaExactOnly is the Call.Meta key that, set to "true", makes the
// cache answer the call from its exact key (CallMetaExactKey) alone:
// another call's answer under the same canonical arguments is a miss,
// not a fallback, and concurrent calls share a backend call only when
// their exact keys are equal. The episode middleware sets it on calls
// whose answers depend on the session's earlier calls.
const CallMetaExactOnly = "exact_only"

// CacheMiddleware serves calls to collections whose policy enables caching
// from c, keyed by tool ID and exact or canonical arguments, and stores
// successful answers from the real upstream and the simulator. Answers
// from the offline synthesizer are not stored: they are deterministic
// anyway, and must never pass for recorded ones once a simulator is
// configured. Concurrent misses of the same key make one backend call.
//
// One key has one answer, however many processes share the store: when
// another process stored an answer for the key first, that stored answer
// is served. A store that cannot be read fails the call fast
// (StatusUnavailable), since answering without it could contradict what
// it holds; an answer that cannot be stored is served with a warning
// saying so (and Meta[MetaStoreError] = "write").
func CacheMiddleware(c Cache, log *slog.Logger) toolenv.Middleware {
	return NewCacheMiddleware(c, CacheOptions{Logger: log})
}

// CacheOptions configure NewCacheMiddleware.
type CacheOptions struct {
	// Logger logs store failures; nil discards.
	Logger *slog.Logger
	// Fleet, when set, makes every process sharing the store answer a
	// missing key once (see Fleet); otherwise concurrent misses are
	// shared within this process only.
	Fleet *Fleet
	// waiting, when set, is called each time a call starts waiting for
	// the same call answered by another (in flight in this process, or
	// claimed by another process of the fleet): tests wait on it rather
	// than sleep.
	waiting func()
}

// NewCacheMiddleware is CacheMiddleware with options. It returns nil
// (no middleware) when c is nil.
func NewCacheMiddleware(c Cache, opts CacheOptions) toolenv.Middleware {
	if c == nil {
		return nil
	}
	m := &cacheMW{c: c, log: opts.Logger, fleet: opts.Fleet.withDefaults(), waiting: opts.waiting}
	m.flight.joined = opts.waiting
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	mem, _ := c.(exactMemory)
	return func(next toolenv.Handler) toolenv.Handler {
		return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
			if call.Tool == nil || !policyOf(call).Cache {
				return next.Invoke(ctx, call)
			}
			if mem != nil && !call.Options.NoCache {
				// An exact key's entry in memory needs no canonical key.
				if exact := call.Meta[CallMetaExactKey]; exact != "" {
					if e, ok := mem.CachedExact(call.Tool.ID, exact); ok {
						return fromEntry(e)
					}
				}
			}
			canon, err := call.CanonicalOf(call.Args)
			if err != nil {
				return toolenv.Errorf(toolenv.StatusInvalidArguments, "send arguments as a JSON object", "arguments cannot be encoded: %v", err)
			}
			k := cacheKey{tool: call.Tool.ID, args: canon, exact: call.Meta[CallMetaExactKey]}
			k.exactOnly = k.exact != "" && call.Meta[CallMetaExactOnly] == "true"
			if !call.Options.NoCache {
				if res, ok := m.lookup(ctx, k); ok {
					return res
				}
			}
			flight := k.tool + "\x00" + k.args
			if k.exactOnly {
				flight += "\x00" + k.exact
			}
			res, _ := m.flight.do(ctx, flight, func() *toolenv.Result {
				if m.fleet != nil && !k.exactOnly { // claims are keyed by canonical arguments
					return m.fleetAnswer(ctx, call, k, next)
				}
				// A flight that ended between this call's lookup and
				// its joining stored its answer: serve that one rather
				// than ask the backend again.
				if !call.Options.NoCache {
					if res, ok := m.lookup(ctx, k); ok {
						return res
					}
				}
				res, _ := m.answer(ctx, call, k, next)
				return res
			})
			return res
		})
	}
}

type cacheMW struct {
	c      Cache
	log    *slog.Logger
	fleet  *Fleet
	flight group
	// waiting: see CacheOptions.waiting.
	waiting func()
}

type cacheKey struct {
	tool, args, exact string
	exactOnly         bool // the exact key alone answers (CallMetaExactOnly)
}

// hit reports whether an entry the store returned for k answers it: any
// entry, unless k is exact-only and the entry is another key's.
func (k cacheKey) hit(e *store.Entry) bool { return !k.exactOnly || e.Exact == k.exact }

// lookup reads the cache: a hit, or (true) a failure result when the
// store cannot be read.
func (m *cacheMW) lookup(ctx context.Context, k cacheKey) (*toolenv.Result, bool) {
	e, ok, err := m.c.GetExact(ctx, k.tool, k.exact, k.args)
	if err != nil {
		if ctx.Err() != nil {
			return toolenv.ResultOf(ctx.Err()), true
		}
		m.log.Warn("cache read failed; the call fails fast", "tool", k.tool, "err", err)
		return storeFailure("read", err), true
	}
	if !ok || !k.hit(e) {
		return nil, false
	}
	return fromEntry(e), true
}

// storeFailure is the result of a call the store failed: what the
// client is told, without the store's address.
func storeFailure(op string, err error) *toolenv.Result {
	what := "the cache store failed"
	if errors.Is(err, store.ErrUnavailable) {
		what = "the cache store cannot be reached"
	}
	res := toolenv.Errorf(toolenv.StatusUnavailable, "retry shortly; the server's log has the cause",
		"%s (%s), so the call was not answered: answering without it could contradict a recorded answer", what, op)
	res.SetMeta(MetaStoreError, op)
	return res
}

// answer calls the backend and stores a cacheable answer. It reports
// whether the answer returned is in the store.
func (m *cacheMW) answer(ctx context.Context, call *toolenv.Call, k cacheKey, next toolenv.Handler) (*toolenv.Result, bool) {
	res := next.Invoke(ctx, call)
	if !cacheable(res) {
		return res, false
	}
	e := &store.Entry{Tool: k.tool, Args: k.args, Exact: k.exact, Status: res.Status, Body: res.Body, Error: res.Error, Origin: string(res.Source)}
	wctx := context.WithoutCancel(ctx)
	stored, err := m.c.Put(wctx, e)
	switch {
	case err != nil:
		m.log.Warn("cache write failed; the answer is served but not kept", "tool", k.tool, "err", err)
		res.Warnings = append(res.Warnings, "toolenv could not store this answer in its cache ("+storeErrText(err)+"): the next identical call may get a different answer")
		res.SetMeta(MetaStoreError, "write")
		return res, false
	case stored:
		return res, stored
	}
	// Another process stored an answer for this key first: serve that one,
	// so that every caller of the key gets one answer.
	won, ok, err := m.c.GetExact(wctx, k.tool, k.exact, k.args)
	if err != nil || !ok || !k.hit(won) {
		m.log.Warn("the answer stored by another process cannot be read; serving this one", "tool", k.tool, "err", err)
		return res, false
	}
	out := fromEntry(won)
	out.SetMeta(MetaStoredBy, "another_call")
	return out, true
}

// storeErrText names a store failure for a client, without the store's
// address.
func storeErrText(err error) string {
	switch {
	case errors.Is(err, store.ErrUnavailable):
		return "the store cannot be reached"
	case errors.Is(err, context.DeadlineExceeded):
		return "the store did not answer in time"
	}
	msg := strings.ToLower(err.Error())
	for _, full := range []string{"database or disk is full", "disk full", "no space left on device", "file too large", "read-only"} {
		if strings.Contains(msg, full) {
			return "the store's disk is full or read-only"
		}
	}
	return "the store refused the write"
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
	// joined, when set, is called when a caller starts waiting for a
	// run already in flight.
	joined func()
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
		if g.joined != nil {
			g.joined()
		}
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
