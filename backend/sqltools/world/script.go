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
)

// MaxScriptBytes bounds an initial state's SQL script.
const MaxScriptBytes = 1 << 20

// scriptCache keeps the initial states scripts made, by the script's
// digest: every world started from the same script shares one.
type scriptCache struct {
	mu    sync.Mutex
	m     map[string]*scriptEntry
	order []string
}

type scriptEntry struct {
	once sync.Once
	init *Initial
	err  error
}

// maxScripts bounds the initial states a base remembers.
const maxScripts = 256

// Script returns the initial state the SQL script leaves when run over
// the base: any INSERT, UPDATE, DELETE (or REPLACE) statements, in
// order; the schema must not change, and the script must not end the
// transaction it runs in. The script runs once per base (its result is
// kept by digest, for the worlds that start from it), on a copy of the
// database of its own, with foreign keys and constraints enforced by
// SQLite as the script's author wrote them.
func (b *Base) Script(ctx context.Context, script string) (*Initial, error) {
	if strings.TrimSpace(script) == "" {
		return nil, nil
	}
	if len(script) > MaxScriptBytes {
		return nil, &toolenv.Error{Status: toolenv.StatusTooLarge, Message: fmt.Sprintf("the initial state's SQL is %d bytes; at most %d are accepted", len(script), MaxScriptBytes),
			Hint: "start from a database file instead (initial_state.database)"}
	}
	if err := checkScript(script); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(script))
	key := hex.EncodeToString(sum[:])
	b.scripts.mu.Lock()
	e := b.scripts.m[key]
	if e == nil {
		e = &scriptEntry{}
		b.scripts.m[key] = e
		b.scripts.order = append(b.scripts.order, key)
		if len(b.scripts.order) > maxScripts {
			delete(b.scripts.m, b.scripts.order[0])
			b.scripts.order = b.scripts.order[1:]
		}
	}
	b.scripts.mu.Unlock()
	e.once.Do(func() { e.init, e.err = b.runScript(context.WithoutCancel(ctx), script) })
	if e.err != nil {
		b.scripts.mu.Lock()
		if b.scripts.m[key] == e {
			delete(b.scripts.m, key) // a failure is not remembered
		}
		b.scripts.mu.Unlock()
	}
	return e.init, e.err
}

