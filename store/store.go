package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"time"

	toolenv "github.com/toolenv/toolenv"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// Entry is one cached response.
type Entry struct {
	// Tool is the tool ID ("collection/name").
	Tool string `json:"tool"`
	// Args is the canonical JSON of the arguments (toolenv.Canonical).
	Args string `json:"args"`
	// Status is the cached result's status (normally ok).
	Status toolenv.Status `json:"status"`
	// Body is the response payload.
	Body json.RawMessage `json:"response"`
	// Error is the response's error message, usually empty.
	Error string `json:"error,omitempty"`
	// Origin is where the response first came from (upstream, simulator,
	// synthesizer) or "import" for entries read from another cache.
	Origin string `json:"origin"`
	// Created is when the entry was stored.
	Created time.Time `json:"created"`
}

// Options configure a Store.
type Options struct {
	// MemoryBytes bounds the in-memory LRU in front of the cache;
	// 0 means 256 MiB, negative disables it.
	MemoryBytes int
	// Logger logs maintenance; nil discards.
	Logger *slog.Logger
	// BusyTimeout is how long a writer waits for another process's lock;
	// default 10s.
	BusyTimeout time.Duration
}

// Store is the cache and records database. It is safe for concurrent use
// by many goroutines, and several processes may open the same file.
type Store struct {
	path string
	w    *sql.DB // one connection: SQLite has one writer at a time
	r    *sql.DB // a pool of readers (WAL lets them run beside the writer)
	mem  *lru
	log  *slog.Logger
}

const schema = `
CREATE TABLE IF NOT EXISTS cache (
	tool    TEXT NOT NULL,
	args    TEXT NOT NULL,
	status  TEXT NOT NULL,
	body    BLOB,
	error   TEXT NOT NULL DEFAULT '',
	origin  TEXT NOT NULL DEFAULT '',
	created INTEGER NOT NULL,
	PRIMARY KEY (tool, args)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS records (
	key      TEXT PRIMARY KEY,
	request  BLOB NOT NULL,
	response BLOB NOT NULL,
	created  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;
INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', '1');
`

