// Package sqltools is the live backend of the SLOT and SEL tool
// collections built from BIRD (nl2api): generic data tools — filter, sort,
// group, aggregate, transform, retrieve, … — over SQLite databases opened
// read-only, inside task sessions.
//
// A session (Call.Session) holds the starting table made by the hidden
// initialize_active_data call and every labelled result after it. A result
// is not a copy of rows but a query: each operation derives a new SQL query
// from its input's (adding a subquery level only where SQL needs one), so
// SQLite does the work and a session holds a few kilobytes. `$label$`
// arguments refer to earlier results. Sessions are dropped after an idle
// timeout or when together they exceed a memory cap.
//
// Values from callers are always bound as SQL parameters; identifiers
// reach SQL text only after they were checked against the schema or the
// session's columns, and quoted.
//
// The protocol (labels, the init step, the result bodies) is documented
// in docs/nl2sql.md. Replay and CallArgs run a task's gold sequence the way
// the evaluation harness and the build's verification do.
package sqltools
