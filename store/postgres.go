package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/toolenv/toolenv/internal/redact"
)

// Postgres is the store for several replicas: every table lives in one
// PostgreSQL database reached through pgx. Replicas sharing it answer a
// key the same way (the first answer stored wins), and claims make a
// fleet answer each new key once. Each operation is bounded by
// Options.Timeout, so that calls fail fast (with ErrUnavailable) while the
// server is gone; the connection pool reconnects when it returns.
type Postgres struct {
	path string // the DSN without its password
	pool *pgxpool.Pool
	db   *sql.DB // the same pool through database/sql
	memLayer
	log     *slog.Logger
	timeout time.Duration
	extra   []Migration
	prune   atomic.Int64
}

var _ Store = (*Postgres)(nil)

// pgMigrationLock is the advisory lock key that serializes migrations of
// replicas starting at once ("toolenv" in ASCII, as a number).
const pgMigrationLock = `SELECT pg_advisory_xact_lock(125779459893110)`

// OpenPostgres connects to the PostgreSQL database dsn names
// (postgres://user:password@host:port/db?sslmode=…) and migrates its
// schema (see Open).
func OpenPostgres(ctx context.Context, dsn string, opts Options) (*Postgres, error) {
	s := &Postgres{path: redactDSN(dsn), log: opts.logger(), memLayer: memLayer{newMem(opts)}, timeout: opts.Timeout, extra: opts.Migrations}
	if s.timeout <= 0 {
		s.timeout = 5 * time.Second
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %s (want postgres://user:password@host:port/database, or libpq keywords: host=… dbname=… user=… password=…)", s.path, redactErr(err, dsn))
	}
	if cfg.ConnConfig.ConnectTimeout == 0 || cfg.ConnConfig.ConnectTimeout > s.timeout {
		cfg.ConnConfig.ConnectTimeout = s.timeout
	}
	cfg.MaxConns = 16
	if opts.MaxConns > 0 {
		cfg.MaxConns = int32(opts.MaxConns)
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "toolenv"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", s.path, hideErr(err, dsn))
	}
	s.pool, s.db = pool, stdlib.OpenDBFromPool(pool)
	mctx, cancel := context.WithTimeout(ctx, max(s.timeout, 30*time.Second))
	defer cancel()
	m := &migrator{path: s.path, dialect: "postgres", log: s.log, lock: pgMigrationLock}
	if _, err := m.run(mctx, s.db, allMigrations(opts.Migrations), opts.NoMigrate); err != nil {
		s.Close()
		var se *SchemaError
		if errors.As(err, &se) {
			return nil, err
		}
		if isUnavailable(err) {
			return nil, fmt.Errorf("open store %s: cannot reach PostgreSQL: %w (is the server running, and are the host, port, user and password in --store or TOOLENV_STORE right?)", s.path, hideErr(s.unavailable(err), dsn))
		}
		return nil, fmt.Errorf("open store %s: create tables: %w", s.path, hideErr(err, dsn))
	}
	return s, nil
}

// Redact returns a store's location for messages and reports: a
// postgres:// URL or a libpq keyword/value string with its secrets
// hidden (redact.DSN: the password, the query values, sslpassword, …),
// a file path unchanged.
func Redact(dsn string) string { return redact.DSN(dsn) }

// redactDSN returns dsn without its secrets, for messages.
func redactDSN(dsn string) string { return redact.DSN(dsn) }

// redactErr is err's text with the DSN's secrets removed (a driver's
// error may quote the DSN it was given).
func redactErr(err error, dsn string) string {
	return redact.Scrub(err.Error(), redact.Secrets(dsn)...)
}

// hideErr returns err with the DSN's secrets removed from its text; it
// still unwraps to err.
func hideErr(err error, dsn string) error {
	if err == nil {
		return nil
	}
	return &hiddenErr{err: err, text: redactErr(err, dsn)}
}

type hiddenErr struct {
	err  error
	text string
}

func (e *hiddenErr) Error() string { return e.text }
func (e *hiddenErr) Unwrap() error { return e.err }

// isUnavailable reports whether err means the server cannot be reached
// (as opposed to a query it refused).
func isUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		// 08: connection exception; 57P: the server is shutting down or
		// starting; 53300: too many connections.
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P") || pe.Code == "53300"
	case errors.As(err, &ce), errors.As(err, &ne), pgconn.Timeout(err),
		errors.Is(err, pgconn.ErrConnClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, context.DeadlineExceeded):
		return true
	}
	return strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "closed pool")
}

