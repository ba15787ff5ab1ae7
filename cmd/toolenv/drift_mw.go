package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/faults"
)

// registerDriftFlags adds the flags of drift enforcement and faults to
// the environment flags (serve, mcp, eval).
func registerDriftFlags(fs *pflag.FlagSet, f *envFlags) {
	fs.StringVar(&f.driftMode, "drift-mode", "", "mode of drifted collections, overriding their policy: strict (reject calls written against older versions) or compat (translate them, with a deprecation warning)")
	fs.StringVar(&f.faults, "faults", "", "operational faults to inject: a JSON file or inline JSON (latency, timeouts, rate limits, 5xx, flaky windows per collection/tool; see docs/drift.md)")
	fs.BoolVar(&f.docsTool, "docs-tool", false, "add the tool "+drift.DocsToolName+" to every collection: it returns the current documentation of an API (old names resolve) and what changed")
	fs.StringVar(&f.feedback, "feedback", "", "how much a rejected call is told, for calls that do not ask (?_feedback=): none, terse or helpful (default: each collection's policy)")
}

// driftMiddleware returns the fault injector (first: faults hit every
// call), the feedback override, and the enforcement middleware of the
// drifted collections loaded (backend type "drift").
func driftMiddleware(ctx context.Context, f *envFlags, env *environment, e *env) (before, after []toolenv.Middleware, err error) {
	switch f.driftMode {
	case "", drift.ModeStrict, drift.ModeCompat:
	default:
		return nil, nil, usagef("--drift-mode %q: want strict or compat", f.driftMode)
	}
	switch f.feedback {
	case "", toolenv.FeedbackNone, toolenv.FeedbackTerse, toolenv.FeedbackHelpful:
	default:
		return nil, nil, usagef("--feedback %q: want none, terse or helpful", f.feedback)
	}
	if f.faults != "" {
		cfg, err := faults.ReadConfig(f.faults)
		if err != nil {
			return nil, nil, usageError{err}
		}
		inj, err := faults.New(cfg, faults.Options{Logger: env.log})
		if err != nil {
			return nil, nil, usageError{err}
		}
		before = append(before, inj.Middleware())
		env.log.Info("injecting faults", "rules", len(cfg.Rules), "seed", cfg.Seed)
	}
	if mw := drift.FeedbackLevel(f.feedback); mw != nil {
		before = append(before, mw)
	}
	var lineages, all []*drift.Lineage
	for _, c := range env.registry.Collections() {
		if !drift.IsDrifted(c) {
			all = append(all, drift.NewLineage(c))
			continue
		}
		var l *drift.Lineage
		if b, ok := env.registry.Backend(c.Name).(*driftBackend); ok {
			l = b.lineage // opened (and verified) once, by newDriftBackend
		} else if l, err = drift.Open(c); err != nil {
			return nil, nil, err
		}
		lineages, all = append(lineages, l), append(all, l)
		env.log.Info("enforcing drifted collection", "collection", c.Name, "version", c.Version, "base", l.Manifest.BaseVersion,
			"mode", orDefaultString(f.driftMode, c.Policy.Mode), "validation", c.Policy.Validation)
	}
	if f.docsTool {
		// After the lineages are opened: the tool is not in tools.json.
		for _, c := range env.registry.Collections() {
			drift.AddDocsTool(c)
		}
		before = append(before, drift.NewDocs(all...).Middleware())
	}
	if len(lineages) > 0 {
		enf := drift.NewEnforcer(drift.EnforcerOptions{Mode: f.driftMode, Cache: env.store, Logger: env.log}, lineages...)
		before = append(before, enf.Before())
		after = append(after, enf.After())
	}
	return before, after, nil
}

// newDriftBackend builds the backend of a drifted collection: the backend
// of its base collection (read from its base/ folder, resolving relative
// paths against the folder the base came from), which the enforcement
// middleware hands calls translated to the base tools.
func newDriftBackend(ctx context.Context, c *toolenv.Collection, f *envFlags, env *environment, e *env) (toolenv.Handler, error) {
	l, err := drift.Open(c)
	if err != nil {
		return nil, err
	}
	if drift.IsDrifted(l.Base) {
		return nil, fmt.Errorf("drifted collection %s: its base is drifted too", c.Name)
	}
	var mk backendMaker = factoryTable{}
	h, err := mk.build(ctx, l.Base, f, env, e)
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

// backendMaker builds a collection's backend. newDriftBackend calls
// newBackend through it: backendFactories lists newDriftBackend, and a
// direct call would make the table's initialisation refer to itself.
type backendMaker interface {
	build(ctx context.Context, c *toolenv.Collection, f *envFlags, env *environment, e *env) (toolenv.Handler, error)
}

type factoryTable struct{}

func (factoryTable) build(ctx context.Context, c *toolenv.Collection, f *envFlags, env *environment, e *env) (toolenv.Handler, error) {
	return newBackend(ctx, c, f, env, e)
}

func orDefaultString(v, d string) string {
	if v == "" {
		return d
	}
	return v
}
