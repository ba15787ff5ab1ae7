package world

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/eval/endstate"
)

// Options configure a Base.
type Options struct {
	// Conns is how many writable copies of the database the base keeps
	// (default 4): calls of worlds with changes run on them, one at a
	// time each.
	Conns int
	// TempDir is where a database served from its file is copied for
	// writing (default the system's temporary folder).
	TempDir string
	// MaxRows caps the rows one world may have changed (default 10,000):
	// a write past it fails with too_large.
	MaxRows int
	// MaxKeys caps the rows one write may address (default 1,000).
	MaxKeys int
}

func (o *Options) defaults() {
	if o.Conns <= 0 {
		o.Conns = 4
	}
	if o.MaxRows <= 0 {
		o.MaxRows = 10000
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = 1000
	}
}

// Base is a database worlds are made over: its read-only handle (reads
// of worlds that changed nothing go there), its schema, and a pool of
// writable private copies, made on the first call of a world that
// changed something. Safe for concurrent use.
type Base struct {
	DB     *rodb.DB
	schema *Schema
	opt    Options

	poolOnce sync.Once
	pool     *pool

	scripts scriptCache
}

// NewBase returns a base over db; it reads db's schema. Close it to
// close its writable copies (db stays open).
func NewBase(ctx context.Context, db *rodb.DB, opt Options) (*Base, error) {
	opt.defaults()
	s, err := ReadSchema(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", db.Name, err)
	}
	return &Base{DB: db, schema: s, opt: opt, scripts: scriptCache{m: map[string]*scriptEntry{}}}, nil
}

// Schema returns the base's schema.
func (b *Base) Schema() *Schema { return b.schema }

// Close closes the writable copies.
func (b *Base) Close() error {
	if b.pool != nil {
		return b.pool.close()
	}
	return nil
}

func (b *Base) conns() *pool {
	b.poolOnce.Do(func() {
		var drop []string
		for _, t := range b.schema.Triggers {
			drop = append(drop, "DROP TRIGGER IF EXISTS main."+rodb.Quote(t))
		}
		b.pool = newPool(b.DB.Writable(b.opt.TempDir), b.opt.Conns, drop)
	})
	return b.pool
}

// Initial is a world's initial state: the base itself, or the state an
// SQL script leaves (Base.Script). It is shared by the worlds made from
// it and never changes.
type Initial struct {
	base *Base
	d    *delta
	// Hash is the canonical hash of the initial state's changes from the
	// base ("" for the base itself).
	Hash string
}

// New returns a new world in the initial state init (nil: the base).
// It costs what a small struct does, whatever the database's size.
func (b *Base) New(init *Initial) *World {
	w := &World{base: b}
	if init != nil && init.d != nil && !init.d.empty() {
		w.init, w.d, w.initHash = init.d, init.d, init.Hash
		sum := sha256.Sum256([]byte(init.Hash))
		copy(w.digest[:], sum[:])
	}
	return w
}

// World is one episode's state: its base database changed by its
// writes. Reads and writes of one world must not run concurrently (a
// session serialises its calls); different worlds are independent.
type World struct {
	base *Base
	// init is the initial state's delta (shared), d the current one; d
	// is init itself until the first write.
	init, d *delta
	// version changes with every change of d: a connection holding
	// version holds this state.
	version uint64
	// digest chains the world's changes, in order (Digest).
	digest [16]byte
	// initHash is the initial state's hash (Initial.Hash).
	initHash string
}

// Digest is a digest of the world's history: its initial state, then
// every change applied, in order. A log records it after each write and
// replay checks it, which costs what the write changed (Hash, the
// canonical hash of the state, costs what the whole world changed).
func (w *World) Digest() string { return hex.EncodeToString(w.digest[:]) }

// chain adds changes to the digest.
func (w *World) chain(changes []Change) {
	h := sha256.New()
	h.Write(w.digest[:])
	for _, ch := range changes {
		h.Write([]byte(ch.Table))
		for _, row := range [][]any{ch.Key, ch.Before, ch.After} {
			h.Write([]byte{0})
			if row == nil {
				h.Write([]byte{'-'})
			} else {
				h.Write([]byte(encodeKey(row)))
			}
		}
		h.Write([]byte{1})
	}
	copy(w.digest[:], h.Sum(nil))
}

// Base returns the world's base.
func (w *World) Base() *Base { return w.base }

