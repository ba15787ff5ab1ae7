// Package mcpsource makes an MCP server a source of tools, as a
// StableToolBench API is one: its tools/list becomes a collection, and a
// call reaches the server through toolenv's one pipeline, where the cache
// records its answers and the simulator answers when it cannot.
//
// The parts:
//
//   - Server: how to reach a server, from a flag (NAME=URL, NAME=COMMAND
//     ARGS...) or the mcpServers JSON that Claude Desktop, Cursor and most
//     MCP clients read (ParseFlag, ParseConfig). ${VAR} in env, headers,
//     args and URLs is read from the environment when the server is
//     started, never written anywhere.
//   - Client: one supervised connection. It starts a stdio server itself
//     (its own process group, its stderr in toolenv's log labelled with
//     the server's name), restarts it with backoff when it dies, stops it
//     on Close, bounds every message (MaxMessageBytes) and the tool list
//     (MaxTools), lists every page of tools/list, and lists again on
//     notifications/tools/list_changed.
//   - NewCollection: a tools/list as a toolenv collection (names,
//     descriptions, inputSchema, outputSchema, annotations; the state each
//     tool's answers depend on, see State).
//   - Upstream: the toolenv.Handler that calls the server, the "real
//     upstream" of backend/virtual's chain; Reshape gives simulated and
//     synthesized answers the shape of a CallToolResult.
//   - Pool and Isolation: a server isolated per episode. The pool keeps
//     instances started ahead (each a Client started Once, in a folder of
//     its own that ${TOOLENV_EPISODE_DIR} names), the Backend hands one to
//     each session at its start (StartSession: seeded from the task's
//     initial files, an HTTP server reset) or first call, and releases it
//     when the session ends (DropSession); SessionOrigin names the state
//     the session started from, for its cache keys. A crashed instance
//     fails its own session only (MetaInfraFailure).
//   - ReadToolsFile: saved tool lists (a tools/list result, the mcpServers
//   - tools shape benchmark repositories publish) for a collection with
//     no server at all.
//   - The proxy: a call's Exchange (WithExchange) names the client of
//     toolenv it is made for (a Peer): the server's sampling, elicitation
//     and roots requests, progress and log messages about the call reach
//     it, its answers and input-required results go back; the server's
//     JSON-RPC error is the call's answer, never simulated. The Client
//     also reads and records the server's resources, templates, prompts
//     and completions (Recordings), answered from the recordings when the
//     server is gone, and follows its resource subscriptions.
//
// An answer is recorded as the CallToolResult's content, structuredContent
// and isError (Body), so that a replay gives the client the same result.
package mcpsource
