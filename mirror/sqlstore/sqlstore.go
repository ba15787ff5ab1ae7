// Package sqlstore implements mirror.Store on SQL databases through
// database/sql: SQLite (embedded, the default) now, in a dialect-neutral
// way so that PostgreSQL can follow. The statements use only what both
// dialects share (INSERT ... ON CONFLICT, window-free queries, integer
// arithmetic within 62 bits); a dialect supplies the placeholders, the
// column types and how the database is opened.
//
// Tables are prefixed "mirror_" so that they can live in the same file as
// toolenv's cache and records (store.Store).
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mirror"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// SchemaVersion is the version of the tables this package writes.
const SchemaVersion = 1

// Options configure a store.
type Options struct {
	// BusyTimeout is how long a SQLite writer waits for another
	// process's lock; default 10s.
	BusyTimeout time.Duration
	// Logger logs maintenance; nil discards.
	Logger *slog.Logger
}

// Store is a mirror.Store on a SQL database.
type Store struct {
	d    dialect
	w    *sql.DB // writes (one connection on SQLite: one writer at a time)
	r    *sql.DB // reads
	path string
	log  *slog.Logger
}

var _ mirror.Store = (*Store)(nil)

// dialect is what differs between databases.
type dialect struct {
	name string
	// rebind turns "?" placeholders into the dialect's.
	rebind func(string) string
	blob   string // column type of binary payloads
	serial string // column definition of an auto-incrementing key
}

var sqliteDialect = dialect{
	name:   "sqlite",
	rebind: func(q string) string { return q },
	blob:   "BLOB",
	serial: "INTEGER PRIMARY KEY",
}

// OpenSQLite opens (creating if needed) the SQLite store at path. The
// database runs in WAL mode with synchronous=NORMAL, so readers never wait
// for the writer and a killed process loses no committed write.
func OpenSQLite(ctx context.Context, path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("mirror store: no path (pass --store FILE)")
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = 10 * time.Second
	}
	s := &Store{d: sqliteDialect, path: path, log: opts.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	pragmas := fmt.Sprintf("_pragma=busy_timeout(%d)", busy.Milliseconds())
	if path == ":memory:" {
		return nil, errors.New("mirror store: an in-memory store cannot stream pairs while it writes; give a file path (a temporary folder is fine)")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("mirror store %s: %w", path, err)
		}
	}
	u := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + pragmas + "&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	w, err := sql.Open("sqlite", u+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("mirror store %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	// Readers map the file: a page read is then a memory access, not a
	// system call.
	r, err := sql.Open("sqlite", u+"&_pragma=mmap_size(1073741824)")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("mirror store %s: %w", path, err)
	}
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(8)
	s.w, s.r = w, r
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Path returns the database's path.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error {
	var errs []error
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	return errors.Join(errs...)
}

