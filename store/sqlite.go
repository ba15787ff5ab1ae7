package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite" // the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite is the embedded store: one SQLite database file in WAL mode with
// synchronous=NORMAL. Any number of goroutines and processes may read and
// write it at once, and a process killed with SIGKILL loses no committed
// entry and never corrupts the file. A sharded in-memory LRU in front of
// the cache serves hot entries without touching SQLite.
type SQLite struct {
	path string
	w    *sql.DB // one connection: SQLite has one writer at a time
	r    *sql.DB // a pool of readers (WAL lets them run beside the writer)
	memLayer
	log   *slog.Logger
	extra []Migration
	prune atomic.Int64 // unix ms of the last claims prune
	// The lookups' statements, prepared once: preparing one costs more
	// than running it (database/sql keeps one per reader connection).
	getStmt, getExactStmt, getExactOnlyStmt, lookupStmt *sql.Stmt
	// bulk is the checkpointer of bulk mode (BeginBulk), nil outside it.
	bulkMu        sync.Mutex
	bulk          *sqliteBulk
	bulkWALFrames int // tests: the log's bound in bulk mode (0: bulkWALFrames)
	// digests spares a cache miss hashing its large key twice (Get, Put).
	digests digestMemo
}

var _ Store = (*SQLite)(nil)

// OpenSQLite opens (creating if needed) the SQLite store at path and
// migrates its schema (see Open). ":memory:" opens a private in-memory
// store, for tests.
func OpenSQLite(ctx context.Context, path string, opts Options) (*SQLite, error) {
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = 10 * time.Second
	}
	s := &SQLite{path: path, log: opts.logger(), memLayer: memLayer{newMem(opts)}, extra: opts.Migrations}
	pragmas := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)", busy.Milliseconds())
	if path == ":memory:" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		dsn := "file:mem" + hex.EncodeToString(b[:]) + "?mode=memory&cache=shared&" + pragmas
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		db.SetMaxOpenConns(1)
		db.SetConnMaxIdleTime(0)
		db.SetMaxIdleConns(1)
		s.w, s.r = db, db
	} else {
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("open store %s: %w", path, err)
			}
		}
		u := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + pragmas +
			"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
		// The writer's page cache holds a whole import batch (the default
		// 2 MB spills dirty pages mid-transaction), and statement
		// journals stay in memory rather than in temporary files.
		w, err := sql.Open("sqlite", u+"&_txlock=immediate&_pragma=cache_size(-65536)&_pragma=temp_store(MEMORY)")
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
		w.SetMaxOpenConns(1)
		r, err := sql.Open("sqlite", u)
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
		r.SetMaxOpenConns(8)
		r.SetMaxIdleConns(8)
		s.w, s.r = w, r
	}
	// Processes (or stores of one process) opening a new database at
	// once can meet SQLITE_BUSY where SQLite does not wait for the busy
	// timeout (switching the new file to WAL): such a step is tried
	// again until the timeout has passed.
	m := &migrator{path: path, dialect: "sqlite", log: s.log}
	if err := retryBusy(ctx, busy, func() error {
		_, err := m.run(ctx, s.w, allMigrations(opts.Migrations), opts.NoMigrate)
		return err
	}); err != nil {
		s.Close()
		var se *SchemaError
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, fmt.Errorf("open store %s: create tables: %w (is it a toolenv store? pass another --store path)", path, err)
	}
	for _, p := range []struct {
		st **sql.Stmt
		q  string
	}{{&s.getStmt, sqliteGet}, {&s.getExactStmt, sqliteGetExact}, {&s.getExactOnlyStmt, sqliteGetExactOnly}, {&s.lookupStmt, sqliteLookup}} {
		var st *sql.Stmt
		err := retryBusy(ctx, busy, func() (err error) {
			st, err = s.r.PrepareContext(ctx, p.q)
			return err
		})
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("open store %s: prepare lookups: %w", path, err)
		}
		*p.st = st
	}
	return s, nil
}

