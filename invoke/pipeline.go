package invoke

import (
	"context"
	"log/slog"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/validate"
)

// Options configure the standard pipeline.
type Options struct {
	// Logger logs panics, cache failures and (at debug level) every call;
	// nil discards.
	Logger *slog.Logger
	// Observer is told about every call (metrics); may be nil.
	Observer Observer
	// Timeout bounds each call; 0 means none.
	Timeout time.Duration
	// Validator checks arguments; nil means a fresh one.
	Validator *validate.Validator
	// Cache serves and stores answers for collections whose policy
	// enables it; nil disables caching.
	Cache Cache
	// Fleet, when set, makes the processes sharing Cache's store answer
	// each missing key once (replicas on one PostgreSQL).
	Fleet *Fleet
	// MaxResultBytes rejects larger results; 0 means no limit.
	MaxResultBytes int
	// BeforeValidate runs before validation (e.g. drift compat mode,
	// which translates calls written against an older schema).
	BeforeValidate []toolenv.Middleware
	// AfterValidate runs after validation and before the cache (drift's
	// translation to recorded keys, faults, failover).
	AfterValidate []toolenv.Middleware
	// flightWaiting: see CacheOptions.waiting (tests only).
	flightWaiting func()
}

// New returns the standard pipeline over reg: every front-end invokes it.
func New(reg *Registry, opts Options) toolenv.Handler {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Observe is outside Recover so that metrics count a panicked call
	// with the internal error its client got.
	// Limit runs on both sides of the caches: above both, so an entry
	// stored before the limit was lowered (or imported) is not served,
	// whichever cache finds it; below the cache, so an oversized answer
	// is never stored.
	mws := []toolenv.Middleware{Observe(opts.Observer, log), Recover(log), Timeout(opts.Timeout), Limit(opts.MaxResultBytes)}
	mws = append(mws, opts.BeforeValidate...)
	// Lenient (ToolBench) collections look the cache up before validation,
	// as StableToolBench does; strict ones only after it (below).
	mws = append(mws, LenientCache(opts.Cache, opts.Validator, log), Validate(opts.Validator))
	mws = append(mws, opts.AfterValidate...)
	if opts.Cache != nil {
		// Tools whose answers depend on state are keyed by their
		// session's history (toolenv.MetaState); the others pass.
		mws = append(mws, Episodes(EpisodeOptions{Origin: RegistryOrigin(reg)}))
	}
	mws = append(mws, NewCacheMiddleware(opts.Cache, CacheOptions{Logger: log, Fleet: opts.Fleet, waiting: opts.flightWaiting}), Limit(opts.MaxResultBytes))
	h := toolenv.Chain(reg, mws...)
	mem, _ := opts.Cache.(exactMemory)
	if mem == nil || len(opts.BeforeValidate) > 0 {
		return h
	}
	writes, _ := opts.Cache.(interface{ Writes() uint64 })
	return &pipeline{Handler: h, mem: mem, writes: writes, obs: opts.Observer, log: log, max: opts.MaxResultBytes}
}

// CachedInvoker is implemented by the pipeline New returns when a call's
// answer can be read from the cache's memory before anything else runs.
// A front-end that knows the client's exact key (CallMetaExactKey) asks
// it first, and invokes the pipeline when it reports no hit.
type CachedInvoker interface {
	// InvokeCached returns what Invoke would for call when the answer is
	// the entry recorded under the call's exact key and memory holds it;
	// otherwise it reports false and has done nothing.
	InvokeCached(ctx context.Context, call *toolenv.Call) (*toolenv.Result, bool)
	// InvokeCachedExact is InvokeCached for a call whose exact key is
	// exact, whatever its Meta holds (a front-end need not build a Meta
	// map for it).
	InvokeCachedExact(ctx context.Context, call *toolenv.Call, exact string) (*toolenv.Result, bool)
	// InvokeCachedHit is InvokeCachedExact for a front-end that keeps
	// what it found beside the call: pass back the ExactHit an identical
	// call (the same tool, collection and exact key) returned, and while
	// nothing has been written to the cache since, its entry is the
	// answer again without looking it up. It returns the hit to keep
	// (nil when there is nothing to keep).
	InvokeCachedHit(ctx context.Context, call *toolenv.Call, exact string, hint *ExactHit) (*toolenv.Result, *ExactHit, bool)
	// ReplayHit is InvokeCachedHit for a front-end that kept the answer
	// it made of hint's result the first time: while hint holds for call
	// (as InvokeCachedHit checks it) it observes the call as
	// InvokeCachedHit does and reports true, and the front-end answers
	// again what it kept; otherwise it reports false, having done
	// nothing. It builds no result: observers are shown one made once
	// for hint, the same for every replay (see Observer).
	ReplayHit(ctx context.Context, call *toolenv.Call, exact string, hint *ExactHit) bool
	// ReplayPrepared is ReplayHit for a front-end that keeps hint beside
	// the call it was found for, and asks it again only for an identical
	// call (the same tool, collection, exact key, front-end and options,
	// the same Meta): it needs no Call. It replays hint only when nothing
	// needs the call itself, that is when the observer prepared the
	// hint's replays (ReplayObserver) and calls are not logged (debug
	// level): it observes the replay with a duration of zero (its work is
	// a comparison, cheaper than reading the clock) and reports true.
	// Otherwise, or when hint no longer holds, it reports false, having
	// done nothing, and the front-end asks ReplayHit with the call.
	ReplayPrepared(ctx context.Context, hint *ExactHit) bool
}

