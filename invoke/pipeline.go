package invoke

import (
	"log/slog"
	"time"

	toolenv "github.com/toolenv/toolenv"
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
}

// New returns the standard pipeline over reg: every front-end invokes it.
func New(reg *Registry, opts Options) toolenv.Handler {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Observe is outside Recover so that metrics count a panicked call
	// with the internal error its client got.
	mws := []toolenv.Middleware{Observe(opts.Observer, log), Recover(log), Timeout(opts.Timeout)}
	mws = append(mws, opts.BeforeValidate...)
	// Lenient (ToolBench) collections look the cache up before validation,
	// as StableToolBench does; strict ones only after it (below).
	mws = append(mws, LenientCache(opts.Cache, opts.Validator, log), Validate(opts.Validator))
	mws = append(mws, opts.AfterValidate...)
	// Limit runs on both sides of the cache: below it, so an oversized
	// answer is never stored; above it, so an entry stored before the limit
	// was lowered (or imported) is not served either.
	mws = append(mws, Limit(opts.MaxResultBytes), NewCacheMiddleware(opts.Cache, CacheOptions{Logger: log, Fleet: opts.Fleet}), Limit(opts.MaxResultBytes))
	return toolenv.Chain(reg, mws...)
}
