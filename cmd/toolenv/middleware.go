package main

import (
	"context"

	toolenv "github.com/toolenv/toolenv"
)

// pipelineMiddleware returns the optional middleware of the pipeline:
// before runs ahead of argument validation, after between validation and
// the cache (see invoke.Options). Drift enforcement, faults and failover
// plug in here, each from its own flags.
func pipelineMiddleware(ctx context.Context, f *envFlags, env *environment, e *env) (before, after []toolenv.Middleware, err error) {
	b, a, err := driftMiddleware(ctx, f, env, e)
	if err != nil {
		return nil, nil, err
	}
	before, after = append(before, b...), append(after, a...)
	m, err := mappingMiddleware(ctx, &f.mapping, env)
	if err != nil {
		return nil, nil, err
	}
	before = append(m, before...) // failover and repair first: see mappingMiddleware
	return before, after, nil
}
