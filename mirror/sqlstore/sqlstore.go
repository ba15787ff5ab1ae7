// Package sqlstore implements mirror.Store on toolenv's store (package
// store): SQLite (embedded, the default) and PostgreSQL (for several
// machines). The mirror's tables are a store component ("mirror") with
// its own migrations (Migrations), applied by store.Open like the store's
// own; the model records are the store's records. The statements use what
// both databases share (INSERT ... ON CONFLICT, integer arithmetic within
// 62 bits, no window functions); placeholders, types and collation come
// from the dialect. Arguments are keyed by their SHA-256 (a PostgreSQL
// index entry holds about 2.7 kB, arguments do not fit), free text is
// stored as bytes (PostgreSQL text holds no NUL).
package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/store"
)

// Store is a mirror.Store on a toolenv store.
type Store struct {
	st   store.Store
	own  bool // opened here: Close closes it
	d    dialect
	db   *store.DB
	w, r *sql.DB
	path string
}

var _ mirror.Store = (*Store)(nil)

// dialect is what differs between databases.
type dialect struct {
	name string
	// order is the ORDER BY of (tool, args): bytewise in both.
	order string
	// emptyBody is the expression of an empty body.
	emptyBody string
}

var sqliteDialect = dialect{name: "sqlite", order: "p.tool, p.args", emptyBody: "x''"}

var postgresDialect = dialect{name: "postgres", order: `p.tool COLLATE "C", p.args COLLATE "C"`, emptyBody: "''::bytea"}

// Open opens the toolenv store dsn names (an SQLite file, or a
// postgres:// URL) with the mirror's tables, migrating them as store.Open
// migrates the store's own. Close closes it.
func Open(ctx context.Context, dsn string, opts store.Options) (*Store, error) {
	if dsn == "" {
		return nil, errors.New("mirror store: no path (pass --store FILE or a postgres:// URL)")
	}
	if dsn == ":memory:" {
		return nil, errors.New("mirror store: an in-memory store cannot stream pairs while it writes; give a file path (a temporary folder is fine)")
	}
	opts.Migrations = append(append([]store.Migration(nil), opts.Migrations...), Migrations...)
	st, err := store.Open(ctx, dsn, opts)
	if err != nil {
		return nil, err
	}
	s, err := New(st)
	if err != nil {
		st.Close()
		return nil, err
	}
	s.own, s.path = true, dsn
	return s, nil
}

// OpenSQLite opens the SQLite store at path (see Open).
func OpenSQLite(ctx context.Context, path string, opts store.Options) (*Store, error) {
	if store.IsPostgres(path) {
		return nil, fmt.Errorf("mirror store: %s is not a file path", store.Redact(path))
	}
	return Open(ctx, path, opts)
}

// New uses an open toolenv store, which must have been opened with
// Migrations among its options. Closing the returned Store does not close
// st.
func New(st store.Store) (*Store, error) {
	db := st.SQL()
	s := &Store{st: st, db: db, w: db.Write, r: db.Read}
	switch db.Dialect {
	case "sqlite":
		s.d = sqliteDialect
	case "postgres":
		s.d = postgresDialect
	default:
		return nil, fmt.Errorf("mirror store: unknown dialect %q", db.Dialect)
	}
	// The tables exist only when the store was opened with Migrations.
	var n int
	if err := s.r.QueryRow(`SELECT count(*) FROM mirror_meta`).Scan(&n); err != nil {
		return nil, fmt.Errorf("mirror store: the store has no mirror tables (open it with sqlstore.Migrations): %w", err)
	}
	return s, nil
}

// Path returns what the store was opened from.
func (s *Store) Path() string { return s.path }

// Close closes the toolenv store when Open opened it.
func (s *Store) Close() error {
	if s.own {
		return s.st.Close()
	}
	return nil
}

