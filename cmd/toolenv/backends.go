package main

import (
	"context"
	"io"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/virtual"
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

// newVirtualBackend answers documented APIs: the real upstream when one is
// configured, then the LLM simulator when one is, then the offline
// synthesizer (backend/virtual).
func newVirtualBackend(ctx context.Context, c *toolenv.Collection, f *envFlags, env *environment, e *env) (toolenv.Handler, error) {
	opts := virtual.Options{
		UpstreamURL: f.upstreamURL, ToolbenchKey: e.getenv(f.upstreamKeyEnv), UpstreamDirect: f.upstreamDirect, UpstreamTimeout: f.upstreamTimeout,
		Model: f.llmModel, Prompt: f.simPrompt,
		Examples: env.store, Tools: c.Tools, Logger: env.log,
	}
	if env.llm != nil {
		opts.LLM = env.llm
	}
	b, err := virtual.Build(opts)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return b, nil
}
