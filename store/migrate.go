package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Migration is one step of a component's schema. A component is a set of
// tables one subsystem owns ("cache", "records", "claims" here; e.g.
// "mirror" or "sessions" elsewhere); its migrations are numbered 1, 2, …
// with no gaps, and the store records the version each component reached
// in its table toolenv_schema. Each step carries its statements for both
// databases; the store runs the pending steps of every component in one
// transaction when it opens (toolenv store migrate runs them alone).
type Migration struct {
	// Component names the subsystem that owns the tables.
	Component string
	// Version is the step's number within the component, from 1.
	Version int
	// Name says what the step does, for logs.
	Name string
	// SQLite and Postgres are the statements of the step for each
	// database, separated by semicolons. Either may be empty when the
	// step has nothing to do there.
	SQLite, Postgres string
	// sqliteData, for the store's own steps, rewrites rows in SQLite
	// after the statements, in the same transaction.
	sqliteData func(ctx context.Context, tx *sql.Tx) error
}

// SchemaVersion is one component's schema version.
type SchemaVersion struct {
	Component string `json:"component"`
	// Version is the version the store's tables are at (0: none yet).
	Version int `json:"version"`
	// Known is the newest version this program knows (0: a component
	// this program does not know, e.g. added by a newer toolenv).
	Known int `json:"known"`
}

// SchemaError reports a store whose schema this program cannot use: a
// newer program migrated it (Newer), or it is older and migration was
// not allowed.
type SchemaError struct {
	Path      string
	Component string
	Version   int // the store's
	Known     int // this program's
}

func (e *SchemaError) Error() string {
	if e.Version > e.Known {
		return fmt.Sprintf("store %s: the %s tables are at schema version %d but this toolenv knows only up to %d: a newer toolenv migrated the store; upgrade this toolenv (every replica sharing a store must run the same schema)",
			e.Path, e.Component, e.Version, e.Known)
	}
	return fmt.Sprintf("store %s: the %s tables are at schema version %d, older than this toolenv's %d: run `toolenv store migrate --store …` (or start without --no-migrate)",
		e.Path, e.Component, e.Version, e.Known)
}

// builtinMigrations are the store's own components.
var builtinMigrations = []Migration{
	{Component: "cache", Version: 1, Name: "cache table",
		SQLite: `CREATE TABLE IF NOT EXISTS cache (
	tool    TEXT NOT NULL,
	args    TEXT NOT NULL,
	status  TEXT NOT NULL,
	body    BLOB,
	error   TEXT NOT NULL DEFAULT '',
	origin  TEXT NOT NULL DEFAULT '',
	created INTEGER NOT NULL,
	PRIMARY KEY (tool, args)
) WITHOUT ROWID`,
		// akey/ekey are SHA-256 digests of args/exact: a btree index entry
		// in PostgreSQL is limited to about 2.7 kB, arguments are not.
		// canonical marks the entry that holds its canonical key's slot.
		// Keys and error texts are bytea: text cannot hold NUL or invalid
		// UTF-8, and bytea sorts bytewise, as SQLite does.
		Postgres: `CREATE TABLE IF NOT EXISTS cache (
	id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	tool      text NOT NULL,
	akey      bytea NOT NULL,
	args      bytea NOT NULL,
	ekey      bytea,
	exact     bytea NOT NULL DEFAULT '',
	canonical boolean NOT NULL,
	status    text NOT NULL,
	body      bytea,
	error     bytea NOT NULL DEFAULT '',
	origin    text NOT NULL DEFAULT '',
	created   timestamptz NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS cache_canonical ON cache (tool, akey) WHERE canonical;
CREATE UNIQUE INDEX IF NOT EXISTS cache_exact ON cache (tool, ekey) WHERE ekey IS NOT NULL`},
	{Component: "cache", Version: 2, Name: "answers kept under their exact recorded key",
		SQLite: `ALTER TABLE cache ADD COLUMN exact TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX cache_exact_key ON cache (tool, exact) WHERE exact != '';
CREATE TABLE cache_exact (
	tool    TEXT NOT NULL,
	exact   TEXT NOT NULL,
	args    TEXT NOT NULL,
	status  TEXT NOT NULL,
	body    BLOB,
	error   TEXT NOT NULL DEFAULT '',
	origin  TEXT NOT NULL DEFAULT '',
	created INTEGER NOT NULL,
	PRIMARY KEY (tool, exact)
) WITHOUT ROWID`},
	// Keys longer than LargeKeyBytes are stored by their digest, their
	// full text compressed beside them. SQLite's rows written before
	// with such keys are rewritten (a lookup computes only the new key);
	// PostgreSQL finds rows by the digests it always kept (akey, ekey),
	// so its old rows stay as they are and are read as before.
	{Component: "cache", Version: 3, Name: "large keys stored by their digest, full text compressed",
		SQLite: `ALTER TABLE cache ADD COLUMN argz BLOB;
ALTER TABLE cache ADD COLUMN exactz BLOB;
ALTER TABLE cache_exact ADD COLUMN argz BLOB;
ALTER TABLE cache_exact ADD COLUMN exactz BLOB`,
		sqliteData: digestLargeKeysSQLite,
		Postgres: `ALTER TABLE cache ADD COLUMN argz bytea;
ALTER TABLE cache ADD COLUMN exactz bytea`},
	{Component: "records", Version: 1, Name: "LLM records table",
		SQLite: `CREATE TABLE IF NOT EXISTS records (
	key      TEXT PRIMARY KEY,
	request  BLOB NOT NULL,
	response BLOB NOT NULL,
	created  INTEGER NOT NULL
) WITHOUT ROWID`,
		Postgres: `CREATE TABLE IF NOT EXISTS records (
	key      text PRIMARY KEY,
	request  bytea NOT NULL,
	response bytea NOT NULL,
	created  timestamptz NOT NULL
)`},
	{Component: "claims", Version: 1, Name: "claims on cache misses",
		SQLite: `CREATE TABLE claims (
	tool    TEXT NOT NULL,
	args    TEXT NOT NULL,
	token   TEXT NOT NULL,
	owner   TEXT NOT NULL,
	expires INTEGER NOT NULL,
	done    INTEGER NOT NULL DEFAULT 0,
	result  BLOB,
	PRIMARY KEY (tool, args)
) WITHOUT ROWID`,
		Postgres: `CREATE TABLE claims (
	tool    text NOT NULL,
	akey    bytea NOT NULL,
	args    bytea NOT NULL,
	token   text NOT NULL,
	owner   text NOT NULL,
	expires timestamptz NOT NULL,
	done    boolean NOT NULL DEFAULT false,
	result  bytea,
	PRIMARY KEY (tool, akey)
);
CREATE INDEX claims_expires ON claims (expires)`},
}