// schema is the tables, with the dialect's types put in by migrate.
const schema = `
CREATE TABLE IF NOT EXISTS mirror_requests (
	id       {serial},
	dataset  TEXT NOT NULL,
	tool     TEXT NOT NULL,
	args     TEXT NOT NULL,
	origin   TEXT NOT NULL,
	kind     TEXT NOT NULL DEFAULT '',
	scenario TEXT NOT NULL DEFAULT '',
	created  BIGINT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS mirror_requests_key ON mirror_requests (dataset, tool, args);
CREATE TABLE IF NOT EXISTS mirror_pairs (
	id            {serial},
	dataset       TEXT NOT NULL,
	tool          TEXT NOT NULL,
	args          TEXT NOT NULL,
	h             BIGINT NOT NULL,
	origin        TEXT NOT NULL,
	kind          TEXT NOT NULL DEFAULT '',
	status        TEXT NOT NULL,
	body          {blob},
	error         TEXT NOT NULL DEFAULT '',
	source        TEXT NOT NULL DEFAULT '',
	class         TEXT NOT NULL DEFAULT '',
	rule          TEXT NOT NULL DEFAULT '',
	http_status   INTEGER NOT NULL DEFAULT 0,
	attempts      INTEGER NOT NULL DEFAULT 0,
	latency_ns    BIGINT NOT NULL DEFAULT 0,
	called_at     BIGINT NOT NULL DEFAULT 0,
	history       TEXT NOT NULL DEFAULT '',
	provenance    TEXT NOT NULL DEFAULT '',
	filter        TEXT NOT NULL DEFAULT '',
	filter_detail TEXT NOT NULL DEFAULT '',
	doc_eval      INTEGER,
	doc_reason    TEXT NOT NULL DEFAULT '',
	doc_raw       TEXT NOT NULL DEFAULT '',
	doc_model     TEXT NOT NULL DEFAULT '',
	split         TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX IF NOT EXISTS mirror_pairs_key ON mirror_pairs (dataset, tool, args);
CREATE TABLE IF NOT EXISTS mirror_rationales (
	id       {serial},
	dataset  TEXT NOT NULL,
	tool     TEXT NOT NULL,
	args     TEXT NOT NULL,
	text     TEXT NOT NULL,
	tokens   INTEGER NOT NULL,
	verdict  TEXT NOT NULL,
	detail   TEXT NOT NULL DEFAULT '',
	model    TEXT NOT NULL DEFAULT '',
	created  BIGINT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS mirror_rationales_key ON mirror_rationales (dataset, tool, args);
CREATE TABLE IF NOT EXISTS mirror_rejects (
	id      {serial},
	dataset TEXT NOT NULL,
	stage   TEXT NOT NULL,
	tool    TEXT NOT NULL,
	args    TEXT NOT NULL DEFAULT '',
	body    TEXT NOT NULL DEFAULT '',
	error   TEXT NOT NULL DEFAULT '',
	reason  TEXT NOT NULL,
	detail  TEXT NOT NULL DEFAULT '',
	created BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS mirror_rejects_dataset ON mirror_rejects (dataset, stage);
CREATE TABLE IF NOT EXISTS mirror_meta (
	dataset TEXT NOT NULL,
	key     TEXT NOT NULL,
	value   TEXT NOT NULL,
	PRIMARY KEY (dataset, key)
);
CREATE TABLE IF NOT EXISTS mirror_records (
	key      TEXT PRIMARY KEY,
	request  {blob} NOT NULL,
	response {blob} NOT NULL,
	created  BIGINT NOT NULL
);
`

// migrate creates the tables and checks the schema version.
func (s *Store) migrate(ctx context.Context) error {
	ddl := strings.NewReplacer("{serial}", s.d.serial, "{blob}", s.d.blob).Replace(schema)
	for _, stmt := range strings.Split(ddl, ";") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := s.w.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("mirror store %s: create tables: %w (is it a toolenv store? pass another --store path)", s.path, err)
		}
	}
	v, ok, err := s.Meta(ctx, "", "schema_version")
	if err != nil {
		return fmt.Errorf("mirror store %s: %w", s.path, err)
	}
	if !ok {
		return s.SetMeta(ctx, "", "schema_version", strconv.Itoa(SchemaVersion))
	}
	if n, _ := strconv.Atoi(v); n > SchemaVersion {
		return fmt.Errorf("mirror store %s: schema version %s is newer than this toolenv's (%d): upgrade toolenv", s.path, v, SchemaVersion)
	}
	return nil
}

func (s *Store) q(query string) string { return s.d.rebind(query) }

// inTx runs fn in a write transaction.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("mirror store: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("mirror store: commit: %w", err)
	}
	return nil
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// PutRequests implements mirror.Store.
func (s *Store) PutRequests(ctx context.Context, ds string, reqs []*mirror.Request) (int, error) {
	if len(reqs) == 0 {
		return 0, nil
	}
	added := 0
	now := time.Now()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, s.q(`INSERT INTO mirror_requests (dataset, tool, args, origin, kind, scenario, created)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dataset, tool, args) DO NOTHING`))
		if err != nil {
			return fmt.Errorf("mirror store: put requests: %w", err)
		}
		defer stmt.Close()
		added = 0
		for _, r := range reqs {
			created := r.Created
			if created.IsZero() {
				created = now
			}
			res, err := stmt.ExecContext(ctx, ds, r.Tool, r.Args, r.Origin, r.Kind, r.Scenario, nanos(created))
			if err != nil {
				return fmt.Errorf("mirror store: put request of %s: %w", r.Tool, err)
			}
			if n, _ := res.RowsAffected(); n > 0 {
				added++
			}
		}
		return nil
	})
	return added, err
}

