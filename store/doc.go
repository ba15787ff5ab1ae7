// Package store keeps toolenv's persistent state: the response cache
// (tool ID + arguments → response), the records of every LLM request and
// response (for replay), the claims that let several replicas answer each
// new call once, and the tables other subsystems add.
//
// Store is the interface; Open picks an implementation from a DSN:
//
//   - *SQLite (a file path, the default): one embedded database in WAL
//     mode. Any number of goroutines and processes on one host may share
//     the file; a process killed with SIGKILL loses no committed entry.
//   - *Postgres (postgres://…): one PostgreSQL database shared by any
//     number of replicas, through pgx. Every operation is bounded by
//     Options.Timeout and fails with ErrUnavailable while the server is
//     gone; the pool reconnects when it returns.
//
// Both pass one conformance suite, store/storetest. A sharded in-memory
// LRU in front of the cache serves hot entries without a query.
//
// # Keys
//
// An entry is kept under its tool and canonical arguments
// (toolenv.Canonical) and, when the caller knows it, under its exact key:
// the arguments as the client wrote them (for StableToolBench, the Python
// repr of the client's dict, "{'length': '7'}"). Answers recorded under
// different exact keys of one canonical key are all kept; the first one
// stored also holds the canonical slot, which answers lookups whose exact
// key is unknown. The first answer stored for a key wins, in every
// process sharing the store: Put reports a loser, which serves the stored
// answer instead of its own.
//
// # Schema migrations
//
// Tables belong to components ("cache", "records", "claims"); each
// component's schema is a list of Migrations numbered 1, 2, … and the
// version each component reached is recorded in the table
// toolenv_schema. Open applies every pending step in one transaction (in
// PostgreSQL under an advisory lock, so that replicas starting together
// migrate once) and refuses a store whose component is newer than this
// program knows (a SchemaError: every replica sharing a store must run
// the same schema; migrate with the new toolenv, then roll the
// replicas). With Options.NoMigrate it refuses an older store instead of
// migrating it; `toolenv store migrate` migrates explicitly, and
// ReadSchema reads the versions without opening the store.
//
// A subsystem that keeps tables of its own (mirror pairs, durable
// sessions, an evaluation queue) adds a component, never edits another's.
// It declares its steps in its own package, each with the statements for
// both databases (placeholders differ, ? in SQLite and $1 in PostgreSQL,
// and so do types, BLOB/bytea and INTEGER/bigint):
//
//	var Migrations = []store.Migration{{
//		Component: "sessions", Version: 1, Name: "session call logs",
//		SQLite:    `CREATE TABLE session_calls (session TEXT NOT NULL, seq INTEGER NOT NULL, call BLOB NOT NULL, PRIMARY KEY (session, seq))`,
//		Postgres:  `CREATE TABLE session_calls (session text NOT NULL, seq bigint NOT NULL, call bytea NOT NULL, PRIMARY KEY (session, seq))`,
//	}}
//
// and passes them in Options.Migrations wherever the store is opened (the
// environment, and `toolenv store migrate`), so that every replica
// applies and checks them. It queries its tables through Store.SQL(),
// which gives the database and its dialect (in SQLite, read-modify-write
// transactions begin on DB.Write: one writer, IMMEDIATE transactions). A
// released step never changes: the next version is a new step. The
// component is tested on both databases (internal/pgtest starts a real
// PostgreSQL; storetest's Migrations test shows the pattern).
//
// A program that does not know a component leaves its tables alone.
package store
