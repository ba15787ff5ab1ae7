// Package virtual composes the backends of a documented API that toolenv
// does not run itself — the "virtual" backend of ToolBench and OpenAPI
// collections, StableToolBench's server rebuilt:
//
//	real upstream (if configured) → LLM simulator (if configured) → offline synthesizer
//
// Each stage answers or falls through: an upstream answer that is not a
// success (by MirrorAPI Appendix D's classes) goes on to simulation, a
// simulator that cannot answer (its endpoint is down, its answers stay
// unreadable) goes on to the synthesizer, which always answers. The
// result says where it came from (Source) and carries, in Warnings and
// Meta, why earlier stages were passed over. The cache is not part of
// the backend: invoke's cache middleware sits in front of it and stores
// only what the stages mark as cacheable.
package virtual