// RequestCounts implements mirror.Store.
func (s *Store) RequestCounts(ctx context.Context, ds string) (map[string]int, error) {
	rows, err := s.r.QueryContext(ctx, s.q(`SELECT tool, COUNT(*) FROM mirror_requests WHERE dataset = ? GROUP BY tool`), ds)
	if err != nil {
		return nil, fmt.Errorf("mirror store: count requests: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var tool string
		var n int
		if err := rows.Scan(&tool, &n); err != nil {
			return nil, fmt.Errorf("mirror store: count requests: %w", err)
		}
		out[tool] = n
	}
	return out, rows.Err()
}

// EachRequest implements mirror.Store.
func (s *Store) EachRequest(ctx context.Context, ds string, rq mirror.RequestQuery, fn func(*mirror.Request) error) error {
	query := `SELECT r.id, r.tool, r.args, r.origin, r.kind, r.scenario, r.created FROM mirror_requests r WHERE r.dataset = ?`
	args := []any{ds}
	if rq.Tool != "" {
		query += ` AND r.tool = ?`
		args = append(args, rq.Tool)
	}
	if rq.Pending {
		query += ` AND NOT EXISTS (SELECT 1 FROM mirror_pairs p WHERE p.dataset = r.dataset AND p.tool = r.tool AND p.args = r.args)`
	}
	query += ` ORDER BY r.id`
	rows, err := s.r.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return fmt.Errorf("mirror store: read requests: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r mirror.Request
		var created int64
		if err := rows.Scan(&r.Seq, &r.Tool, &r.Args, &r.Origin, &r.Kind, &r.Scenario, &created); err != nil {
			return fmt.Errorf("mirror store: read requests: %w", err)
		}
		r.Created = fromNanos(created)
		if err := fn(&r); err != nil {
			return err
		}
	}
	return rows.Err()
}

const pairColumns = `tool, args, h, origin, kind, status, body, error, source, class, rule, http_status, attempts, latency_ns, called_at,
	history, provenance, filter, filter_detail, doc_eval, doc_reason, doc_raw, doc_model, split`

func pairValues(ds string, p *mirror.Pair) ([]any, error) {
	var hist, prov string
	if len(p.History) > 0 {
		b, err := json.Marshal(p.History)
		if err != nil {
			return nil, err
		}
		hist = string(b)
	}
	if len(p.Provenance) > 0 {
		prov = string(p.Provenance)
	}
	var docEval any
	var docReason, docRaw, docModel string
	if p.Doc != nil {
		docEval, docReason, docRaw, docModel = p.Doc.Eval, p.Doc.Reason, p.Doc.Raw, p.Doc.Model
	}
	body := []byte(p.Body)
	if body == nil {
		body = []byte{}
	}
	return []any{ds, p.Tool, p.Args, mirror.Hash(p.Tool, p.Args), p.Origin, p.Kind, string(p.Status), body, p.Error, p.Source, p.Class, p.Rule,
		p.HTTPStatus, p.Attempts, int64(p.Latency), nanos(p.CalledAt), hist, prov, p.Filter, p.FilterDetail, docEval, docReason, docRaw, docModel, p.Split}, nil
}

const pairInsert = `INSERT INTO mirror_pairs (dataset, ` + pairColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// PutPairs implements mirror.Store.
func (s *Store) PutPairs(ctx context.Context, ds string, pairs []*mirror.Pair) error {
	if len(pairs) == 0 {
		return nil
	}
	set := []string{}
	for _, c := range strings.Split(pairColumns, ",") {
		c = strings.TrimSpace(c)
		if c == "tool" || c == "args" {
			continue
		}
		set = append(set, c+" = excluded."+c)
	}
	query := s.q(pairInsert + ` ON CONFLICT (dataset, tool, args) DO UPDATE SET ` + strings.Join(set, ", "))
	return s.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, query)
		if err != nil {
			return fmt.Errorf("mirror store: put pairs: %w", err)
		}
		defer stmt.Close()
		for _, p := range pairs {
			vals, err := pairValues(ds, p)
			if err != nil {
				return fmt.Errorf("mirror store: put pair of %s: %w", p.Tool, err)
			}
			if _, err := stmt.ExecContext(ctx, vals...); err != nil {
				return fmt.Errorf("mirror store: put pair of %s: %w", p.Tool, err)
			}
		}
		return nil
	})
}