// Open opens (creating if needed) the store at path. ":memory:" opens a
// private in-memory store, for tests.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = 10 * time.Second
	}
	s := &Store{path: path, log: log}
	if opts.MemoryBytes >= 0 {
		n := opts.MemoryBytes
		if n == 0 {
			n = 256 << 20
		}
		s.mem = newLRU(n)
	}
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
		w, err := sql.Open("sqlite", u+"&_txlock=immediate")
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
	if _, err := s.w.ExecContext(ctx, schema); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s: create tables: %w (is it a toolenv store? pass another --store path)", path, err)
	}
	return s, nil
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error {
	var errs []error
	if s.r != nil && s.r != s.w {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	return errors.Join(errs...)
}

func memKey(tool, args string) lruKey { return lruKey{tool, args} }

// Get returns the cached entry for tool and canonical args.
func (s *Store) Get(ctx context.Context, tool, args string) (*Entry, bool, error) {
	key := memKey(tool, args)
	if s.mem != nil {
		if e, ok := s.mem.get(key); ok {
			return e, true, nil
		}
	}
	var e Entry
	var created int64
	var body []byte
	err := s.r.QueryRowContext(ctx,
		`SELECT status, body, error, origin, created FROM cache WHERE tool = ? AND args = ?`, tool, args,
	).Scan(&e.Status, &body, &e.Error, &e.Origin, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("cache get %s: %w", tool, err)
	}
	e.Tool, e.Args, e.Body, e.Created = tool, args, body, time.UnixMilli(created).UTC()
	if s.mem != nil {
		s.mem.add(key, &e)
	}
	return &e, true, nil
}

// Put stores e unless an entry for its tool and args exists already (the
// first answer wins, so a cached call keeps its answer). It reports
// whether e was stored.
func (s *Store) Put(ctx context.Context, e *Entry) (bool, error) {
	n, err := s.PutMany(ctx, []*Entry{e}, false)
	return n == 1, err
}

// PutMany stores entries in one transaction. With overwrite, existing
// entries are replaced; otherwise they are kept. It returns how many were
// written.
func (s *Store) PutMany(ctx context.Context, entries []*Entry, overwrite bool) (int, error) {
	if len(entries) == 0 {
		return 0, nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("cache put: %w", err)
	}
	defer tx.Rollback()
	q := `INSERT INTO cache(tool, args, status, body, error, origin, created) VALUES (?,?,?,?,?,?,?) ON CONFLICT(tool, args) DO NOTHING`
	if overwrite {
		q = `INSERT INTO cache(tool, args, status, body, error, origin, created) VALUES (?,?,?,?,?,?,?)
			ON CONFLICT(tool, args) DO UPDATE SET status=excluded.status, body=excluded.body, error=excluded.error, origin=excluded.origin, created=excluded.created`
	}
	stmt, err := tx.PrepareContext(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("cache put: %w", err)
	}
	defer stmt.Close()
	n := 0
	now := time.Now().UTC()
	for _, e := range entries {
		if e.Tool == "" {
			return 0, errors.New("cache put: entry has no tool")
		}
		if e.Created.IsZero() {
			e.Created = now
		}
		if e.Status == "" {
			e.Status = toolenv.StatusOK
		}
		res, err := stmt.ExecContext(ctx, e.Tool, e.Args, string(e.Status), []byte(e.Body), e.Error, e.Origin, e.Created.UnixMilli())
		if err != nil {
			return 0, fmt.Errorf("cache put %s: %w", e.Tool, err)
		}
		if k, _ := res.RowsAffected(); k > 0 {
			n++
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("cache put: commit: %w", err)
	}
	if s.mem != nil {
		for _, e := range entries {
			s.mem.remove(memKey(e.Tool, e.Args)) // the next Get reads what won
		}
	}
	return n, nil
}

// Delete removes the entries of a tool (all tools when tool is ""). It
// returns how many were removed.
func (s *Store) Delete(ctx context.Context, tool string) (int64, error) {
	var res sql.Result
	var err error
	if tool == "" {
		res, err = s.w.ExecContext(ctx, `DELETE FROM cache`)
	} else {
		res, err = s.w.ExecContext(ctx, `DELETE FROM cache WHERE tool = ?`, tool)
	}
	if err != nil {
		return 0, fmt.Errorf("cache delete: %w", err)
	}
	if s.mem != nil {
		s.mem.clear()
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// Examples returns up to limit successful entries of tool, oldest first:
// the pool a simulator picks its few-shot examples from.
func (s *Store) Examples(ctx context.Context, tool string, limit int) ([]*Entry, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.r.QueryContext(ctx,
		`SELECT tool, args, status, body, error, origin, created FROM cache WHERE tool = ? AND status = 'ok' ORDER BY created, args LIMIT ?`, tool, limit)
	if err != nil {
		return nil, fmt.Errorf("cache examples %s: %w", tool, err)
	}
	return scanEntries(rows)
}

// Each calls fn for every entry, ordered by tool and arguments, stopping
// at the first error.
func (s *Store) Each(ctx context.Context, fn func(*Entry) error) error {
	rows, err := s.r.QueryContext(ctx, `SELECT tool, args, status, body, error, origin, created FROM cache ORDER BY tool, args`)
	if err != nil {
		return fmt.Errorf("cache scan: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return rows.Err()
}

func scanEntries(rows *sql.Rows) ([]*Entry, error) {
	defer rows.Close()
	var out []*Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func scanEntry(rows *sql.Rows) (*Entry, error) {
	var e Entry
	var created int64
	var body []byte
	if err := rows.Scan(&e.Tool, &e.Args, &e.Status, &body, &e.Error, &e.Origin, &created); err != nil {
		return nil, fmt.Errorf("cache scan: %w", err)
	}
	e.Body, e.Created = body, time.UnixMilli(created).UTC()
	return &e, nil
}

// Stats describes the store's contents.
type Stats struct {
	Path     string         `json:"path"`
	Entries  int64          `json:"entries"`
	Tools    int64          `json:"tools"`
	ByOrigin map[string]int `json:"by_origin"`
	ByStatus map[string]int `json:"by_status"`
	// TopTools are the tools with the most entries.
	TopTools []ToolCount `json:"top_tools"`
	Records  int64       `json:"records"`
	Bytes    int64       `json:"bytes"`
}

// ToolCount is a tool and its number of cache entries.
type ToolCount struct {
	Tool    string `json:"tool"`
	Entries int    `json:"entries"`
}

// Stats counts the store's contents.
func (s *Store) Stats(ctx context.Context) (*Stats, error) {
	st := &Stats{Path: s.path, ByOrigin: map[string]int{}, ByStatus: map[string]int{}}
	q := func(query string, dst ...any) error {
		if err := s.r.QueryRowContext(ctx, query).Scan(dst...); err != nil {
			return fmt.Errorf("cache stats: %w", err)
		}
		return nil
	}
	if err := q(`SELECT count(*), count(DISTINCT tool) FROM cache`, &st.Entries, &st.Tools); err != nil {
		return nil, err
	}
	if err := q(`SELECT count(*) FROM records`, &st.Records); err != nil {
		return nil, err
	}
	var pages, size int64
	if err := q(`PRAGMA page_count`, &pages); err != nil {
		return nil, err
	}
	if err := q(`PRAGMA page_size`, &size); err != nil {
		return nil, err
	}
	st.Bytes = pages * size
	group := func(query string, into func(k string, n int)) error {
		rows, err := s.r.QueryContext(ctx, query)
		if err != nil {
			return fmt.Errorf("cache stats: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var n int
			if err := rows.Scan(&k, &n); err != nil {
				return fmt.Errorf("cache stats: %w", err)
			}
			into(k, n)
		}
		return rows.Err()
	}
	if err := group(`SELECT origin, count(*) FROM cache GROUP BY origin`, func(k string, n int) { st.ByOrigin[k] = n }); err != nil {
		return nil, err
	}
	if err := group(`SELECT status, count(*) FROM cache GROUP BY status`, func(k string, n int) { st.ByStatus[k] = n }); err != nil {
		return nil, err
	}
	if err := group(`SELECT tool, count(*) AS n FROM cache GROUP BY tool ORDER BY n DESC, tool LIMIT 10`, func(k string, n int) {
		st.TopTools = append(st.TopTools, ToolCount{Tool: k, Entries: n})
	}); err != nil {
		return nil, err
	}
	return st, nil
}

// Lookup returns the recorded response for key (llm.Recorder).
func (s *Store) Lookup(ctx context.Context, key string) ([]byte, bool, error) {
	var resp []byte
	err := s.r.QueryRowContext(ctx, `SELECT response FROM records WHERE key = ?`, key).Scan(&resp)
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
func (s *Store) Record(ctx context.Context, key string, req, resp []byte) error {
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
func (s *Store) Check(ctx context.Context) error {
	var res string
	if err := s.r.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("integrity check: %s", res)
	}
	return nil
}