// ExactHit is an entry found in memory under a call's exact key, with
// what it was found for and the cache's write count before it was looked
// up: any write through the cache since (a replacement, a delete, a new
// entry) makes it void, so it is never served after its key may have
// changed. An entry evicted from memory since is still the store's, and
// still served. Its fields are unexported: only InvokeCachedHit makes
// and reads it.
type ExactHit struct {
	entry  *store.Entry
	tool   *toolenv.Tool
	coll   *toolenv.Collection
	exact  string
	writes uint64
	// res is the entry's result as InvokeCachedHit returns it, shown to
	// observers by ReplayHit; it is never changed. observe is what the
	// observer prepared for replays of the hit from frontend (see
	// ReplayObserver), or nil.
	res      *toolenv.Result
	frontend string
	observe  func(time.Duration)
}

// Size is the memory the hit holds beyond its key: its entry's answer.
func (h *ExactHit) Size() int { return len(h.entry.Body) + len(h.entry.Error) + len(h.entry.Origin) }

// pipeline is the standard pipeline with its in-memory exact hits served
// directly: with nothing configured before validation, a lenient
// cacheable collection's call goes from Observe (through Recover and
// Timeout, which change nothing about an answer found at once) straight
// to LenientCache, whose first step is this lookup.
type pipeline struct {
	toolenv.Handler
	mem    exactMemory
	writes interface{ Writes() uint64 } // the cache's write count, for ExactHits; may be nil
	obs    Observer
	log    *slog.Logger
	max    int // MaxResultBytes: a larger entry goes through Limit
}

var _ CachedInvoker = (*pipeline)(nil)

// InvokeCached implements CachedInvoker.
func (p *pipeline) InvokeCached(ctx context.Context, call *toolenv.Call) (*toolenv.Result, bool) {
	return p.InvokeCachedExact(ctx, call, call.Meta[CallMetaExactKey])
}

// InvokeCachedExact implements CachedInvoker.
func (p *pipeline) InvokeCachedExact(ctx context.Context, call *toolenv.Call, exact string) (*toolenv.Result, bool) {
	res, _, ok := p.invokeCached(ctx, call, exact, nil, false)
	return res, ok
}

// ReplayPrepared implements CachedInvoker.
func (p *pipeline) ReplayPrepared(ctx context.Context, hint *ExactHit) bool {
	if hint == nil || hint.observe == nil || p.writes == nil || hint.writes != p.writes.Writes() || p.log.Enabled(ctx, slog.LevelDebug) {
		return false
	}
	hint.observe(0)
	return true
}

// InvokeCachedHit implements CachedInvoker.
func (p *pipeline) InvokeCachedHit(ctx context.Context, call *toolenv.Call, exact string, hint *ExactHit) (*toolenv.Result, *ExactHit, bool) {
	return p.invokeCached(ctx, call, exact, hint, true)
}

// invokeCached is InvokeCachedHit, which makes an ExactHit of what it
// finds only when keep says the caller keeps it.
func (p *pipeline) invokeCached(ctx context.Context, call *toolenv.Call, exact string, hint *ExactHit, keep bool) (*toolenv.Result, *ExactHit, bool) {
	start := time.Now()
	if p.holds(call, exact, hint) {
		res := fromEntry(hint.entry)
		observed(ctx, p.obs, p.log, call, res, time.Since(start))
		return res, hint, true
	}
	if call.Tool == nil || call.Options.NoCache || call.Tool.Meta[toolenv.MetaState] != "" && call.Tool.State() != toolenv.StateStateless {
		return nil, nil, false
	}
	if policy := policyOf(call); !policy.Cache || policy.Validation != toolenv.ValidationLenient {
		return nil, nil, false
	}
	if exact == "" {
		return nil, nil, false
	}
	var writes uint64
	if p.writes != nil {
		writes = p.writes.Writes() // before the lookup: a write after it voids what it finds
	}
	e, ok := p.mem.CachedExact(call.Tool.ID, exact)
	if !ok || p.max > 0 && len(e.Body) > p.max {
		return nil, nil, false
	}
	res := fromEntry(e)
	observed(ctx, p.obs, p.log, call, res, time.Since(start))
	var hit *ExactHit
	if keep && p.writes != nil {
		hit = &ExactHit{entry: e, tool: call.Tool, coll: call.Collection, exact: exact, writes: writes, res: fromEntry(e), frontend: call.Frontend}
		if ro, ok := p.obs.(ReplayObserver); ok {
			hit.observe = ro.ObserveReplays(call, hit.res)
		}
	}
	return res, hit, true
}

// holds reports whether hint is the answer to call, whose exact key is
// exact: it was found for the same tool, collection and key, and nothing
// has been written through the cache since. What else InvokeCachedHit
// checked before making it depends on the tool and collection alone.
func (p *pipeline) holds(call *toolenv.Call, exact string, hint *ExactHit) bool {
	return hint != nil && p.writes != nil && hint.tool == call.Tool && hint.coll == call.Collection && hint.exact == exact &&
		!call.Options.NoCache && hint.writes == p.writes.Writes()
}

// ReplayHit implements CachedInvoker.
func (p *pipeline) ReplayHit(ctx context.Context, call *toolenv.Call, exact string, hint *ExactHit) bool {
	start := time.Now()
	if !p.holds(call, exact, hint) {
		return false
	}
	elapsed := time.Since(start)
	switch {
	case hint.observe != nil && call.Frontend == hint.frontend:
		hint.observe(elapsed)
	case p.obs != nil:
		p.obs.Observe(call, hint.res, elapsed)
	}
	if p.log.Enabled(ctx, slog.LevelDebug) {
		observed(ctx, nil, p.log, call, fromEntry(hint.entry), elapsed)
	}
	return true
}