// Migrations are the mirror's tables, as the "mirror" component of
// toolenv's store.
var Migrations = []store.Migration{{
	Component: "mirror", Version: 1, Name: "requests, pairs, rationales, rejects and meta of toolenv mirror",
	SQLite:   strings.NewReplacer("{serial}", "INTEGER PRIMARY KEY", "{blob}", "BLOB").Replace(schema),
	Postgres: strings.NewReplacer("{serial}", "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "{blob}", "bytea").Replace(schema),
}}

// schema is the tables, with the dialect's types put in.
const schema = `
CREATE TABLE IF NOT EXISTS mirror_requests (
	id       {serial},
	dataset  TEXT NOT NULL,
	tool     TEXT NOT NULL,
	akey     {blob} NOT NULL,
	args     TEXT NOT NULL,
	origin   TEXT NOT NULL,
	kind     TEXT NOT NULL DEFAULT '',
	scenario {blob},
	created  BIGINT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS mirror_requests_key ON mirror_requests (dataset, tool, akey);
CREATE TABLE IF NOT EXISTS mirror_pairs (
	id            {serial},
	dataset       TEXT NOT NULL,
	tool          TEXT NOT NULL,
	akey          {blob} NOT NULL,
	args          TEXT NOT NULL,
	h             BIGINT NOT NULL,
	origin        TEXT NOT NULL,
	kind          TEXT NOT NULL DEFAULT '',
	status        TEXT NOT NULL,
	body          {blob},
	error         {blob},
	source        TEXT NOT NULL DEFAULT '',
	class         TEXT NOT NULL DEFAULT '',
	rule          TEXT NOT NULL DEFAULT '',
	http_status   INTEGER NOT NULL DEFAULT 0,
	attempts      INTEGER NOT NULL DEFAULT 0,
	latency_ns    BIGINT NOT NULL DEFAULT 0,
	called_at     BIGINT NOT NULL DEFAULT 0,
	history       {blob},
	provenance    {blob},
	filter        TEXT NOT NULL DEFAULT '',
	filter_detail {blob},
	doc_eval      INTEGER,
	doc_reason    {blob},
	doc_raw       {blob},
	doc_model     TEXT NOT NULL DEFAULT '',
	split         TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX IF NOT EXISTS mirror_pairs_key ON mirror_pairs (dataset, tool, akey);
CREATE TABLE IF NOT EXISTS mirror_rationales (
	id       {serial},
	dataset  TEXT NOT NULL,
	tool     TEXT NOT NULL,
	akey     {blob} NOT NULL,
	args     TEXT NOT NULL,
	text     {blob},
	tokens   INTEGER NOT NULL,
	verdict  TEXT NOT NULL,
	detail   {blob},
	model    TEXT NOT NULL DEFAULT '',
	created  BIGINT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS mirror_rationales_key ON mirror_rationales (dataset, tool, akey);
CREATE TABLE IF NOT EXISTS mirror_rejects (
	id      {serial},
	dataset TEXT NOT NULL,
	stage   TEXT NOT NULL,
	tool    TEXT NOT NULL,
	args    {blob},
	body    {blob},
	error   {blob},
	reason  TEXT NOT NULL,
	detail  {blob},
	created BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS mirror_rejects_dataset ON mirror_rejects (dataset, stage);
CREATE TABLE IF NOT EXISTS mirror_meta (
	dataset TEXT NOT NULL,
	key     TEXT NOT NULL,
	value   {blob},
	PRIMARY KEY (dataset, key)
);
`

func (s *Store) q(query string) string { return s.db.Rebind(query) }

// akey is the key arguments are indexed under.
func akey(args string) []byte {
	sum := sha256.Sum256([]byte(args))
	return sum[:]
}

// b is a text value for a bytes column.
func b(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return []byte(s)
}

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
		stmt, err := tx.PrepareContext(ctx, s.q(`INSERT INTO mirror_requests (dataset, tool, akey, args, origin, kind, scenario, created)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dataset, tool, akey) DO NOTHING`))
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
			res, err := stmt.ExecContext(ctx, ds, r.Tool, akey(r.Args), r.Args, r.Origin, r.Kind, b(r.Scenario), nanos(created))
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
		query += ` AND NOT EXISTS (SELECT 1 FROM mirror_pairs p WHERE p.dataset = r.dataset AND p.tool = r.tool AND p.akey = r.akey)`
	}
	query += ` ORDER BY r.id`
	rows, err := s.r.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return fmt.Errorf("mirror store: read requests: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r mirror.Request
		var scenario []byte
		var created int64
		if err := rows.Scan(&r.Seq, &r.Tool, &r.Args, &r.Origin, &r.Kind, &scenario, &created); err != nil {
			return fmt.Errorf("mirror store: read requests: %w", err)
		}
		r.Scenario = string(scenario)
		r.Created = fromNanos(created)
		if err := fn(&r); err != nil {
			return err
		}
	}
	return rows.Err()
}