// AddPairs implements mirror.Store.
func (s *Store) AddPairs(ctx context.Context, ds string, pairs []*mirror.Pair) ([]mirror.PairKey, error) {
	var taken []mirror.PairKey
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		taken = nil
		stmt, err := tx.PrepareContext(ctx, s.q(pairInsert+` ON CONFLICT (dataset, tool, args) DO NOTHING`))
		if err != nil {
			return fmt.Errorf("mirror store: add pairs: %w", err)
		}
		defer stmt.Close()
		for _, p := range pairs {
			vals, err := pairValues(ds, p)
			if err != nil {
				return fmt.Errorf("mirror store: add pair of %s: %w", p.Tool, err)
			}
			res, err := stmt.ExecContext(ctx, vals...)
			if err != nil {
				return fmt.Errorf("mirror store: add pair of %s: %w", p.Tool, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				taken = append(taken, p.Key())
			}
		}
		return nil
	})
	return taken, err
}

const pairSelect = `SELECT p.tool, p.args, p.origin, p.kind, p.status, {body}, p.error, p.source, p.class, p.rule, p.http_status, p.attempts,
	p.latency_ns, p.called_at, p.history, p.provenance, p.filter, p.filter_detail, p.doc_eval, p.doc_reason, p.doc_raw, p.doc_model, p.split`

func scanPair(rows *sql.Rows, withRationale bool) (*mirror.Pair, error) {
	return scanPairWith(rows, withRationale, nil)
}

