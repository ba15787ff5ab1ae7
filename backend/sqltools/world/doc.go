// Package world gives every episode its own writable state over an
// SQLite database that itself never changes: a World is the base
// database plus the rows the episode changed.
//
// A world is a row-level delta over the immutable base: for each row it
// changed (by rowid, or by primary key in a WITHOUT ROWID table) the row
// as the base holds it and as the world holds it now, a deleted row
// being absent now. The delta is canonical — a row changed back to its
// base contents leaves it, entries are sorted by table and key — so two
// worlds in the same state have the same Changes and the same Hash,
// whatever path led there.
//
// Making a world costs a small struct, whatever the database's size; an
// idle world holds only its delta. A world that changed nothing reads
// from the base's read-only handle (rodb), exactly as a read-only
// session does. A call of a world that changed something runs on one of
// the base's few writable connections, each a private copy of the base
// (the in-memory image rodb already keeps, or a private copy of the
// file): the connection applies the world's delta inside a transaction
// (rows changed or deleted are deleted, then the world's rows inserted,
// so that no order can break a uniqueness constraint), runs the call,
// and keeps the transaction open for the world's next call, which finds
// the state ready; another world's call rolls it back first. A write
// runs in a savepoint, rolled back when it fails: a write that breaks a
// constraint leaves nothing.
//
// Writes (Insert, Update, Delete) check the schema's own rules: values
// against the declared type's affinity (Convert), NOT NULL, primary keys
// and unique constraints (SQLite, its refusal turned into a problem that
// names the columns and the rule), foreign keys (checked here, as
// SQLite's PRAGMA foreign_keys would, with ON DELETE/UPDATE CASCADE and
// SET NULL applied and any other action refusing). A write returns the
// rows it changed (Change: table, key, before, after); replaying them
// (Apply) rebuilds the world without running anything, so that a
// session's log rebuilds its world byte for byte on any replica and after
// a restart.
//
// An initial state is the base, or what an SQL script leaves
// (Base.Script): the script runs once per base on a copy of its own,
// temporary triggers capture the rows it changed, and every world
// started from it shares that delta until it writes.
//
// The database's own triggers do not run in worlds: a world replays row
// changes, which would fire them a second time; its writable copies drop
// them.
package world