const pairColumns = `tool, akey, args, h, origin, kind, status, body, error, source, class, rule, http_status, attempts, latency_ns, called_at,
	history, provenance, filter, filter_detail, doc_eval, doc_reason, doc_raw, doc_model, split`

func pairValues(ds string, p *mirror.Pair) ([]any, error) {
	var hist []byte
	if len(p.History) > 0 {
		var err error
		if hist, err = json.Marshal(p.History); err != nil {
			return nil, err
		}
	}
	var docEval any
	var docReason, docRaw, docModel string
	if p.Doc != nil {
		docEval, docReason, docRaw, docModel = p.Doc.Eval, p.Doc.Reason, p.Doc.Raw, p.Doc.Model
	}
	return []any{ds, p.Tool, akey(p.Args), p.Args, mirror.Hash(p.Tool, p.Args), p.Origin, p.Kind, string(p.Status), b(string(p.Body)), b(p.Error), p.Source, p.Class, p.Rule,
		p.HTTPStatus, p.Attempts, int64(p.Latency), nanos(p.CalledAt), b(string(hist)), b(string(p.Provenance)), p.Filter, b(p.FilterDetail),
		docEval, b(docReason), b(docRaw), docModel, p.Split}, nil
}

const pairInsert = `INSERT INTO mirror_pairs (dataset, ` + pairColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// PutPairs implements mirror.Store.
func (s *Store) PutPairs(ctx context.Context, ds string, pairs []*mirror.Pair) error {
	if len(pairs) == 0 {
		return nil
	}
	set := []string{}
	for _, c := range strings.Split(pairColumns, ",") {
		c = strings.TrimSpace(c)
		if c == "tool" || c == "akey" {
			continue
		}
		set = append(set, c+" = excluded."+c)
	}
	query := s.q(pairInsert + ` ON CONFLICT (dataset, tool, akey) DO UPDATE SET ` + strings.Join(set, ", "))
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
		stmt, err := tx.PrepareContext(ctx, s.q(pairInsert+` ON CONFLICT (dataset, tool, akey) DO NOTHING`))
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

// selectPairs is the SELECT list of pairs, with or without the body.
func (s *Store) selectPairs(noBody bool) string {
	if noBody {
		return strings.Replace(pairSelect, "{body}", s.d.emptyBody, 1)
	}
	return strings.Replace(pairSelect, "{body}", "p.body", 1)
}

func scanPair(rows *sql.Rows, withRationale bool) (*mirror.Pair, error) {
	return scanPairWith(rows, withRationale, nil)
}

// scanPairWith scans a pair row, led by its id when id is not nil.
func scanPairWith(rows *sql.Rows, withRationale bool, id *int64) (*mirror.Pair, error) {
	var p mirror.Pair
	var status string
	var body, errText, hist, prov, detail, docReason, docRaw, rationale []byte
	var latency, called int64
	var docEval sql.NullInt64
	var docModel string
	var dest []any
	if id != nil {
		dest = append(dest, id)
	}
	dest = append(dest, &p.Tool, &p.Args, &p.Origin, &p.Kind, &status, &body, &errText, &p.Source, &p.Class, &p.Rule, &p.HTTPStatus, &p.Attempts,
		&latency, &called, &hist, &prov, &p.Filter, &detail, &docEval, &docReason, &docRaw, &docModel, &p.Split)
	if withRationale {
		dest = append(dest, &rationale)
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	p.Status = toolenv.Status(status)
	if len(body) > 0 {
		p.Body = json.RawMessage(body)
	}
	p.Error, p.FilterDetail, p.Rationale = string(errText), string(detail), string(rationale)
	p.Latency = time.Duration(latency)
	p.CalledAt = fromNanos(called)
	if len(hist) > 0 {
		if err := json.Unmarshal(hist, &p.History); err != nil {
			return nil, fmt.Errorf("history of %s %s: %w", p.Tool, p.Args, err)
		}
	}
	if len(prov) > 0 {
		p.Provenance = json.RawMessage(prov)
	}
	if docEval.Valid {
		p.Doc = &mirror.DocCheck{Eval: int(docEval.Int64), Reason: string(docReason), Raw: string(docRaw), Model: docModel}
	}
	return &p, nil
}

// EachPair implements mirror.Store. OrderMix sorts only the rows' ids (in
// the database's sorter, which spills to disk) and reads the rows in
// chunks by id, so that neither the sort nor the program holds the
// bodies.
func (s *Store) EachPair(ctx context.Context, ds string, q mirror.PairQuery, fn func(*mirror.Pair) error) error {
	var w strings.Builder
	args := []any{}
	from := ` FROM mirror_pairs p`
	if q.WithRationale {
		from = ` FROM mirror_pairs p JOIN mirror_rationales r ON r.dataset = p.dataset AND r.tool = p.tool AND r.akey = p.akey AND r.verdict = 'kept'`
	}
	w.WriteString(` WHERE p.dataset = ?`)
	args = append(args, ds)
	if q.Origin != "" {
		w.WriteString(` AND p.origin = ?`)
		args = append(args, q.Origin)
	}
	if q.Tool != "" {
		w.WriteString(` AND p.tool = ?`)
		args = append(args, q.Tool)
	}
	in := func(col string, vals []string) {
		if vals == nil {
			return
		}
		if len(vals) == 0 {
			w.WriteString(` AND 1 = 0`)
			return
		}
		w.WriteString(` AND ` + col + ` IN (?` + strings.Repeat(", ?", len(vals)-1) + `)`)
		for _, v := range vals {
			args = append(args, v)
		}
	}
	in("p.filter", q.Filters)
	in("p.split", q.Splits)
	if q.OK != nil {
		if *q.OK {
			w.WriteString(` AND p.status = 'ok'`)
		} else {
			w.WriteString(` AND p.status <> 'ok'`)
		}
	}
	if q.NoDoc {
		w.WriteString(` AND p.doc_eval IS NULL`)
	}
	where := w.String()
	cols := s.selectPairs(q.NoBody)
	if q.WithRationale {
		cols += `, r.text`
	}
	switch q.Order {
	case mirror.OrderKey:
		query := cols + from + where + ` ORDER BY ` + s.d.order
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
		query := `SELECT p.id` + from + where + ` ORDER BY ((p.h | ?) - (p.h & ?)), ` + s.d.order
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
	rows, err := s.r.QueryContext(ctx, s.q(s.selectPairs(false)+` FROM mirror_pairs p WHERE p.dataset = ? AND p.tool = ? AND p.akey = ?`), ds, tool, akey(args))
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
				args = append(args, b(*u.FilterDetail))
			}
			if u.Doc != nil {
				sets = append(sets, "doc_eval = ?", "doc_reason = ?", "doc_raw = ?", "doc_model = ?")
				args = append(args, u.Doc.Eval, b(u.Doc.Reason), b(u.Doc.Raw), u.Doc.Model)
			}
			if u.Split != nil {
				sets = append(sets, "split = ?")
				args = append(args, *u.Split)
			}
			if len(sets) == 0 {
				continue
			}
			query := s.q(`UPDATE mirror_pairs SET ` + strings.Join(sets, ", ") + ` WHERE dataset = ? AND tool = ? AND akey = ?`)
			st := stmts[query]
			if st == nil {
				var err error
				if st, err = tx.PrepareContext(ctx, query); err != nil {
					return fmt.Errorf("mirror store: update pairs: %w", err)
				}
				stmts[query] = st
			}
			if _, err := st.ExecContext(ctx, append(args, ds, u.Tool, akey(u.Args))...); err != nil {
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
			sets = append(sets, "filter = ''", "filter_detail = NULL")
		case "split":
			sets = append(sets, "split = ''")
		case "doc":
			sets = append(sets, "doc_eval = NULL", "doc_reason = NULL", "doc_raw = NULL", "doc_model = ''")
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
	rows, err := s.r.QueryContext(ctx, s.q(`SELECT p.tool, p.origin, CASE WHEN p.status = 'ok' THEN 1 ELSE 0 END AS ok, p.class, p.rule, p.filter, p.split, p.doc_eval,
		CASE WHEN r.tool IS NULL THEN 0 ELSE 1 END AS has_r, COUNT(*)
		FROM mirror_pairs p LEFT JOIN mirror_rationales r ON r.dataset = p.dataset AND r.tool = p.tool AND r.akey = p.akey AND r.verdict = 'kept'
		WHERE p.dataset = ?
		GROUP BY p.tool, p.origin, CASE WHEN p.status = 'ok' THEN 1 ELSE 0 END, p.class, p.rule, p.filter, p.split, p.doc_eval, CASE WHEN r.tool IS NULL THEN 0 ELSE 1 END`), ds)
	if err != nil {
		return nil, fmt.Errorf("mirror store: pair stats: %w", err)
	}
	defer rows.Close()
	var out []mirror.PairStat
	for rows.Next() {
		var st mirror.PairStat
		var ok, hasR int
		var doc sql.NullInt64
		if err := rows.Scan(&st.Tool, &st.Origin, &ok, &st.Class, &st.Rule, &st.Filter, &st.Split, &doc, &hasR, &st.Count); err != nil {
			return nil, fmt.Errorf("mirror store: pair stats: %w", err)
		}
		st.OK, st.Rationale = ok == 1, hasR == 1
		if doc.Valid {
			st.DocEval = mirror.Ptr(int(doc.Int64))
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Bytewise order in every dialect, so that callers see one order.
	sortStats(out)
	return out, nil
}

// PutRationales implements mirror.Store.
func (s *Store) PutRationales(ctx context.Context, ds string, rs []*mirror.Rationale) error {
	if len(rs) == 0 {
		return nil
	}
	now := time.Now()
	return s.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, s.q(`INSERT INTO mirror_rationales (dataset, tool, akey, args, text, tokens, verdict, detail, model, created)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dataset, tool, akey) DO UPDATE SET
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
			if _, err := stmt.ExecContext(ctx, ds, r.Tool, akey(r.Args), r.Args, b(r.Text), r.Tokens, r.Verdict, b(r.Detail), r.Model, nanos(created)); err != nil {
				return fmt.Errorf("mirror store: put rationale of %s: %w", r.Tool, err)
			}
		}
		return nil
	})
}

// HasRationale implements mirror.Store.
func (s *Store) HasRationale(ctx context.Context, ds string, keys []mirror.PairKey) (map[mirror.PairKey]bool, error) {
	out := make(map[mirror.PairKey]bool, len(keys))
	stmt, err := s.r.PrepareContext(ctx, s.q(`SELECT 1 FROM mirror_rationales WHERE dataset = ? AND tool = ? AND akey = ?`))
	if err != nil {
		return nil, fmt.Errorf("mirror store: read rationales: %w", err)
	}
	defer stmt.Close()
	for _, k := range keys {
		var one int
		switch err := stmt.QueryRowContext(ctx, ds, k.Tool, akey(k.Args)).Scan(&one); {
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
	order := "tool, args"
	if s.d.name == "postgres" {
		order = `tool COLLATE "C", args COLLATE "C"`
	}
	rows, err := s.r.QueryContext(ctx, s.q(`SELECT tool, args, text, tokens, verdict, detail, model, created FROM mirror_rationales WHERE dataset = ? ORDER BY `+order), ds)
	if err != nil {
		return fmt.Errorf("mirror store: read rationales: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r mirror.Rationale
		var text, detail []byte
		var created int64
		if err := rows.Scan(&r.Tool, &r.Args, &text, &r.Tokens, &r.Verdict, &detail, &r.Model, &created); err != nil {
			return fmt.Errorf("mirror store: read rationales: %w", err)
		}
		r.Text, r.Detail = string(text), string(detail)
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
			if _, err := stmt.ExecContext(ctx, ds, r.Stage, r.Tool, b(r.Args), b(r.Body), b(r.Error), r.Reason, b(r.Detail), nanos(created)); err != nil {
				return fmt.Errorf("mirror store: put reject of %s: %w", r.Tool, err)
			}
		}
		return nil
	})
}

// RejectStats implements mirror.Store.
func (s *Store) RejectStats(ctx context.Context, ds string) ([]mirror.RejectStat, error) {
	rows, err := s.r.QueryContext(ctx, s.q(`SELECT stage, tool, reason, COUNT(*) FROM mirror_rejects WHERE dataset = ? GROUP BY stage, tool, reason`), ds)
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
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Stage != b.Stage {
			return a.Stage < b.Stage
		}
		if a.Tool != b.Tool {
			return a.Tool < b.Tool
		}
		return a.Reason < b.Reason
	})
	return out, nil
}

// Meta implements mirror.Store.
func (s *Store) Meta(ctx context.Context, ds, key string) (string, bool, error) {
	var v []byte
	switch err := s.r.QueryRowContext(ctx, s.q(`SELECT value FROM mirror_meta WHERE dataset = ? AND key = ?`), ds, key).Scan(&v); {
	case err == nil:
		return string(v), true, nil
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	default:
		return "", false, fmt.Errorf("mirror store: read %s: %w", key, err)
	}
}

// SetMeta implements mirror.Store.
func (s *Store) SetMeta(ctx context.Context, ds, key, value string) error {
	if _, err := s.w.ExecContext(ctx, s.q(`INSERT INTO mirror_meta (dataset, key, value) VALUES (?, ?, ?)
		ON CONFLICT (dataset, key) DO UPDATE SET value = excluded.value`), ds, key, b(value)); err != nil {
		return fmt.Errorf("mirror store: write %s: %w", key, err)
	}
	return nil
}

// Lookup implements llm.Recorder with the store's records.
func (s *Store) Lookup(ctx context.Context, key string) ([]byte, bool, error) {
	return s.st.Lookup(ctx, key)
}

// Record implements llm.Recorder with the store's records: the first
// record of a key wins, so a replay sees what the first run saw.
func (s *Store) Record(ctx context.Context, key string, req, resp []byte) error {
	return s.st.Record(ctx, key, req, resp)
}

// sortStats orders stats bytewise by their fields.
func sortStats(st []mirror.PairStat) {
	key := func(p mirror.PairStat) string {
		d := "-"
		if p.DocEval != nil {
			d = strconv.Itoa(*p.DocEval)
		}
		return strings.Join([]string{p.Tool, p.Origin, strconv.FormatBool(p.OK), p.Class, p.Rule, p.Filter, p.Split, d, strconv.FormatBool(p.Rationale)}, "\x00")
	}
	sort.SliceStable(st, func(i, j int) bool { return key(st[i]) < key(st[j]) })
}