// unavailable marks err with ErrUnavailable when the server is gone.
func (s *Postgres) unavailable(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) || !isUnavailable(err) {
		return err
	}
	return fmt.Errorf("%w (PostgreSQL at %s): %w", ErrUnavailable, s.path, err)
}

// op bounds one operation by the store's timeout.
func (s *Postgres) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// fail wraps an operation's error: what failed, marked unavailable when
// the server is gone. A caller whose own context ended gets its error.
func (s *Postgres) fail(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, s.unavailable(err))
}

func digest(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// ekey is the digest of a non-empty exact key, else NULL.
func ekey(exact string) []byte {
	if exact == "" {
		return nil
	}
	return digest(exact)
}

// Kind returns "postgres".
func (s *Postgres) Kind() string { return "postgres" }

// Path returns the DSN without its password.
func (s *Postgres) Path() string { return s.path }

// SQL returns the database, for subsystems with tables of their own.
func (s *Postgres) SQL() *DB { return &DB{Write: s.db, Read: s.db, Dialect: "postgres"} }

// Close closes the connections.
func (s *Postgres) Close() error {
	err := s.db.Close()
	s.pool.Close()
	return err
}

// pgEntryCols are an entry's columns: a key stored by its digest (see
// LargeKeyBytes) has its full text, compressed, in argz or exactz. The
// rows are found by akey and ekey, the SHA-256 of the full texts, in
// every case; args and exact confirm a key only when it is short (a
// large key's row written before digest keys holds its full text, one
// written since its digest form: both are found by akey or ekey alone).
const pgEntryCols = `args, exact, status, body, error, origin, created, argz, exactz`

// pgRow holds the columns of an entry row that need converting.
type pgRow struct {
	args, exact, error []byte
	argz, exactz       []byte
	status             string
}

func (s *Postgres) fill(r *pgRow, e *Entry, k lookupKeys) error {
	e.Args, e.Exact, e.Error = string(r.args), string(r.exact), string(r.error)
	e.Status, e.Created = toolStatus(r.status), e.Created.UTC()
	return fullKeys(e, r.argz, r.exactz, k)
}

// pgConfirm is what a lookup compares args or exact with: a short key's
// text; nil (compare nothing) for a large key, found by its digest.
func pgConfirm(key string) []byte {
	if isDigested(key) {
		return nil
	}
	return []byte(key)
}

func (s *Postgres) scanOne(tool string, row pgx.Row, k lookupKeys) (*Entry, error) {
	e := &Entry{Tool: tool}
	var r pgRow
	err := row.Scan(&r.args, &r.exact, &r.status, &e.Body, &r.error, &e.Origin, &e.Created, &r.argz, &r.exactz)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return e, s.fill(&r, e, k)
}

// Get returns the canonical entry for tool and canonical args.
func (s *Postgres) Get(ctx context.Context, tool, args string) (*Entry, bool, error) {
	key := memKey(tool, args)
	if s.mem != nil {
		if e, ok := s.mem.get(key); ok {
			return e, true, nil
		}
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	e, err := s.scanOne(tool, s.pool.QueryRow(octx,
		`SELECT `+pgEntryCols+` FROM cache WHERE tool = $1 AND akey = $2 AND canonical AND ($3::bytea IS NULL OR args = $3)`, tool, digest(args), pgConfirm(args)),
		lookupKeys{args: args, argsKey: storedKey(args)})
	if err != nil {
		return nil, false, s.fail(ctx, "cache get "+tool, err)
	}
	if e == nil {
		return nil, false, nil
	}
	if s.mem != nil {
		s.mem.add(key, e)
	}
	return e, true, nil
}

// GetExact returns the entry recorded under exact, else the canonical
// entry for args.
func (s *Postgres) GetExact(ctx context.Context, tool, exact, args string) (*Entry, bool, error) {
	if exact == "" {
		return s.Get(ctx, tool, args)
	}
	var gen uint64
	if s.mem != nil {
		if e, ok := s.mem.getExact(tool, exact, args); ok {
			return e, true, nil
		}
		gen = s.mem.gen.Load() // before the read: a write after it voids what it finds
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	e, err := s.scanOne(tool, s.pool.QueryRow(octx, `
SELECT `+pgEntryCols+` FROM (
	SELECT 0 AS pri, `+pgEntryCols+` FROM cache WHERE tool = $1 AND ekey = $2 AND ($3::bytea IS NULL OR exact = $3)
	UNION ALL SELECT 1, `+pgEntryCols+` FROM cache WHERE tool = $1 AND akey = $4 AND canonical AND ($5::bytea IS NULL OR args = $5)
) t ORDER BY pri LIMIT 1`, tool, digest(exact), pgConfirm(exact), digest(args), pgConfirm(args)),
		lookupKeys{args: args, argsKey: storedKey(args), exact: exact, exactKey: storedKey(exact)})
	if err != nil {
		return nil, false, s.fail(ctx, "cache get "+tool, err)
	}
	if e == nil {
		return nil, false, nil
	}
	if s.mem != nil {
		s.mem.resolved(tool, exact, args, e, gen)
	}
	return e, true, nil
}

// Put stores e unless its key is taken; see Store.Put.
func (s *Postgres) Put(ctx context.Context, e *Entry) (bool, error) {
	n, err := s.PutMany(ctx, []*Entry{e}, false)
	return n == 1, err
}

const (
	// Without a conflict target, an insert gives way to both keys: the
	// canonical slot and the exact key.
	pgPutCanonical = `INSERT INTO cache(tool, akey, args, ekey, exact, canonical, status, body, error, origin, created, argz, exactz)
		VALUES ($1, $2, $3, $4, $5, true, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING`
	pgPutExact = `INSERT INTO cache(tool, akey, args, ekey, exact, canonical, status, body, error, origin, created, argz, exactz)
		VALUES ($1, $2, $3, $4, $5, false, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING`
	pgReplaceNoKey = `INSERT INTO cache(tool, akey, args, ekey, exact, canonical, status, body, error, origin, created, argz, exactz)
		VALUES ($1, $2, $3, $4, $5, true, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (tool, akey) WHERE canonical DO UPDATE SET ekey = NULL, exact = '', exactz = NULL, status = excluded.status,
			body = excluded.body, error = excluded.error, origin = excluded.origin, created = excluded.created`
	pgUpdateExact = `UPDATE cache SET status = $1, body = $2, error = $3, origin = $4, created = $5 WHERE tool = $6 AND ekey = $7 AND ($8::bytea IS NULL OR exact = $8)`
)

// PutMany stores entries in one transaction; see Store.PutMany.
func (s *Postgres) PutMany(ctx context.Context, entries []*Entry, overwrite bool) (int, error) {
	if len(entries) == 0 {
		return 0, nil
	}
	now := time.Now().UTC()
	for _, e := range entries {
		if err := normalize(e, now); err != nil {
			return 0, err
		}
	}
	octx, cancel := context.WithTimeout(ctx, s.timeout+time.Duration(len(entries))*time.Millisecond)
	defer cancel()
	n := 0
	err := pgx.BeginFunc(octx, s.pool, func(tx pgx.Tx) error {
		for _, seg := range pgSegments(entries, overwrite) {
			k, err := s.putSegment(octx, tx, seg, overwrite)
			if err != nil {
				return err
			}
			n += k
		}
		return nil
	})
	if err != nil {
		return 0, s.fail(ctx, "cache put", err)
	}
	if s.mem != nil {
		s.mem.written(entries, overwrite)
	}
	return n, nil
}

// pgSegments splits a batch into runs whose entries putSegment may store
// by phases (every canonical slot, then the exact-only entries) and still
// store what putting them one by one would. That holds unless an exact
// key comes back under other canonical arguments (the later entry would
// take the exact key in the first phase, before the earlier one kept it
// in the second) or, with overwrite, any key comes back (the later entry
// must replace what the earlier one stored).
func pgSegments(entries []*Entry, overwrite bool) [][]*Entry {
	var segs [][]*Entry
	start := 0
	exact := map[[2]string]string{} // (tool, exact key) -> args
	args := map[[2]string]bool{}
	for i, e := range entries {
		ek, ak := [2]string{e.Tool, e.Exact}, [2]string{e.Tool, e.Args}
		split := false
		if a, seen := exact[ek]; seen && e.Exact != "" && (overwrite || a != e.Args) {
			split = true
		}
		if overwrite && args[ak] {
			split = true
		}
		if split {
			segs = append(segs, entries[start:i])
			start = i
			clear(exact)
			clear(args)
		}
		if e.Exact != "" {
			exact[ek] = e.Args
		}
		args[ak] = true
	}
	return append(segs, entries[start:])
}

// putSegment stores a segment of a batch (see pgSegments) and returns
// how many entries it wrote. The statements of each phase travel together
// (one round trip for the canonical slots, one more for entries that only
// keep their exact key).
func (s *Postgres) putSegment(octx context.Context, tx pgx.Tx, entries []*Entry, overwrite bool) (int, error) {
	n := 0
	pending := entries
	if overwrite {
		var err error
		if pending, n, err = s.updateExact(octx, tx, entries); err != nil {
			return 0, err
		}
	}
	first := &pgx.Batch{}
	for _, e := range pending {
		q := pgPutCanonical
		if overwrite && e.Exact == "" {
			q = pgReplaceNoKey
		}
		first.Queue(q, s.entryParams(e)...)
	}
	var second []*Entry
	if err := sendBatch(octx, tx, first, func(i int, k int64) {
		if k > 0 {
			n++
		} else if pending[i].Exact != "" {
			second = append(second, pending[i])
		}
	}); err != nil {
		return 0, err
	}
	if len(second) == 0 {
		return n, nil
	}
	b := &pgx.Batch{}
	for _, e := range second {
		b.Queue(pgPutExact, s.entryParams(e)...)
	}
	err := sendBatch(octx, tx, b, func(_ int, k int64) {
		if k > 0 {
			n++
		}
	})
	return n, err
}

// updateExact replaces the entries stored under the exact keys of
// entries, returning the entries left to insert and how many it updated.
func (s *Postgres) updateExact(ctx context.Context, tx pgx.Tx, entries []*Entry) ([]*Entry, int, error) {
	b := &pgx.Batch{}
	var withKey []*Entry
	var rest []*Entry
	for _, e := range entries {
		if e.Exact == "" {
			rest = append(rest, e)
			continue
		}
		withKey = append(withKey, e)
		b.Queue(pgUpdateExact, string(e.Status), []byte(e.Body), []byte(e.Error), e.Origin, e.Created, e.Tool, digest(e.Exact), pgConfirm(e.Exact))
	}
	if len(withKey) == 0 {
		return entries, 0, nil
	}
	n := 0
	err := sendBatch(ctx, tx, b, func(i int, k int64) {
		if k > 0 {
			n++
		} else {
			rest = append(rest, withKey[i])
		}
	})
	return rest, n, err
}

// entryParams are the parameters $1..$12 of the insert statements: the
// digests of the full keys, the keys as stored and the compressed full
// text of those stored by their digest.
func (s *Postgres) entryParams(e *Entry) []any {
	args, argz := digestKey(e.Args)
	exact, exactz := digestKey(e.Exact)
	return []any{e.Tool, digest(e.Args), []byte(args), ekey(e.Exact), []byte(exact), string(e.Status), []byte(e.Body), []byte(e.Error), e.Origin, e.Created, argz, exactz}
}

// sendBatch runs a batch, telling each statement's affected row count.
func sendBatch(ctx context.Context, tx pgx.Tx, b *pgx.Batch, each func(i int, affected int64)) error {
	br := tx.SendBatch(ctx, b)
	for i := range b.Len() {
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			return err
		}
		each(i, tag.RowsAffected())
	}
	return br.Close()
}

// Delete removes the entries of a tool (all tools when tool is "").
func (s *Postgres) Delete(ctx context.Context, tool string) (int64, error) {
	octx, cancel := context.WithTimeout(ctx, 10*s.timeout)
	defer cancel()
	var tag pgconn.CommandTag
	var err error
	if tool == "" {
		tag, err = s.pool.Exec(octx, `DELETE FROM cache`)
	} else {
		tag, err = s.pool.Exec(octx, `DELETE FROM cache WHERE tool = $1`, tool)
	}
	if err != nil {
		return 0, s.fail(ctx, "cache delete", err)
	}
	if s.mem != nil {
		s.mem.clear()
	}
	return tag.RowsAffected(), nil
}

// Examples returns up to limit successful canonical entries of tool,
// oldest first.
func (s *Postgres) Examples(ctx context.Context, tool string, limit int) ([]*Entry, error) {
	if limit <= 0 {
		limit = 100
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	var out []*Entry
	err := s.each(octx, func(e *Entry) error { out = append(out, e); return nil },
		`SELECT tool, `+pgEntryCols+` FROM cache WHERE tool = $1 AND canonical AND status = 'ok' ORDER BY created, args LIMIT $2`, tool, limit)
	if err != nil {
		return nil, s.fail(ctx, "cache examples "+tool, err)
	}
	return out, nil
}

// Each calls fn for every entry; see Store.Each.
func (s *Postgres) Each(ctx context.Context, fn func(*Entry) error) error {
	for _, q := range []string{
		`SELECT tool, ` + pgEntryCols + ` FROM cache WHERE canonical ORDER BY tool COLLATE "C", args`,
		`SELECT tool, ` + pgEntryCols + ` FROM cache WHERE NOT canonical ORDER BY tool COLLATE "C", exact`,
	} {
		if err := s.each(ctx, fn, q); err != nil {
			return s.fail(ctx, "cache scan", err)
		}
	}
	return nil
}

func (s *Postgres) each(ctx context.Context, fn func(*Entry) error, q string, args ...any) error {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var e Entry
		var r pgRow
		if err := rows.Scan(&e.Tool, &r.args, &r.exact, &r.status, &e.Body, &r.error, &e.Origin, &e.Created, &r.argz, &r.exactz); err != nil {
			return err
		}
		if err := s.fill(&r, &e, lookupKeys{}); err != nil {
			return err
		}
		if err := fn(&e); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Stats counts the store's contents.
func (s *Postgres) Stats(ctx context.Context) (*Stats, error) {
	st := &Stats{Path: s.path, Kind: s.Kind(), ByOrigin: map[string]int{}, ByStatus: map[string]int{}}
	q := &sqlStats{db: s.db}
	q.row(ctx, `SELECT count(*), count(*) FILTER (WHERE NOT canonical), count(DISTINCT tool) FROM cache`, &st.Entries, &st.ExactOnly, &st.Tools)
	q.row(ctx, `SELECT count(*) FROM records`, &st.Records)
	q.row(ctx, `SELECT count(*) FROM claims`, &st.Claims)
	q.row(ctx, `SELECT pg_database_size(current_database())`, &st.Bytes)
	q.group(ctx, `SELECT origin, count(*) FROM cache GROUP BY origin`, func(k string, n int) { st.ByOrigin[k] = n })
	q.group(ctx, `SELECT status, count(*) FROM cache GROUP BY status`, func(k string, n int) { st.ByStatus[k] = n })
	q.group(ctx, `SELECT tool, count(*) AS n FROM cache GROUP BY tool ORDER BY n DESC, tool COLLATE "C" LIMIT 10`, func(k string, n int) {
		st.TopTools = append(st.TopTools, ToolCount{Tool: k, Entries: n})
	})
	if q.err != nil {
		return nil, s.fail(ctx, "cache stats", q.err)
	}
	return st, nil
}

// Lookup returns the recorded response for key (llm.Recorder).
func (s *Postgres) Lookup(ctx context.Context, key string) ([]byte, bool, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	var resp []byte
	err := s.pool.QueryRow(octx, `SELECT response FROM records WHERE key = $1`, key).Scan(&resp)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.fail(ctx, "records lookup", err)
	}
	return resp, true, nil
}

// Record stores a request and its response under key, keeping the first
// record of a key (llm.Recorder).
func (s *Postgres) Record(ctx context.Context, key string, req, resp []byte) error {
	octx, cancel := s.op(ctx)
	defer cancel()
	_, err := s.pool.Exec(octx, `INSERT INTO records(key, request, response, created) VALUES ($1, $2, $3, now()) ON CONFLICT (key) DO NOTHING`,
		key, req, resp)
	if err != nil {
		return s.fail(ctx, "records write", err)
	}
	return nil
}

// Check verifies that the server answers and the store's tables are at
// this program's schema.
func (s *Postgres) Check(ctx context.Context) error {
	vs, err := s.Schema(ctx)
	if err != nil {
		return err
	}
	for _, v := range vs {
		if v.Known > 0 && v.Version != v.Known {
			return &SchemaError{Path: s.path, Component: v.Component, Version: v.Version, Known: v.Known}
		}
	}
	return nil
}

// Schema returns every component's schema version.
func (s *Postgres) Schema(ctx context.Context) ([]SchemaVersion, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	m := &migrator{path: s.path, dialect: "postgres", log: s.log}
	vs, err := m.schema(octx, s.db, allMigrations(s.extra))
	if err != nil {
		return nil, s.fail(ctx, "store schema", err)
	}
	return vs, nil
}