// checkMigrations validates a set of migrations: every component's
// versions run 1..n without gaps or repeats.
func checkMigrations(ms []Migration) (map[string][]Migration, error) {
	by := map[string][]Migration{}
	for _, m := range ms {
		if m.Component == "" || strings.ContainsAny(m.Component, " \t\n'\"") {
			return nil, fmt.Errorf("migration %q: the component must be a plain non-empty name", m.Name)
		}
		by[m.Component] = append(by[m.Component], m)
	}
	for c, list := range by {
		slices.SortFunc(list, func(a, b Migration) int { return cmp.Compare(a.Version, b.Version) })
		for i, m := range list {
			if m.Version != i+1 {
				return nil, fmt.Errorf("migrations of component %s: want versions 1..%d without gaps or repeats, found %d at position %d", c, len(list), m.Version, i+1)
			}
		}
	}
	return by, nil
}

// migrator runs migrations through a dialect's SQL.
type migrator struct {
	path    string
	dialect string
	log     *slog.Logger
	// lock, when set, is run first in the migration transaction (the
	// PostgreSQL advisory lock that serializes replicas starting at once).
	lock string
}

func (m *migrator) ph(n int) string {
	if m.dialect == "postgres" {
		return fmt.Sprintf("$%d", n)
	}
	return "?"
}

const schemaTableSQLite = `CREATE TABLE IF NOT EXISTS toolenv_schema (
	component TEXT PRIMARY KEY,
	version   INTEGER NOT NULL,
	updated   INTEGER NOT NULL
) WITHOUT ROWID`

const schemaTablePostgres = `CREATE TABLE IF NOT EXISTS toolenv_schema (
	component text PRIMARY KEY,
	version   integer NOT NULL,
	updated   timestamptz NOT NULL DEFAULT now()
)`