// retryBusy runs f until it does not fail with SQLITE_BUSY, or the busy
// timeout has passed, or ctx ends; it returns f's last error.
func retryBusy(ctx context.Context, busy time.Duration, f func() error) error {
	deadline := time.Now().Add(busy)
	wait := 5 * time.Millisecond
	for {
		err := f()
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_BUSY
}

// Kind returns "sqlite".
func (s *SQLite) Kind() string { return "sqlite" }

// Path returns the database file's path.
func (s *SQLite) Path() string { return s.path }

// SQL returns the database, for subsystems with tables of their own.
func (s *SQLite) SQL() *DB { return &DB{Write: s.w, Read: s.r, Dialect: "sqlite"} }

// Close closes the database.
func (s *SQLite) Close() error {
	var errs []error
	s.bulkMu.Lock()
	b := s.bulk
	s.bulkMu.Unlock()
	if b != nil {
		errs = append(errs, s.endBulk(b))
	}
	for _, st := range []*sql.Stmt{s.getStmt, s.getExactStmt, s.getExactOnlyStmt, s.lookupStmt} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if s.r != nil && s.r != s.w {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	return errors.Join(errs...)
}

// entryCols are an entry's columns: a key stored by its digest (see
// LargeKeyBytes) has its full text, compressed, in argz or exactz.
const entryCols = `args, exact, status, body, error, origin, created, argz, exactz`

// The lookups, prepared at open.
const (
	sqliteGet = `SELECT ` + entryCols + ` FROM cache WHERE tool = ? AND args = ?`
	// An exact key is looked up where it is most often kept, the
	// canonical slot, on its own (one index and one table descent); only
	// when that finds nothing does the second statement read
	// cache_exact and the canonical entry of args, in that order.
	sqliteGetExactOnly = `SELECT ` + entryCols + ` FROM cache WHERE tool = ?1 AND exact = ?2 AND exact != ''`
	sqliteGetExact     = `
SELECT ` + entryCols + ` FROM (
	SELECT 1 AS pri, ` + entryCols + ` FROM cache_exact WHERE tool = ?1 AND exact = ?2
	UNION ALL SELECT 2, ` + entryCols + ` FROM cache WHERE tool = ?1 AND args = ?3
) ORDER BY pri LIMIT 1`
	sqliteLookup = `SELECT response FROM records WHERE key = ?`
)

// Get returns the canonical entry for tool and canonical args.
func (s *SQLite) Get(ctx context.Context, tool, args string) (*Entry, bool, error) {
	key := memKey(tool, args)
	if s.mem != nil {
		if e, ok := s.mem.get(key); ok {
			return e, true, nil
		}
	}
	k := lookupKeys{args: args, argsKey: s.digests.stored(args)}
	e, err := s.scanOne(tool, s.getStmt.QueryRowContext(ctx, tool, k.argsKey), k)
	if e == nil || err != nil {
		return nil, false, wrapGet(tool, err)
	}
	if s.mem != nil {
		s.mem.add(key, e)
	}
	return e, true, nil
}

// GetExact returns the entry recorded under exact, else the canonical
// entry for args.
func (s *SQLite) GetExact(ctx context.Context, tool, exact, args string) (*Entry, bool, error) {
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
	k := lookupKeys{args: args, argsKey: s.digests.stored(args), exact: exact, exactKey: storedKey(exact)}
	e, err := s.scanOne(tool, s.getExactOnlyStmt.QueryRowContext(ctx, tool, k.exactKey), k)
	if e == nil && err == nil {
		e, err = s.scanOne(tool, s.getExactStmt.QueryRowContext(ctx, tool, k.exactKey, k.argsKey), k)
	}
	if e == nil || err != nil {
		return nil, false, wrapGet(tool, err)
	}
	if s.mem != nil {
		s.mem.resolved(tool, exact, args, e, gen)
	}
	return e, true, nil
}

func wrapGet(tool string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("cache get %s: %w", tool, err)
}

// lookupKeys are the keys a lookup was made with, full and as stored:
// a row found under them needs no decompression to say its keys.
type lookupKeys struct{ args, argsKey, exact, exactKey string }

// scanOne scans one entry row of tool, looked up with k; a nil entry and
// error means no row.
func (s *SQLite) scanOne(tool string, row *sql.Row, k lookupKeys) (*Entry, error) {
	e := &Entry{Tool: tool}
	var created int64
	var body, argz, exactz []byte
	err := row.Scan(&e.Args, &e.Exact, &e.Status, &body, &e.Error, &e.Origin, &created, &argz, &exactz)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	e.Body, e.Created = body, time.UnixMilli(created).UTC()
	return e, fullKeys(e, argz, exactz, k)
}

// Put stores e unless its key is taken; see Store.Put.
func (s *SQLite) Put(ctx context.Context, e *Entry) (bool, error) {
	n, err := s.PutMany(ctx, []*Entry{e}, false)
	return n == 1, err
}

// The statements of PutMany. An insert into cache without a conflict
// target gives way to both of its keys: (tool, args), and (tool, exact)
// for a non-empty exact.
const (
	sqlitePutCanonical = `INSERT INTO cache(tool, args, exact, status, body, error, origin, created, argz, exactz) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING`
	// An exact entry takes its canonical slot unless its exact key is
	// kept already in cache_exact (under other arguments).
	sqlitePutCanonicalExact = `INSERT INTO cache(tool, args, exact, status, body, error, origin, created, argz, exactz)
		SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 WHERE NOT EXISTS (SELECT 1 FROM cache_exact WHERE tool = ?1 AND exact = ?3)
		ON CONFLICT DO NOTHING`
	sqliteReplaceNoKey = `INSERT INTO cache(tool, args, exact, status, body, error, origin, created, argz, exactz) VALUES (?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT(tool, args) DO UPDATE SET exact='', exactz=NULL, status=excluded.status, body=excluded.body, error=excluded.error, origin=excluded.origin, created=excluded.created`
	// An exact entry whose canonical slot is taken goes to cache_exact,
	// unless its exact key holds the canonical slot of other arguments.
	sqlitePutExact = `INSERT INTO cache_exact(tool, exact, args, status, body, error, origin, created, argz, exactz)
		SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 WHERE NOT EXISTS (SELECT 1 FROM cache WHERE tool = ?1 AND exact = ?2 AND exact != '')
		ON CONFLICT DO NOTHING`
	sqliteUpdateCanonicalExact = `UPDATE cache SET status=?, body=?, error=?, origin=?, created=? WHERE tool = ? AND exact = ? AND exact != ''`
	sqliteUpdateExact          = `UPDATE cache_exact SET status=?, body=?, error=?, origin=?, created=? WHERE tool = ? AND exact = ?`
)

// entryKeys are an entry's keys as stored (see LargeKeyBytes): the
// arguments and the exact key, each itself or its digest with its full
// text compressed.
type entryKeys struct {
	args, exact  string
	argz, exactz []byte
}

// keysOf computes the stored keys of entries.
func (s *SQLite) keysOf(entries []*Entry) []entryKeys {
	ks := make([]entryKeys, len(entries))
	for i, e := range entries {
		ks[i].args, ks[i].argz = s.digests.digestKey(e.Args)
		ks[i].exact, ks[i].exactz = digestKey(e.Exact)
	}
	return ks
}

// PutMany stores entries in one transaction; see Store.PutMany.
func (s *SQLite) PutMany(ctx context.Context, entries []*Entry, overwrite bool) (int, error) {
	if len(entries) == 0 {
		return 0, nil
	}
	s.bulkWait()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("cache put: %w", err)
	}
	defer tx.Rollback()
	stmts := map[string]*sql.Stmt{}
	exec := func(q string, args ...any) (int64, error) {
		st := stmts[q]
		if st == nil {
			var err error
			if st, err = tx.PrepareContext(ctx, q); err != nil {
				return 0, err
			}
			stmts[q] = st
		}
		res, err := st.ExecContext(ctx, args...)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	defer func() {
		for _, st := range stmts {
			st.Close()
		}
	}()
	now := time.Now().UTC()
	for _, e := range entries {
		if err := normalize(e, now); err != nil {
			return 0, err
		}
	}
	keys := s.keysOf(entries)
	// New entries go in by chunks of rows, one statement each (the cost
	// of a statement's execution, not of its rows, dominates); a chunk
	// that could not store every row is undone and stored row by row,
	// which then serves the rest of the batch (its keys are likely taken).
	n, rows := 0, !overwrite
	// While cache_exact is empty (it holds only the second answers of a
	// canonical key, which chunks never store) a chunk's rows need not be
	// checked against it.
	noExact := false
	if rows && len(entries) >= sqliteMinChunk {
		var exists int
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM cache_exact)`).Scan(&exists); err != nil {
			return 0, fmt.Errorf("cache put: %w", err)
		}
		noExact = exists == 0
	}
	for i := 0; i < len(entries); {
		if rows && len(entries)-i >= sqliteMinChunk {
			k := min(sqliteChunkRows, len(entries)-i)
			ok, err := putChunk(exec, entries[i:i+k], keys[i:i+k], noExact)
			if err != nil {
				return 0, fmt.Errorf("cache put: %w", err)
			}
			if ok {
				n, i = n+k, i+k
				continue
			}
			rows = false
		}
		e := entries[i]
		ok, err := s.putOne(exec, e, keys[i], overwrite)
		if err != nil {
			return 0, fmt.Errorf("cache put %s: %w", e.Tool, err)
		}
		if ok {
			n++
		}
		i++
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("cache put: commit: %w", err)
	}
	s.bulkCommitted()
	if s.mem != nil {
		s.mem.written(entries, overwrite)
	}
	return n, nil
}

// sqliteChunkRows is how many entries one multi-row insert stores (8 or
// 10 bound parameters each, well below SQLite's limit of 32,766);
// batches with fewer than sqliteMinChunk entries left go row by row.
const (
	sqliteChunkRows = 256
	sqliteMinChunk  = 16
)

// sqliteInsertChunk is sqlitePutCanonicalExact (sqlitePutCanonical for a
// row without an exact key) for rows rows at once; noExact leaves out the
// test against cache_exact, for when that table is empty, and withZ
// binds argz and exactz (a chunk without a digest key leaves them NULL:
// binding two NULLs a row cost an import about a tenth of its writer's
// time).
func sqliteInsertChunk(rows int, noExact, withZ bool) string {
	if rows == sqliteChunkRows && !withZ {
		if noExact {
			return sqliteInsertFullChunkNoExact
		}
		return sqliteInsertFullChunk
	}
	return buildInsertChunk(rows, noExact, withZ)
}

// The statements of full chunks without digest keys, built once.
var (
	sqliteInsertFullChunk        = buildInsertChunk(sqliteChunkRows, false, false)
	sqliteInsertFullChunkNoExact = buildInsertChunk(sqliteChunkRows, true, false)
)

func buildInsertChunk(rows int, noExact, withZ bool) string {
	cols, row := `tool, args, exact, status, body, error, origin, created`, `(?,?,?,?,?,?,?,?)`
	if withZ {
		cols, row = cols+`, argz, exactz`, `(?,?,?,?,?,?,?,?,?,?)`
	}
	var b strings.Builder
	if noExact {
		b.WriteString(`INSERT INTO cache(` + cols + `) VALUES `)
	} else {
		b.WriteString(`INSERT INTO cache(` + cols + `) SELECT * FROM (VALUES `)
	}
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	if noExact {
		b.WriteString(` ON CONFLICT DO NOTHING`)
	} else {
		b.WriteString(`) AS v WHERE v.column3 = '' OR NOT EXISTS (SELECT 1 FROM cache_exact x WHERE x.tool = v.column1 AND x.exact = v.column3)
		ON CONFLICT DO NOTHING`)
	}
	return b.String()
}

// putChunk stores chunk's new entries in their canonical slots with one
// statement, inside a savepoint, and reports whether every one of them
// was stored. If so, storing them row by row (putOne, in order) would
// have done the same: no two of them share a key (they would not all have
// been stored) and none finds its key taken, so none depends on another.
// Otherwise the statement is undone and nothing changed. noExact says
// cache_exact is empty.
func putChunk(exec func(string, ...any) (int64, error), chunk []*Entry, keys []entryKeys, noExact bool) (bool, error) {
	if _, err := exec(`SAVEPOINT put_chunk`); err != nil {
		return false, err
	}
	withZ := false
	for i := range keys {
		withZ = withZ || keys[i].argz != nil || keys[i].exactz != nil
	}
	args := make([]any, 0, 10*len(chunk))
	for i, e := range chunk {
		k := &keys[i]
		args = append(args, e.Tool, k.args, k.exact, string(e.Status), []byte(e.Body), e.Error, e.Origin, e.Created.UnixMilli())
		if withZ {
			args = append(args, k.argz, k.exactz)
		}
	}
	k, err := exec(sqliteInsertChunk(len(chunk), noExact, withZ), args...)
	if err == nil && k != int64(len(chunk)) {
		_, err = exec(`ROLLBACK TO put_chunk`)
	}
	if err != nil {
		return false, err
	}
	if _, err := exec(`RELEASE put_chunk`); err != nil {
		return false, err
	}
	return k == int64(len(chunk)), nil
}

func (s *SQLite) putOne(exec func(string, ...any) (int64, error), e *Entry, ks entryKeys, overwrite bool) (bool, error) {
	body, created := []byte(e.Body), e.Created.UnixMilli()
	if e.Exact == "" {
		q := sqlitePutCanonical
		if overwrite {
			q = sqliteReplaceNoKey
		}
		k, err := exec(q, e.Tool, ks.args, "", string(e.Status), body, e.Error, e.Origin, created, ks.argz, nil)
		return k > 0, err
	}
	if overwrite {
		for _, q := range []string{sqliteUpdateCanonicalExact, sqliteUpdateExact} {
			k, err := exec(q, string(e.Status), body, e.Error, e.Origin, created, e.Tool, ks.exact)
			if err != nil || k > 0 {
				return k > 0, err
			}
		}
	}
	if k, err := exec(sqlitePutCanonicalExact, e.Tool, ks.args, ks.exact, string(e.Status), body, e.Error, e.Origin, created, ks.argz, ks.exactz); err != nil || k > 0 {
		return k > 0, err
	}
	k, err := exec(sqlitePutExact, e.Tool, ks.exact, ks.args, string(e.Status), body, e.Error, e.Origin, created, ks.argz, ks.exactz)
	return k > 0, err
}

// Delete removes the entries of a tool (all tools when tool is "").
func (s *SQLite) Delete(ctx context.Context, tool string) (int64, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("cache delete: %w", err)
	}
	defer tx.Rollback()
	var total int64
	for _, table := range []string{"cache", "cache_exact"} {
		var res sql.Result
		if tool == "" {
			res, err = tx.ExecContext(ctx, `DELETE FROM `+table)
		} else {
			res, err = tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE tool = ?`, tool)
		}
		if err != nil {
			return 0, fmt.Errorf("cache delete: %w", err)
		}
		n, _ := res.RowsAffected()
		total += n
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("cache delete: %w", err)
	}
	if s.mem != nil {
		s.mem.clear()
	}
	return total, nil
}

