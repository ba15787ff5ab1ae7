package main

import (
	"context"
	"io"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
)

// backendFactory builds the backend of one collection.
type backendFactory func(ctx context.Context, c *toolenv.Collection, f *envFlags, env *environment, e *env) (toolenv.Handler, error)

// backendFactories maps a collection's Backend.Type to its factory: one
// line per backend.
var backendFactories = map[string]backendFactory{
	"virtual":  newVirtualBackend,
	"sqltools": newSQLToolsBackend,
	"sqlrest":  newSQLRestBackend,
	"drift":    newDriftBackend,
}

// newBackend builds c's backend, registering anything it must close.
func newBackend(ctx context.Context, c *toolenv.Collection, f *envFlags, env *environment, e *env) (toolenv.Handler, error) {
	typ := c.Backend.Type
	if typ == "" {
		typ = "virtual"
	}
	mk, ok := backendFactories[typ]
	if !ok {
		known := make([]string, 0, len(backendFactories))
		for k := range backendFactories {
			known = append(known, k)
		}
		sort.Strings(known)
		return nil, usagef("unknown backend type %q in collection.json (known: %s)", typ, strings.Join(known, ", "))
	}
	h, err := mk(ctx, c, f, env, e)
	if err != nil {
		return nil, err
	}
	if cl, ok := h.(io.Closer); ok {
		env.closers = append(env.closers, cl)
	}
	return h, nil
}

// newVirtualBackend answers documented APIs. Provisional: only the offline
// synthesizer until backend/virtual (upstream → simulator → synthesizer)
// lands and replaces this body.
func newVirtualBackend(ctx context.Context, c *toolenv.Collection, f *envFlags, env *environment, e *env) (toolenv.Handler, error) {
	return simulate.NewSynthesizer(simulate.SynthOptions{Examples: env.store, Logger: env.log}), nil
}