// versions reads the recorded versions.
func (m *migrator) versions(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (map[string]int, error) {
	rows, err := q.QueryContext(ctx, `SELECT component, version FROM toolenv_schema`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var c string
		var v int
		if err := rows.Scan(&c, &v); err != nil {
			return nil, err
		}
		out[c] = v
	}
	return out, rows.Err()
}

// run brings every known component to its newest version in one
// transaction on db, refusing a store a newer program migrated. It
// returns the steps applied.
func (m *migrator) run(ctx context.Context, db *sql.DB, ms []Migration, noMigrate bool) ([]Migration, error) {
	by, err := checkMigrations(ms)
	if err != nil {
		return nil, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if m.lock != "" {
		if _, err := tx.ExecContext(ctx, m.lock); err != nil {
			return nil, err
		}
	}
	create := schemaTableSQLite
	if m.dialect == "postgres" {
		create = schemaTablePostgres
	}
	if _, err := tx.ExecContext(ctx, create); err != nil {
		return nil, err
	}
	have, err := m.versions(ctx, tx)
	if err != nil {
		return nil, err
	}
	comps := make([]string, 0, len(by))
	for c := range by {
		comps = append(comps, c)
	}
	slices.Sort(comps)
	// Refuse before changing anything.
	for _, c := range comps {
		known := len(by[c])
		if v := have[c]; v > known || (v < known && noMigrate) {
			return nil, &SchemaError{Path: m.path, Component: c, Version: v, Known: known}
		}
	}
	var applied []Migration
	for _, c := range comps {
		for _, step := range by[c][have[c]:] {
			stmts := step.SQLite
			if m.dialect == "postgres" {
				stmts = step.Postgres
			}
			for _, s := range splitStatements(stmts) {
				if _, err := tx.ExecContext(ctx, s); err != nil {
					return nil, fmt.Errorf("migration %s %d (%s): %w", c, step.Version, step.Name, err)
				}
			}
			if step.sqliteData != nil && m.dialect == "sqlite" {
				if err := step.sqliteData(ctx, tx); err != nil {
					return nil, fmt.Errorf("migration %s %d (%s): %w", c, step.Version, step.Name, err)
				}
			}
			applied = append(applied, step)
		}
		if n := len(by[c]); n > have[c] {
			q := fmt.Sprintf(`INSERT INTO toolenv_schema(component, version, updated) VALUES (%s, %s, %s)
				ON CONFLICT(component) DO UPDATE SET version = excluded.version, updated = excluded.updated`, m.ph(1), m.ph(2), m.ph(3))
			var now any = nowMillis()
			if m.dialect == "postgres" {
				now = timeNow()
			}
			if _, err := tx.ExecContext(ctx, q, c, n, now); err != nil {
				return nil, fmt.Errorf("record schema version of %s: %w", c, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	for _, step := range applied {
		level := slog.LevelInfo
		if have[step.Component] == 0 {
			level = slog.LevelDebug // a new store's tables, not an upgrade
		}
		m.log.Log(ctx, level, "store schema migrated", "store", m.path, "component", step.Component, "version", step.Version, "step", step.Name)
	}
	return applied, nil
}

// schema lists every component's version, recorded or known.
func (m *migrator) schema(ctx context.Context, db *sql.DB, ms []Migration) ([]SchemaVersion, error) {
	by, err := checkMigrations(ms)
	if err != nil {
		return nil, err
	}
	have, err := m.versions(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("read schema versions: %w", err)
	}
	seen := map[string]bool{}
	var out []SchemaVersion
	for c, v := range have {
		out = append(out, SchemaVersion{Component: c, Version: v, Known: len(by[c])})
		seen[c] = true
	}
	for c, list := range by {
		if !seen[c] {
			out = append(out, SchemaVersion{Component: c, Known: len(list)})
		}
	}
	slices.SortFunc(out, func(a, b SchemaVersion) int { return cmp.Compare(a.Component, b.Component) })
	return out, nil
}

// splitStatements splits a migration's text at semicolons that end a
// line (statements of a migration never contain such a semicolon inside
// a string).
func splitStatements(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ";\n") {
		if p := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(part), ";")); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// allMigrations is the store's own steps plus the extra ones.
func allMigrations(extra []Migration) []Migration {
	return append(slices.Clone(builtinMigrations), extra...)
}

// ReadSchema returns every component's schema version in the store dsn
// names (see Open), with the versions this program knows (the store's own
// components and extra), without migrating or refusing anything: a store
// that does not exist yet, or predates schema versions, has version 0.
func ReadSchema(ctx context.Context, dsn string, extra []Migration) ([]SchemaVersion, error) {
	ms := allMigrations(extra)
	var db *sql.DB
	m := &migrator{path: dsn, dialect: "sqlite", log: slog.New(slog.DiscardHandler)}
	if IsPostgres(dsn) {
		m.path, m.dialect = redactDSN(dsn), "postgres"
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("store %s: %s", m.path, redactErr(err, dsn))
		}
		if cfg.ConnectTimeout == 0 {
			cfg.ConnectTimeout = 5 * time.Second
		}
		db = stdlib.OpenDB(*cfg)
	} else {
		if dsn == ":memory:" {
			return m.schemaOf(ctx, nil, ms)
		}
		if _, err := os.Stat(dsn); errors.Is(err, fs.ErrNotExist) {
			return m.schemaOf(ctx, nil, ms)
		}
		var err error
		if db, err = sql.Open("sqlite", "file:"+(&url.URL{Path: dsn}).EscapedPath()+"?mode=ro&_pragma=busy_timeout(5000)"); err != nil {
			return nil, fmt.Errorf("store %s: %w", dsn, err)
		}
	}
	defer db.Close()
	return m.schemaOf(ctx, db, ms)
}

// schemaOf is schema for a database that may lack the versions table (or
// be nil: no database yet).
func (m *migrator) schemaOf(ctx context.Context, db *sql.DB, ms []Migration) ([]SchemaVersion, error) {
	if db != nil {
		q := `SELECT count(*) FROM sqlite_master WHERE name = 'toolenv_schema'`
		if m.dialect == "postgres" {
			q = `SELECT count(*) FROM pg_tables WHERE tablename = 'toolenv_schema' AND schemaname = current_schema()`
		}
		var n int
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			return nil, fmt.Errorf("store %s: %w", m.path, err)
		}
		if n > 0 {
			return m.schema(ctx, db, ms)
		}
	}
	by, err := checkMigrations(ms)
	if err != nil {
		return nil, err
	}
	var out []SchemaVersion
	for c, list := range by {
		out = append(out, SchemaVersion{Component: c, Known: len(list)})
	}
	slices.SortFunc(out, func(a, b SchemaVersion) int { return cmp.Compare(a.Component, b.Component) })
	return out, nil
}