// Examples returns up to limit successful canonical entries of tool,
// oldest first.
func (s *SQLite) Examples(ctx context.Context, tool string, limit int) ([]*Entry, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.r.QueryContext(ctx,
		`SELECT tool, `+entryCols+` FROM cache WHERE tool = ? AND status = 'ok' ORDER BY created, args LIMIT ?`, tool, limit)
	if err != nil {
		return nil, fmt.Errorf("cache examples %s: %w", tool, err)
	}
	defer rows.Close()
	var out []*Entry
	for rows.Next() {
		e, err := s.scanEntry(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Each calls fn for every entry; see Store.Each.
func (s *SQLite) Each(ctx context.Context, fn func(*Entry) error) error {
	for _, q := range []string{
		`SELECT tool, ` + entryCols + ` FROM cache ORDER BY tool, args`,
		`SELECT tool, ` + entryCols + ` FROM cache_exact ORDER BY tool, exact`,
	} {
		if err := s.each(ctx, q, fn); err != nil {
			return err
		}
	}
	return nil
}

func (s *SQLite) each(ctx context.Context, q string, fn func(*Entry) error) error {
	rows, err := s.r.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("cache scan: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		e, err := s.scanEntry(rows)
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("cache scan: %w", err)
	}
	return nil
}

func (s *SQLite) scanEntry(rows *sql.Rows) (*Entry, error) {
	var e Entry
	var created int64
	var body, argz, exactz []byte
	if err := rows.Scan(&e.Tool, &e.Args, &e.Exact, &e.Status, &body, &e.Error, &e.Origin, &created, &argz, &exactz); err != nil {
		return nil, fmt.Errorf("cache scan: %w", err)
	}
	e.Body, e.Created = body, time.UnixMilli(created).UTC()
	if err := fullKeys(&e, argz, exactz, lookupKeys{}); err != nil {
		return nil, fmt.Errorf("cache scan: %w", err)
	}
	return &e, nil
}

// Stats counts the store's contents.
func (s *SQLite) Stats(ctx context.Context) (*Stats, error) {
	st := &Stats{Path: s.path, Kind: s.Kind(), ByOrigin: map[string]int{}, ByStatus: map[string]int{}}
	db := &sqlStats{db: s.r}
	var canonical int64
	db.row(ctx, `SELECT count(*) FROM cache`, &canonical)
	db.row(ctx, `SELECT count(*) FROM cache_exact`, &st.ExactOnly)
	db.row(ctx, `SELECT count(*) FROM (SELECT tool FROM cache UNION SELECT tool FROM cache_exact)`, &st.Tools)
	db.row(ctx, `SELECT count(*) FROM records`, &st.Records)
	db.row(ctx, `SELECT count(*) FROM claims`, &st.Claims)
	var pages, size int64
	db.row(ctx, `PRAGMA page_count`, &pages)
	db.row(ctx, `PRAGMA page_size`, &size)
	st.Entries, st.Bytes = canonical+st.ExactOnly, pages*size
	const all = `(SELECT tool, status, origin FROM cache UNION ALL SELECT tool, status, origin FROM cache_exact)`
	db.group(ctx, `SELECT origin, count(*) FROM `+all+` GROUP BY origin`, func(k string, n int) { st.ByOrigin[k] = n })
	db.group(ctx, `SELECT status, count(*) FROM `+all+` GROUP BY status`, func(k string, n int) { st.ByStatus[k] = n })
	db.group(ctx, `SELECT tool, count(*) AS n FROM `+all+` GROUP BY tool ORDER BY n DESC, tool LIMIT 10`, func(k string, n int) {
		st.TopTools = append(st.TopTools, ToolCount{Tool: k, Entries: n})
	})
	if db.err != nil {
		return nil, fmt.Errorf("cache stats: %w", db.err)
	}
	return st, nil
}

// sqlStats runs the queries of Stats, keeping the first error.
type sqlStats struct {
	db  *sql.DB
	err error
}

func (q *sqlStats) row(ctx context.Context, query string, dst ...any) {
	if q.err == nil {
		q.err = q.db.QueryRowContext(ctx, query).Scan(dst...)
	}
}

func (q *sqlStats) group(ctx context.Context, query string, into func(k string, n int)) {
	if q.err != nil {
		return
	}
	rows, err := q.db.QueryContext(ctx, query)
	if err != nil {
		q.err = err
		return
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var n int
		if q.err = rows.Scan(&k, &n); q.err != nil {
			return
		}
		into(k, n)
	}
	q.err = rows.Err()
}

// Lookup returns the recorded response for key (llm.Recorder).
func (s *SQLite) Lookup(ctx context.Context, key string) ([]byte, bool, error) {
	var resp []byte
	err := s.lookupStmt.QueryRowContext(ctx, key).Scan(&resp)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("records lookup: %w", err)
	}
	return resp, true, nil
}

// Record stores a request and its response under key, keeping the first
// record of a key (llm.Recorder).
func (s *SQLite) Record(ctx context.Context, key string, req, resp []byte) error {
	_, err := s.w.ExecContext(ctx,
		`INSERT INTO records(key, request, response, created) VALUES (?,?,?,?) ON CONFLICT(key) DO NOTHING`,
		key, req, resp, time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("records write: %w", err)
	}
	return nil
}

// Check runs SQLite's integrity check and returns an error describing any
// corruption.
func (s *SQLite) Check(ctx context.Context) error {
	var res string
	if err := s.r.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("integrity check: %s", res)
	}
	return nil
}

// Schema returns every component's schema version.
func (s *SQLite) Schema(ctx context.Context) ([]SchemaVersion, error) {
	m := &migrator{path: s.path, dialect: "sqlite", log: s.log}
	return m.schema(ctx, s.r, allMigrations(s.extra))
}