// Changed reports whether the world differs from its base database.
func (w *World) Changed() bool { return !w.d.empty() }

// Rows is how many rows the world changed from its base.
func (w *World) Rows() int {
	if w.d == nil {
		return 0
	}
	return w.d.rows
}

// Bytes estimates the memory the world's changes hold (not what an
// initial state shares with other worlds).
func (w *World) Bytes() int64 {
	if w.d == nil || w.d == w.init {
		return 0
	}
	return w.d.bytes
}

// Changes reports how the world's state differs from its initial state.
func (w *World) Changes() *endstate.Changes { return changesSince(w.base.schema, w.init, w.d) }

// Hash is the canonical hash of Changes.
func (w *World) Hash() string { return w.Changes().Hash() }

// Apply changes the world by changes, as a write made them (replaying a
// log). It runs nothing.
func (w *World) Apply(changes []Change) error {
	if len(changes) == 0 {
		return nil
	}
	d := w.own()
	for _, ch := range changes {
		t := w.base.schema.Table(ch.Table)
		if t == nil {
			return fmt.Errorf("a logged change names table %q, which the database lacks", ch.Table)
		}
		d.apply(t, canonRow(ch.Key), canonRow(ch.Before), canonRow(ch.After))
	}
	w.chain(changes)
	w.version++
	return nil
}

// canonRow gives JSON-decoded values back their stored types: logged
// changes hold int64 as JSON numbers, blobs as {"b": base64}.
func canonRow(row []any) []any {
	if row == nil {
		return nil
	}
	out := make([]any, len(row))
	for i, v := range row {
		out[i] = fromJSON(v)
	}
	return out
}

// own returns the world's delta, copied from the initial state on the
// first change.
func (w *World) own() *delta {
	switch {
	case w.d == nil:
		w.d = newDelta()
	case w.d == w.init:
		w.d = w.init.clone()
	}
	return w.d
}

// Query runs a read-only query in the world, as rodb.DB.Query does on
// the base: on the base itself while the world changed nothing, else on
// a writable copy holding the world's state.
func (w *World) Query(ctx context.Context, q string, args []any, max int) (*rodb.Rows, error) {
	if !w.Changed() {
		return w.base.DB.Query(ctx, q, args, max)
	}
	var out *rodb.Rows
	err := w.run(ctx, false, func(c *wconn) error {
		rows, err := c.c.QueryContext(ctx, q, args...)
		if err != nil {
			return rodb.WrapError(ctx, err)
		}
		out, err = rodb.Scan(ctx, rows, max)
		return err
	})
	return out, err
}

// QueryValue runs a query that returns one value.
func (w *World) QueryValue(ctx context.Context, q string, args []any) (any, error) {
	r, err := w.Query(ctx, q, args, 1)
	if err != nil {
		return nil, err
	}
	if len(r.Rows) == 0 || len(r.Rows[0]) == 0 {
		return nil, nil
	}
	return r.Rows[0][0], nil
}

// run runs fn on a connection holding the world's state. For a write,
// fn runs inside a savepoint that is rolled back when it fails, so that
// a failed write leaves nothing; the caller updates the world's delta
// (and version) after a write that succeeded, and run marks the
// connection as holding that new state.
func (w *World) run(ctx context.Context, write bool, fn func(*wconn) error) error {
	p := w.base.conns()
	c, err := p.acquire(ctx, w)
	if err != nil {
		return rodb.WrapError(ctx, err)
	}
	broken := false
	defer func() { p.release(c, broken) }()
	if c.owner != w || c.version != w.version {
		if err := c.reset(ctx); err != nil {
			broken = true
			return internal("roll back a writable copy", err)
		}
		if err := w.load(ctx, c); err != nil {
			broken = true
			return err
		}
	}
	if !write {
		err := fn(c)
		if ctx.Err() != nil && err != nil {
			// An interrupted statement may leave the transaction in any
			// state: start over on the next call.
			if rerr := c.reset(ctx); rerr != nil {
				broken = true
			}
		}
		return err
	}
	if err := c.exec(ctx, "SAVEPOINT toolenv_write"); err != nil {
		broken = true
		return internal("start a write", err)
	}
	before := w.version
	ferr := fn(c)
	if ferr != nil {
		if err := c.exec(ctx, "ROLLBACK TO toolenv_write"); err != nil {
			broken = true
			return ferr
		}
	}
	if err := c.exec(ctx, "RELEASE toolenv_write"); err != nil {
		broken = true
		return ferr
	}
	if ferr == nil && w.version != before {
		c.version = w.version
	}
	return ferr
}

