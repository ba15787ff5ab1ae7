// Package faults injects operational faults into the call pipeline:
// added latency (fixed or drawn from a distribution), timeouts, rate
// limits (a token bucket answering rate_limited with Retry-After, which
// REST clients get as 429), intermittent 5xx errors and flaky windows
// (periods when a tool is down). Faults are configured per collection and
// tool (Config, read from a JSON file), seeded and deterministic: the same
// configuration, seed and sequence of calls give the same faults. Every
// injected fault is listed in Result.Faults, so agents, metrics and logs
// see it.
//
// The Injector's middleware goes first in the pipeline, before argument
// validation: a rate-limited or broken API fails a call whatever its
// arguments, and answers from the cache are delayed and limited like any
// other. Time comes from a Clock, so tests run on a manual one.
package faults
