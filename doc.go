// Package toolenv holds the core types of toolenv: the tools a collection
// offers, the Call a front-end makes and the Result a backend returns, the
// Handler and Middleware that form the one call path, and the Task and
// Trajectory types that evaluation works on.
//
// The package imports only the standard library. Everything that speaks a
// wire format (StableToolBench's /virtual, REST, OpenAPI, MCP) lives in
// server/, everything that executes a call lives under backend/, and the
// middleware that sits between them (validation, cache, drift, faults,
// failover, metrics) lives in invoke/.
//
//	front-end ─► Call ─► middleware ... ─► backend
//	          ◄──────────── Result ◄──────────┘
package toolenv