// runScript runs script on a fresh copy of the database and captures,
// through temporary triggers, every row it changed.
func (b *Base) runScript(ctx context.Context, script string) (*Initial, error) {
	db := sql.OpenDB(b.DB.Writable(b.opt.TempDir))
	defer db.Close()
	db.SetMaxOpenConns(1)
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, internal("open a copy for the initial state", err)
	}
	defer func() {
		_ = c.Raw(func(any) error { return errBad })
		c.Close()
	}()
	if err := noAttach(c); err != nil {
		return nil, internal("forbid ATTACH", err)
	}
	for _, t := range b.schema.Triggers {
		if _, err := c.ExecContext(ctx, "DROP TRIGGER IF EXISTS main."+rodb.Quote(t)); err != nil {
			return nil, internal("drop trigger "+t, err)
		}
	}
	var before int64
	if err := c.QueryRowContext(ctx, "PRAGMA main.schema_version").Scan(&before); err != nil {
		return nil, internal("read the schema version", err)
	}
	if _, err := c.ExecContext(ctx, "PRAGMA foreign_keys = ON"); err != nil {
		return nil, internal("enforce foreign keys", err)
	}
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return nil, internal("begin", err)
	}
	width := 1
	for _, t := range b.schema.Tables {
		if t.WithoutRowID && len(t.Key) > width {
			width = len(t.Key)
		}
	}
	cols := []string{"t INTEGER"}
	for i := 0; i < width; i++ {
		cols = append(cols, fmt.Sprintf("k%d", i))
	}
	stmts := []string{"CREATE TEMP TABLE toolenv_capture (" + strings.Join(cols, ", ") + ")"}
	for i, t := range b.schema.Tables {
		if t.Writable() != "" {
			continue
		}
		for _, ev := range []struct{ when, rows string }{{"INSERT", "NEW"}, {"DELETE", "OLD"}, {"UPDATE", "OLD"}, {"UPDATE", "NEW"}} {
			name := fmt.Sprintf("toolenv_capture_%d_%s_%s", i, ev.when, ev.rows)
			stmts = append(stmts, fmt.Sprintf("CREATE TEMP TRIGGER %s AFTER %s ON main.%s BEGIN INSERT INTO toolenv_capture VALUES (%d, %s); END",
				rodb.Quote(name), ev.when, rodb.Quote(t.Name), i, captureKey(t, ev.rows, width)))
		}
	}
	stmts = append(stmts, "SAVEPOINT toolenv_initial_state")
	for _, s := range stmts {
		if _, err := c.ExecContext(ctx, s); err != nil {
			return nil, internal("capture the initial state", err)
		}
	}
	if _, err := c.ExecContext(ctx, script); err != nil {
		return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: "the initial state's SQL failed: " + err.Error(),
			Hint: "run the script with sqlite3 on a copy of the database to see where"}
	}
	// BEGIN fails inside a transaction: it succeeding means the script
	// ended ours.
	if _, err := c.ExecContext(ctx, "BEGIN"); err == nil {
		return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: "the initial state's SQL ends the transaction toolenv runs it in (COMMIT, END or ROLLBACK)",
			Hint: "leave transaction statements out of the script"}
	}
	var after int64
	if err := c.QueryRowContext(ctx, "PRAGMA main.schema_version").Scan(&after); err != nil {
		return nil, internal("read the schema version", err)
	}
	if after != before {
		return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: "the initial state's SQL changes the schema (CREATE, DROP or ALTER)",
			Hint: "an initial state changes rows only: the collection's tools are made from the schema"}
	}
	rows, err := c.QueryContext(ctx, "SELECT DISTINCT * FROM temp.toolenv_capture")
	if err != nil {
		return nil, internal("read the captured rows", err)
	}
	type captured struct {
		t   *Table
		key []any
	}
	var caps []captured
	for rows.Next() {
		r, err := scanRow(rows, width+1)
		if err != nil {
			rows.Close()
			return nil, internal("read the captured rows", err)
		}
		ti, _ := r[0].(int64)
		t := b.schema.Tables[ti]
		n := 1
		if t.WithoutRowID {
			n = len(t.Key)
		}
		caps = append(caps, captured{t, r[1 : 1+n]})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, internal("read the captured rows", err)
	}
	afters := make([][]any, len(caps))
	for i, cp := range caps {
		if afters[i], err = rowOn(ctx, c, cp.t, cp.key); err != nil {
			return nil, internal("read a row of the initial state", err)
		}
	}
	// The rows as they were: the same connection, the script undone.
	if _, err := c.ExecContext(ctx, "ROLLBACK TO toolenv_initial_state"); err != nil {
		return nil, internal("undo the initial state's SQL", err)
	}
	d := newDelta()
	for i, cp := range caps {
		before, err := rowOn(ctx, c, cp.t, cp.key)
		if err != nil {
			return nil, internal("read a row of the base", err)
		}
		if d.get(cp.t, encodeKey(cp.key)) == nil && !sameRow(before, afters[i]) {
			d.apply(cp.t, cp.key, before, afters[i])
		}
	}
	_, _ = c.ExecContext(ctx, "ROLLBACK")
	init := &Initial{base: b, d: d}
	init.Hash = changesSince(b.schema, nil, d).Hash()
	return init, nil
}

var errBad = fmt.Errorf("discard")

// captureKey is the VALUES list a capture trigger writes: the rowid, or
// the primary key, padded with NULLs to width.
func captureKey(t *Table, rows string, width int) string {
	var parts []string
	if !t.WithoutRowID {
		parts = append(parts, rows+"."+rodb.Quote(t.RowID))
	} else {
		for _, c := range t.Key {
			parts = append(parts, rows+"."+rodb.Quote(c.Name))
		}
	}
	for len(parts) < width {
		parts = append(parts, "NULL")
	}
	return strings.Join(parts, ", ")
}

// rowOn reads t's row key on c.
func rowOn(ctx context.Context, c *sql.Conn, t *Table, key []any) ([]any, error) {
	rows, err := c.QueryContext(ctx, selectSQL(t), key...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, rows.Err()
	}
	return scanRow(rows, len(t.Columns))
}