// load applies the world's delta on c (which holds the base) inside a
// transaction it leaves open: the rows the world changed or deleted are
// deleted, then its rows are inserted, so that no order of the rows can
// break a uniqueness constraint on the way. Foreign keys are not
// enforced by SQLite on these connections (world checks them itself), so
// nothing cascades.
func (w *World) load(ctx context.Context, c *wconn) error {
	if err := c.exec(ctx, "BEGIN"); err != nil {
		return internal("begin on a writable copy", err)
	}
	c.owner, c.version = w, w.version
	fail := func(what string, err error) error {
		_ = c.reset(ctx)
		return internal(what, err)
	}
	bg := context.WithoutCancel(ctx)
	if w.d == nil {
		return nil
	}
	tables := w.d.sortedTables()
	for _, t := range tables {
		del, err := c.stmt(bg, deleteSQL(t))
		if err != nil {
			return fail("prepare "+t.Name, err)
		}
		for _, e := range w.d.sortedEntries(t) {
			if e.old == nil {
				continue
			}
			if _, err := del.ExecContext(bg, keyArgs(t, e.key)...); err != nil {
				return fail("apply the world to "+t.Name, err)
			}
		}
	}
	for _, t := range tables {
		ins, err := c.stmt(bg, insertSQL(t))
		if err != nil {
			return fail("prepare "+t.Name, err)
		}
		for _, e := range w.d.sortedEntries(t) {
			if e.new == nil {
				continue
			}
			if _, err := ins.ExecContext(bg, insertArgs(t, e.key, e.new)...); err != nil {
				return fail("apply the world to "+t.Name, err)
			}
		}
	}
	return nil
}

// deleteSQL deletes one row of t by its key.
func deleteSQL(t *Table) string {
	return "DELETE FROM main." + rodb.Quote(t.Name) + " WHERE " + keyWhere(t)
}

// keyWhere matches one row by its key: the rowid, or the primary key of
// a WITHOUT ROWID table.
func keyWhere(t *Table) string {
	if !t.WithoutRowID {
		return rodb.Quote(t.RowID) + " = ?"
	}
	parts := make([]string, len(t.Key))
	for i, c := range t.Key {
		parts[i] = rodb.Quote(c.Name) + " = ?"
	}
	return strings.Join(parts, " AND ")
}

func keyArgs(t *Table, key []any) []any { return key }

// insertSQL inserts one row of t with its key.
func insertSQL(t *Table) string {
	var cols, marks []string
	if !t.WithoutRowID && t.Alias == nil {
		cols, marks = append(cols, rodb.Quote(t.RowID)), append(marks, "?")
	}
	for _, c := range t.Columns {
		cols, marks = append(cols, rodb.Quote(c.Name)), append(marks, "?")
	}
	return "INSERT INTO main." + rodb.Quote(t.Name) + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(marks, ", ") + ")"
}

func insertArgs(t *Table, key, row []any) []any {
	var out []any
	if !t.WithoutRowID && t.Alias == nil {
		out = append(out, key[0])
	}
	return append(out, row...)
}

// selectSQL reads one row of t by its key.
func selectSQL(t *Table) string {
	return "SELECT " + columnList(t) + " FROM main." + rodb.Quote(t.Name) + " WHERE " + keyWhere(t)
}

func columnList(t *Table) string {
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = rodb.Quote(c.Name)
	}
	return strings.Join(cols, ", ")
}

// readRow reads t's row key on c (nil: absent).
func readRow(ctx context.Context, c *wconn, t *Table, key []any) ([]any, error) {
	s, err := c.stmt(ctx, selectSQL(t))
	if err != nil {
		return nil, err
	}
	rows, err := s.QueryContext(ctx, keyArgs(t, key)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, rows.Err()
	}
	return scanRow(rows, len(t.Columns))
}

func scanRow(rows *sql.Rows, n int) ([]any, error) {
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	for i, v := range vals {
		vals[i] = normValue(v)
	}
	return vals, nil
}

// internal is an error of toolenv's own, not the caller's.
func internal(what string, err error) error {
	return &toolenv.Error{Status: toolenv.StatusInternal, Message: "world: " + what, Err: err}
}
