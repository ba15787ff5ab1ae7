package environment

import (
	"context"
	"fmt"
	"io"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/mcpsource"
	"github.com/toolenv/toolenv/backend/sqlrest"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/drift"
)

// BackendTypes are the values of a collection's Backend.Type that Open
// can serve ("" means virtual).
var BackendTypes = []string{"virtual", sqltools.BackendType, sqlrest.BackendType, drift.BackendType, mcpsource.BackendType}

// newBackend builds c's backend, registering anything it must close.
func (env *Environment) newBackend(ctx context.Context, c *toolenv.Collection) (toolenv.Handler, error) {
	var build func(context.Context, *toolenv.Collection) (toolenv.Handler, error)
	switch c.Backend.Type { // one line per backend
	case "", "virtual":
		build = env.newVirtualBackend
	case sqltools.BackendType:
		build = env.newSQLToolsBackend
	case sqlrest.BackendType:
		build = env.newSQLRestBackend
	case drift.BackendType:
		build = env.newDriftBackend
	case mcpsource.BackendType:
		build = env.newMCPBackend
	default:
		return nil, invalid("unknown backend type %q in collection.json (known: %s)", c.Backend.Type, strings.Join(BackendTypes, ", "))
	}
	h, err := build(ctx, c)
	if err != nil {
		return nil, err
	}
	if cl, ok := h.(io.Closer); ok {
		env.closeMu.Lock()
		env.closers = append(env.closers, cl)
		env.closeMu.Unlock()
	}
	return h, nil
}

// newVirtualBackend answers documented APIs: the real upstream when one is
// configured, then the LLM simulator when one is, then the offline
// synthesizer (backend/virtual).
func (env *Environment) newVirtualBackend(ctx context.Context, c *toolenv.Collection) (toolenv.Handler, error) {
	cfg := &env.Config
	opts := virtual.Options{
		UpstreamURL: cfg.Upstream.URL, ToolbenchKey: env.secret(cfg.Upstream.ToolbenchKey, cfg.Upstream.KeyEnv),
		UpstreamDirect: cfg.Upstream.Direct, UpstreamTimeout: cfg.Upstream.Timeout,
		Model: cfg.Simulator.Model, Prompt: cfg.Simulator.Prompt,
		SimulatorBudget: cfg.Simulator.Budget, OnSimulatorFailure: cfg.Simulator.OnFailure,
		Breakers:       virtual.BreakerOptions{Failures: cfg.Breakers.Failures, Cooldown: cfg.Breakers.Cooldown},
		MaxAnswerBytes: cfg.MaxResultBytes,
		Examples:       env.Store, Tools: c.Tools, Logger: env.log,
	}
	if env.llm != nil {
		opts.LLM = env.llm
	}
	b, err := virtual.Build(opts)
	if err != nil {
		return nil, invalid("%v", err)
	}
	return b, nil
}

// newSQLToolsBackend serves SLOT and SEL collections built by "toolenv
// build bird".
func (env *Environment) newSQLToolsBackend(ctx context.Context, c *toolenv.Collection) (toolenv.Handler, error) {
	opts := sqltools.Options{Logger: env.log}
	opts.DB.Images, opts.DB.Cache = env.Config.Images, env.imageCache()
	if env.Sessions != nil {
		opts.Log = env.Sessions
	}
	return sqltools.Open(ctx, c, opts)
}

// newSQLRestBackend serves REST collections built by "toolenv build bird".
func (env *Environment) newSQLRestBackend(ctx context.Context, c *toolenv.Collection) (toolenv.Handler, error) {
	opts := sqlrest.Options{Logger: env.log}
	opts.DB.Images, opts.DB.Cache = env.Config.Images, env.imageCache()
	if env.Sessions != nil {
		opts.Log = env.Sessions // the sessions' worlds (writable collections)
	}
	return sqlrest.Open(ctx, c, opts)
}

// newDriftBackend builds the backend of a drifted collection: the backend
// of its base collection (read from its base/ folder, resolving relative
// paths against the folder the base came from), which the enforcement
// middleware hands calls translated to the base tools.
func (env *Environment) newDriftBackend(ctx context.Context, c *toolenv.Collection) (toolenv.Handler, error) {
	l, err := drift.Open(c)
	if err != nil {
		return nil, err
	}
	if drift.IsDrifted(l.Base) {
		return nil, fmt.Errorf("drifted collection %s: its base is drifted too", c.Name)
	}
	h, err := env.newBackend(ctx, l.Base)
	if err != nil {
		return nil, fmt.Errorf("the base backend (%s) of drifted collection %s: %w", l.Base.Backend.Type, c.Name, err)
	}
	// newBackend registered h's Close; the wrapper hides it from the
	// caller's.
	return &driftBackend{Handler: h, lineage: l}, nil
}

// driftBackend is a drifted collection's backend: its base collection's,
// with the lineage the enforcement middleware reuses.
type driftBackend struct {
	toolenv.Handler
	lineage *drift.Lineage
}

// Unwrap returns the base collection's backend, for what its sessions
// offer (dropping, pinning and rolling back an episode's session).
func (d *driftBackend) Unwrap() toolenv.Handler { return d.Handler }

// imageCache is the on-disk cache of the databases' indexed images the
// configuration names, or nil.
func (env *Environment) imageCache() *rodb.DiskCache {
	return rodb.CacheAt(env.Config.ImageCache, env.log)
}
