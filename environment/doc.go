// Package environment puts one toolenv environment together: the
// collections a Config names, each with its backend, the one pipeline
// every call goes through, and the front-ends over it. toolenv serve, mcp
// and eval are thin clients of it, and a Go program gets exactly the
// environment they serve:
//
//	env, err := environment.Open(ctx, &environment.Config{Collections: []string{"out/bird/rest"}})
//	if err != nil { ... }
//	defer env.Close()
//	h, _ := env.Handler() // mount it on your own http.Server: Open never listens
//	res := env.Pipeline.Invoke(ctx, call)
//
// # What Open builds, in order
//
// First the store (Config.Store): the cache and the simulator's examples.
// Then the collections, in this order: the ToolBench docs (one
// collection), OpenAPI documents, collection folders, MCP servers
// (Config.MCPSources: each server started or reached, its tools/list a
// collection; the list kept in the store, which serves it when the
// server cannot be reached) and saved MCP tool lists, then the embedded
// demo (when Config.Demo is set or nothing else is given); their tasks are
// kept in Environment.Tasks. Then each collection's backend, by its
// Backend.Type: virtual (real upstream → LLM simulator → offline
// synthesizer), sqltools (SLOT/SEL), sqlrest (REST over SQL), drift (the
// base collection's backend), mcp (the MCP server → LLM simulator →
// offline synthesizer, backend/mcpsource). Then the pipeline (invoke.New), whose
// middleware runs in this order for every call, from every front-end:
//
//	Observe (metrics) → Recover → Timeout → Limit   Config.MaxResultBytes
//	→ failover → repair                   Config.Failover, Config.Repair
//	→ faults → feedback level → docs tool  Config.Faults, Config.Feedback, Config.Drift.DocsTool
//	→ drift enforcement (before)           drifted collections, Config.Drift.Mode
//	→ lenient cache → Validate            lenient (ToolBench) collections, Config.Store
//	→ drift enforcement (after)
//	→ Episodes → Cache → Limit            Config.Store, Config.MaxResultBytes
//	→ Registry → the collection's backend
//
// Failover is outermost so that an alternative's call passes through
// everything a call does; repair precedes drift enforcement so that
// enforcement sees the repaired call; faults hit every call. Last, on
// first use, the front-ends: Handler (/virtual, REST, listings, OpenAPI,
// /mcp, /metrics, /healthz) and MCPServer (for stdio).
//
// # Configuration files
//
// LoadConfig reads a YAML or JSON file into a Config over Default():
// unknown keys are errors naming the nearest valid key, values must have
// their field's type, relative paths resolve against the file's folder,
// and credentials written inline are accepted with a warning naming the
// *_env key that should name their variable instead. Schema returns the
// file's JSON Schema (published as docs/toolenv.schema.json) and Print the
// effective configuration with credentials hidden.
//
// # Adding a field (and its flag)
//
// A field of Config is at once a key of the file, a flag of every command
// that opens an environment, a property of the JSON Schema and a line of
// "toolenv config print". To add one, add the field with its tags to
// Config or one of its sections, and read it where Open builds the part it
// configures; nothing else changes:
//
//	// MaxSessions bounds the sessions one client holds; 0 means no bound.
//	MaxSessions int `json:"max_sessions" flag:"max-sessions" default:"64" help:"sessions one client may hold"`
//
// The tags are: json (the key), flag (the flag; ",comma" splits a list
// flag on commas), help (the flag's usage and the schema's description),
// default (what the CLI starts from; the zero value must stay a valid
// choice for Go callers, documented on the field), enum (accepted values),
// path ("file" or "named": relative paths in a file resolve against it)
// and secret (a credential: names the key of the variable-name field to
// use instead). After adding a field, regenerate the published schema
// (docs/toolenv.schema.json) and the table of keys in docs/config.md with
//
//	go test ./cmd/toolenv -run TestConfigSchema -update
//
// A flag that only one command has (eval's --agent, serve's own
// listener) belongs to that command, not to Config.
package environment
