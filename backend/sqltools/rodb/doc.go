// Package rodb opens SQLite databases read-only and runs bounded queries
// on them for the live NL2SQL backends (backend/sqltools, backend/sqlrest).
//
// A database file is opened with mode=ro&immutable=1 and never written. A
// small database (under Options.InMemoryMaxBytes) is served from an
// in-memory copy that carries an index on every column: the copy is made
// once, each pooled connection deserializes it and is set query_only. An
// equality filter on the 41,877-row zip_code table then takes tens of
// microseconds instead of a 4–5 ms scan. Larger databases are queried from
// the file.
//
// Queries take a context (SQLite is interrupted when it is done), return at
// most a given number of rows and say when they stopped early, and convert
// SQLite values to JSON-friendly Go values (int64, float64, string, nil).
//
// A Set is the named databases of one backend's config, opened together
// (or shared with other backends), with the reason for each that could
// not be opened; QueryError sorts a failed query into the caller's fault
// (a value SQLite refused) or ours.
package rodb