// scanPairWith scans a pair row, led by its id when id is not nil.
func scanPairWith(rows *sql.Rows, withRationale bool, id *int64) (*mirror.Pair, error) {
	var p mirror.Pair
	var status, hist, prov string
	var latency, called int64
	var docEval sql.NullInt64
	var docReason, docRaw, docModel string
	var body []byte
	var dest []any
	if id != nil {
		dest = append(dest, id)
	}
	dest = append(dest, &p.Tool, &p.Args, &p.Origin, &p.Kind, &status, &body, &p.Error, &p.Source, &p.Class, &p.Rule, &p.HTTPStatus, &p.Attempts,
		&latency, &called, &hist, &prov, &p.Filter, &p.FilterDetail, &docEval, &docReason, &docRaw, &docModel, &p.Split)
	if withRationale {
		dest = append(dest, &p.Rationale)
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	p.Status = toolenv.Status(status)
	if len(body) > 0 {
		p.Body = json.RawMessage(body)
	}
	p.Latency = time.Duration(latency)
	p.CalledAt = fromNanos(called)
	if hist != "" {
		if err := json.Unmarshal([]byte(hist), &p.History); err != nil {
			return nil, fmt.Errorf("history of %s %s: %w", p.Tool, p.Args, err)
		}
	}
	if prov != "" {
		p.Provenance = json.RawMessage(prov)
	}
	if docEval.Valid {
		p.Doc = &mirror.DocCheck{Eval: int(docEval.Int64), Reason: docReason, Raw: docRaw, Model: docModel}
	}
	return &p, nil
}

// selectPairs is the SELECT list of pairs, with or without the body.
func selectPairs(noBody bool) string {
	if noBody {
		return strings.Replace(pairSelect, "{body}", "x''", 1)
	}
	return strings.Replace(pairSelect, "{body}", "p.body", 1)
}

// EachPair implements mirror.Store. OrderMix sorts only the rows' ids (in
// SQLite's sorter, which spills to disk) and reads the rows in chunks by
// id, so that neither the sort nor the program holds the bodies.
func (s *Store) EachPair(ctx context.Context, ds string, q mirror.PairQuery, fn func(*mirror.Pair) error) error {
	var b strings.Builder
	args := []any{}
	from := ` FROM mirror_pairs p`
	if q.WithRationale {
		from = ` FROM mirror_pairs p JOIN mirror_rationales r ON r.dataset = p.dataset AND r.tool = p.tool AND r.args = p.args AND r.verdict = 'kept'`
	}
	b.WriteString(` WHERE p.dataset = ?`)
	args = append(args, ds)
	if q.Origin != "" {
		b.WriteString(` AND p.origin = ?`)
		args = append(args, q.Origin)
	}
	if q.Tool != "" {
		b.WriteString(` AND p.tool = ?`)
		args = append(args, q.Tool)
	}
	in := func(col string, vals []string) {
		if vals == nil {
			return
		}
		if len(vals) == 0 {
			b.WriteString(` AND 1 = 0`)
			return
		}
		b.WriteString(` AND ` + col + ` IN (?` + strings.Repeat(", ?", len(vals)-1) + `)`)
		for _, v := range vals {
			args = append(args, v)
		}
	}
	in("p.filter", q.Filters)
	in("p.split", q.Splits)
	if q.OK != nil {
		if *q.OK {
			b.WriteString(` AND p.status = 'ok'`)
		} else {
			b.WriteString(` AND p.status <> 'ok'`)
		}
	}
	if q.NoDoc {
		b.WriteString(` AND p.doc_eval IS NULL`)
	}
	where := b.String()
	cols := selectPairs(q.NoBody)
	if q.WithRationale {
		cols += `, r.text`
	}
	switch q.Order {
	case mirror.OrderKey:
		query := cols + from + where + ` ORDER BY p.tool, p.args`
		if q.Limit > 0 {
			query += ` LIMIT ?`
			args = append(args, q.Limit)
		}
		rows, err := s.r.QueryContext(ctx, s.q(query), args...)
		if err != nil {
			return fmt.Errorf("mirror store: read pairs: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			p, err := scanPair(rows, q.WithRationale)
			if err != nil {
				return fmt.Errorf("mirror store: read pairs: %w", err)
			}
			if err := fn(p); err != nil {
				return err
			}
		}
		return rows.Err()
	case mirror.OrderMix:
		k := mirror.MixKey(q.Seed)
		query := `SELECT p.id` + from + where + ` ORDER BY ((p.h | ?) - (p.h & ?)), p.tool, p.args`
		args = append(args, k, k)
		if q.Limit > 0 {
			query += ` LIMIT ?`
			args = append(args, q.Limit)
		}
		rows, err := s.r.QueryContext(ctx, s.q(query), args...)
		if err != nil {
			return fmt.Errorf("mirror store: read pairs: %w", err)
		}
		defer rows.Close()
		ids := make([]int64, 0, mixChunk)
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return fmt.Errorf("mirror store: read pairs: %w", err)
			}
			if ids = append(ids, id); len(ids) == mixChunk {
				if err := s.pairsByID(ctx, cols+from, ids, q.WithRationale, fn); err != nil {
					return err
				}
				ids = ids[:0]
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("mirror store: read pairs: %w", err)
		}
		return s.pairsByID(ctx, cols+from, ids, q.WithRationale, fn)
	}
	return fmt.Errorf("mirror store: unknown order %q", q.Order)
}

// mixChunk is how many rows OrderMix reads at once.
const mixChunk = 256

// pairsByID reads the pairs of ids and calls fn in the ids' order.
func (s *Store) pairsByID(ctx context.Context, head string, ids []int64, withRationale bool, fn func(*mirror.Pair) error) error {
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.r.QueryContext(ctx, s.q(strings.Replace(head, "SELECT ", "SELECT p.id, ", 1)+` WHERE p.id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)`), args...)
	if err != nil {
		return fmt.Errorf("mirror store: read pairs: %w", err)
	}
	byID := make(map[int64]*mirror.Pair, len(ids))
	for rows.Next() {
		var id int64
		p, err := scanPairWith(rows, withRationale, &id)
		if err != nil {
			rows.Close()
			return fmt.Errorf("mirror store: read pairs: %w", err)
		}
		byID[id] = p
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("mirror store: read pairs: %w", err)
	}
	for _, id := range ids {
		if p := byID[id]; p != nil {
			if err := fn(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// GetPair implements mirror.Store.
func (s *Store) GetPair(ctx context.Context, ds, tool, args string) (*mirror.Pair, bool, error) {
	rows, err := s.r.QueryContext(ctx, s.q(selectPairs(false)+` FROM mirror_pairs p WHERE p.dataset = ? AND p.tool = ? AND p.args = ?`), ds, tool, args)
	if err != nil {
		return nil, false, fmt.Errorf("mirror store: read pair: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, false, rows.Err()
	}
	p, err := scanPair(rows, false)
	if err != nil {
		return nil, false, fmt.Errorf("mirror store: read pair: %w", err)
	}
	return p, true, nil
}

// UpdatePairs implements mirror.Store.
func (s *Store) UpdatePairs(ctx context.Context, ds string, ups []mirror.PairUpdate) error {
	if len(ups) == 0 {
		return nil
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		stmts := map[string]*sql.Stmt{}
		defer func() {
			for _, st := range stmts {
				st.Close()
			}
		}()
		for _, u := range ups {
			var sets []string
			var args []any
			if u.Filter != nil {
				sets = append(sets, "filter = ?")
				args = append(args, *u.Filter)
			}
			if u.FilterDetail != nil {
				sets = append(sets, "filter_detail = ?")
				args = append(args, *u.FilterDetail)
			}
			if u.Doc != nil {
				sets = append(sets, "doc_eval = ?", "doc_reason = ?", "doc_raw = ?", "doc_model = ?")
				args = append(args, u.Doc.Eval, u.Doc.Reason, u.Doc.Raw, u.Doc.Model)
			}
			if u.Split != nil {
				sets = append(sets, "split = ?")
				args = append(args, *u.Split)
			}
			if len(sets) == 0 {
				continue
			}
			query := s.q(`UPDATE mirror_pairs SET ` + strings.Join(sets, ", ") + ` WHERE dataset = ? AND tool = ? AND args = ?`)
			st := stmts[query]
			if st == nil {
				var err error
				if st, err = tx.PrepareContext(ctx, query); err != nil {
					return fmt.Errorf("mirror store: update pairs: %w", err)
				}
				stmts[query] = st
			}
			if _, err := st.ExecContext(ctx, append(args, ds, u.Tool, u.Args)...); err != nil {
				return fmt.Errorf("mirror store: update pair of %s: %w", u.Tool, err)
			}
		}
		return nil
	})
}

// ResetPairs implements mirror.Store.
func (s *Store) ResetPairs(ctx context.Context, ds, origin string, columns ...string) error {
	var sets []string
	for _, c := range columns {
		switch c {
		case "filter":
			sets = append(sets, "filter = ''", "filter_detail = ''")
		case "split":
			sets = append(sets, "split = ''")
		case "doc":
			sets = append(sets, "doc_eval = NULL", "doc_reason = ''", "doc_raw = ''", "doc_model = ''")
		default:
			return fmt.Errorf("mirror store: cannot reset column %q", c)
		}
	}
	if len(sets) == 0 {
		return nil
	}
	query := `UPDATE mirror_pairs SET ` + strings.Join(sets, ", ") + ` WHERE dataset = ?`
	args := []any{ds}
	if origin != "" {
		query += ` AND origin = ?`
		args = append(args, origin)
	}
	if _, err := s.w.ExecContext(ctx, s.q(query), args...); err != nil {
		return fmt.Errorf("mirror store: reset %s: %w", strings.Join(columns, ", "), err)
	}
	return nil
}

// PairStats implements mirror.Store.
func (s *Store) PairStats(ctx context.Context, ds string) ([]mirror.PairStat, error) {
	rows, err := s.r.QueryContext(ctx, s.q(`SELECT p.tool, p.origin, CASE WHEN p.status = 'ok' THEN 1 ELSE 0 END AS ok, p.class, p.filter, p.split, p.doc_eval,
		CASE WHEN r.tool IS NULL THEN 0 ELSE 1 END AS has_r, COUNT(*)
		FROM mirror_pairs p LEFT JOIN mirror_rationales r ON r.dataset = p.dataset AND r.tool = p.tool AND r.args = p.args AND r.verdict = 'kept'
		WHERE p.dataset = ?
		GROUP BY p.tool, p.origin, CASE WHEN p.status = 'ok' THEN 1 ELSE 0 END, p.class, p.filter, p.split, p.doc_eval, CASE WHEN r.tool IS NULL THEN 0 ELSE 1 END
		ORDER BY p.tool, p.origin, ok, p.class, p.filter, p.split, p.doc_eval, has_r`), ds)
	if err != nil {
		return nil, fmt.Errorf("mirror store: pair stats: %w", err)
	}
	defer rows.Close()
	var out []mirror.PairStat
	for rows.Next() {
		var st mirror.PairStat
		var ok, hasR int
		var doc sql.NullInt64
		if err := rows.Scan(&st.Tool, &st.Origin, &ok, &st.Class, &st.Filter, &st.Split, &doc, &hasR, &st.Count); err != nil {
			return nil, fmt.Errorf("mirror store: pair stats: %w", err)
		}
		st.OK, st.Rationale = ok == 1, hasR == 1
		if doc.Valid {
			st.DocEval = mirror.Ptr(int(doc.Int64))
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// PutRationales implements mirror.Store.
func (s *Store) PutRationales(ctx context.Context, ds string, rs []*mirror.Rationale) error {
	if len(rs) == 0 {
		return nil
	}
	now := time.Now()
	return s.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, s.q(`INSERT INTO mirror_rationales (dataset, tool, args, text, tokens, verdict, detail, model, created)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dataset, tool, args) DO UPDATE SET
			text = excluded.text, tokens = excluded.tokens, verdict = excluded.verdict, detail = excluded.detail, model = excluded.model, created = excluded.created`))
		if err != nil {
			return fmt.Errorf("mirror store: put rationales: %w", err)
		}
		defer stmt.Close()
		for _, r := range rs {
			created := r.Created
			if created.IsZero() {
				created = now
			}
			if _, err := stmt.ExecContext(ctx, ds, r.Tool, r.Args, r.Text, r.Tokens, r.Verdict, r.Detail, r.Model, nanos(created)); err != nil {
				return fmt.Errorf("mirror store: put rationale of %s: %w", r.Tool, err)
			}
		}
		return nil
	})
}

// HasRationale implements mirror.Store.
func (s *Store) HasRationale(ctx context.Context, ds string, keys []mirror.PairKey) (map[mirror.PairKey]bool, error) {
	out := make(map[mirror.PairKey]bool, len(keys))
	stmt, err := s.r.PrepareContext(ctx, s.q(`SELECT 1 FROM mirror_rationales WHERE dataset = ? AND tool = ? AND args = ?`))
	if err != nil {
		return nil, fmt.Errorf("mirror store: read rationales: %w", err)
	}
	defer stmt.Close()
	for _, k := range keys {
		var one int
		switch err := stmt.QueryRowContext(ctx, ds, k.Tool, k.Args).Scan(&one); {
		case err == nil:
			out[k] = true
		case errors.Is(err, sql.ErrNoRows):
		default:
			return nil, fmt.Errorf("mirror store: read rationales: %w", err)
		}
	}
	return out, nil
}

// EachRationale implements mirror.Store.
func (s *Store) EachRationale(ctx context.Context, ds string, fn func(*mirror.Rationale) error) error {
	rows, err := s.r.QueryContext(ctx, s.q(`SELECT tool, args, text, tokens, verdict, detail, model, created FROM mirror_rationales WHERE dataset = ? ORDER BY tool, args`), ds)
	if err != nil {
		return fmt.Errorf("mirror store: read rationales: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r mirror.Rationale
		var created int64
		if err := rows.Scan(&r.Tool, &r.Args, &r.Text, &r.Tokens, &r.Verdict, &r.Detail, &r.Model, &created); err != nil {
			return fmt.Errorf("mirror store: read rationales: %w", err)
		}
		r.Created = fromNanos(created)
		if err := fn(&r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// PutRejects implements mirror.Store.
func (s *Store) PutRejects(ctx context.Context, ds string, rs []*mirror.Reject) error {
	if len(rs) == 0 {
		return nil
	}
	now := time.Now()
	return s.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, s.q(`INSERT INTO mirror_rejects (dataset, stage, tool, args, body, error, reason, detail, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`))
		if err != nil {
			return fmt.Errorf("mirror store: put rejects: %w", err)
		}
		defer stmt.Close()
		for _, r := range rs {
			created := r.Created
			if created.IsZero() {
				created = now
			}
			if _, err := stmt.ExecContext(ctx, ds, r.Stage, r.Tool, r.Args, r.Body, r.Error, r.Reason, r.Detail, nanos(created)); err != nil {
				return fmt.Errorf("mirror store: put reject of %s: %w", r.Tool, err)
			}
		}
		return nil
	})
}

// RejectStats implements mirror.Store.
func (s *Store) RejectStats(ctx context.Context, ds string) ([]mirror.RejectStat, error) {
	rows, err := s.r.QueryContext(ctx, s.q(`SELECT stage, tool, reason, COUNT(*) FROM mirror_rejects WHERE dataset = ? GROUP BY stage, tool, reason ORDER BY stage, tool, reason`), ds)
	if err != nil {
		return nil, fmt.Errorf("mirror store: reject stats: %w", err)
	}
	defer rows.Close()
	var out []mirror.RejectStat
	for rows.Next() {
		var st mirror.RejectStat
		if err := rows.Scan(&st.Stage, &st.Tool, &st.Reason, &st.Count); err != nil {
			return nil, fmt.Errorf("mirror store: reject stats: %w", err)
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// Meta implements mirror.Store.
func (s *Store) Meta(ctx context.Context, ds, key string) (string, bool, error) {
	var v string
	switch err := s.r.QueryRowContext(ctx, s.q(`SELECT value FROM mirror_meta WHERE dataset = ? AND key = ?`), ds, key).Scan(&v); {
	case err == nil:
		return v, true, nil
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	default:
		return "", false, fmt.Errorf("mirror store: read %s: %w", key, err)
	}
}

// SetMeta implements mirror.Store.
func (s *Store) SetMeta(ctx context.Context, ds, key, value string) error {
	if _, err := s.w.ExecContext(ctx, s.q(`INSERT INTO mirror_meta (dataset, key, value) VALUES (?, ?, ?)
		ON CONFLICT (dataset, key) DO UPDATE SET value = excluded.value`), ds, key, value); err != nil {
		return fmt.Errorf("mirror store: write %s: %w", key, err)
	}
	return nil
}

// Lookup implements llm.Recorder.
func (s *Store) Lookup(ctx context.Context, key string) ([]byte, bool, error) {
	var resp []byte
	switch err := s.r.QueryRowContext(ctx, s.q(`SELECT response FROM mirror_records WHERE key = ?`), key).Scan(&resp); {
	case err == nil:
		return resp, true, nil
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	default:
		return nil, false, fmt.Errorf("mirror store: read record: %w", err)
	}
}

// Record implements llm.Recorder. The first record of a key wins, so a
// replay always sees what the first run saw.
func (s *Store) Record(ctx context.Context, key string, req, resp []byte) error {
	if _, err := s.w.ExecContext(ctx, s.q(`INSERT INTO mirror_records (key, request, response, created) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`),
		key, req, resp, time.Now().UnixNano()); err != nil {
		return fmt.Errorf("mirror store: write record: %w", err)
	}
	return nil
}
