package tasksession

import "github.com/toolenv/toolenv/store"

// Component is the name of this package's tables in the store's schema.
const Component = "sessions"

// Migrations are the schema of the task-session tables. Pass them in
// store.Options.Migrations wherever a store that keeps sessions is
// opened.
//
// Ids are bytes (BLOB, bytea): a session name a client chose may hold
// what PostgreSQL's text cannot (NUL). Times are Unix milliseconds.
var Migrations = []store.Migration{{
	Component: Component, Version: 1, Name: "task sessions and their call logs",
	SQLite: `CREATE TABLE task_sessions (
	id        BLOB PRIMARY KEY,
	principal TEXT NOT NULL DEFAULT '',
	issued    INTEGER NOT NULL DEFAULT 0,
	state     TEXT NOT NULL,
	created   INTEGER NOT NULL,
	last_used INTEGER NOT NULL,
	ended     INTEGER NOT NULL DEFAULT 0,
	calls     INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX task_sessions_idle ON task_sessions (state, last_used);
CREATE TABLE task_session_calls (
	session BLOB NOT NULL,
	seq     INTEGER NOT NULL,
	data    BLOB NOT NULL,
	PRIMARY KEY (session, seq)
) WITHOUT ROWID`,
	Postgres: `CREATE TABLE task_sessions (
	id        bytea PRIMARY KEY,
	principal text NOT NULL DEFAULT '',
	issued    boolean NOT NULL DEFAULT false,
	state     text NOT NULL,
	created   bigint NOT NULL,
	last_used bigint NOT NULL,
	ended     bigint NOT NULL DEFAULT 0,
	calls     bigint NOT NULL DEFAULT 0
);
CREATE INDEX task_sessions_idle ON task_sessions (state, last_used);
CREATE TABLE task_session_calls (
	session bytea NOT NULL,
	seq     bigint NOT NULL,
	data    bytea NOT NULL,
	PRIMARY KEY (session, seq)
)`,
}}
