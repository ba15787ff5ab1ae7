// Package epstore keeps RL episodes (package episode) in the store, so
// that an episode opened on one replica is served by every replica
// sharing the store and survives a restart.
//
// An episode is kept the way a SLOT/SEL task session is (package
// tasksession): one row (who it was issued to, whether it is open, its
// reset options, when it was last used, how many steps it holds) and one
// row per step (the action and what came of it). A replica that has not
// seen an episode, or has seen fewer of its steps, reads the steps it
// lacks and applies them to its copy before taking the next step; the
// append of step n succeeds only as the episode's next step (the row's
// step count is the optimistic check), so two replicas never both record
// step n. The tool calls' own state (a SLOT/SEL session's labelled
// results) lives in the task-session log under the episode's id.
//
// Its tables are the component "episodes" (Migrations); open the store
// with them (environment.Open and toolenv store migrate do).
package epstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/toolenv/toolenv/store"
)

// Component is the name of this package's tables in the store's schema.
const Component = "episodes"

// Migrations are the schema of the episode tables.
var Migrations = []store.Migration{{
	Component: Component, Version: 1, Name: "RL episodes and their steps",
	SQLite: `CREATE TABLE episodes (
	id        BLOB PRIMARY KEY,
	principal TEXT NOT NULL DEFAULT '',
	state     TEXT NOT NULL,
	spec      BLOB NOT NULL,
	created   INTEGER NOT NULL,
	last_used INTEGER NOT NULL,
	ended     INTEGER NOT NULL DEFAULT 0,
	steps     INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX episodes_idle ON episodes (state, last_used);
CREATE TABLE episode_steps (
	episode BLOB NOT NULL,
	seq     INTEGER NOT NULL,
	data    BLOB NOT NULL,
	PRIMARY KEY (episode, seq)
) WITHOUT ROWID`,
	Postgres: `CREATE TABLE episodes (
	id        bytea PRIMARY KEY,
	principal text NOT NULL DEFAULT '',
	state     text NOT NULL,
	spec      bytea NOT NULL,
	created   bigint NOT NULL,
	last_used bigint NOT NULL,
	ended     bigint NOT NULL DEFAULT 0,
	steps     bigint NOT NULL DEFAULT 0
);
CREATE INDEX episodes_idle ON episodes (state, last_used);
CREATE TABLE episode_steps (
	episode bytea NOT NULL,
	seq     bigint NOT NULL,
	data    bytea NOT NULL,
	PRIMARY KEY (episode, seq)
)`,
}}

// The states of an episode row.
const (
	StateOpen    = "open"
	StateClosed  = "closed"  // closed by its client
	StateExpired = "expired" // idle too long
	StateDone    = "done"    // ended by its final answer or its step limit
)

// A TxWriter writes something else in the transaction that records an
// episode or one of its steps, so that both are written or neither: an
// episode's step writes its tool calls' session log there
// (tasksession.Unit.WriteTx). An error aborts the transaction and is
// returned as it is.
type TxWriter func(ctx context.Context, tx *sql.Tx) error

// Errors of the log; test them with errors.Is.
var (
	// ErrNotFound: no episode of that id was issued to this principal.
	ErrNotFound = errors.New("no such episode")
	// ErrConflict: another replica recorded this step of the episode
	// first.
	ErrConflict = errors.New("another step of this episode was recorded first")
)

// Row is an episode's row.
type Row struct {
	ID        string
	State     string
	Spec      []byte
	Created   time.Time
	LastUsed  time.Time
	Ended     time.Time
	Steps     int64
	principal string
}

// Principal returns the digest of the principal the episode was issued
// to.
func (r *Row) Principal() string { return r.principal }

// Step is one recorded step. Data is opaque to the log.
type Step struct {
	Seq  int64
	Data []byte
}

// Log is the episodes of a fleet, kept in one store. It is safe for
// concurrent use by any number of processes sharing the store.
type Log struct {
	db      *store.DB
	path    string
	timeout time.Duration
}

// New returns the episode log kept in st, whose schema must hold
// Migrations (open it with them).
func New(ctx context.Context, st store.Store) (*Log, error) {
	l := &Log{db: st.SQL(), path: st.Path(), timeout: 5 * time.Second}
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	if _, err := l.db.Read.ExecContext(ctx, `SELECT id FROM episodes WHERE 1 = 0`); err != nil {
		return nil, fmt.Errorf("episodes in %s: %w (open the store with epstore.Migrations, or run toolenv store migrate)", l.path, l.fail(err))
	}
	return l, nil
}

// Principal is what a row keeps of a principal: a digest, never the
// token itself (store.PrincipalDigest, as a task session's row keeps it).
func Principal(p string) string { return store.PrincipalDigest(p) }

func (l *Log) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, l.timeout)
}

// q rewrites ? placeholders as $1, $2, … for PostgreSQL.
func (l *Log) q(query string) string { return l.db.Rebind(query) }

func (l *Log) fail(err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w (%s): %w", store.ErrUnavailable, l.path, err)
}

// Create records a new open episode issued to principal, and what the
// writers write, in one transaction.
func (l *Log) Create(ctx context.Context, id, principal string, spec []byte, now time.Time, with ...TxWriter) error {
	ctx, cancel := l.op(ctx)
	defer cancel()
	return l.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, l.q(`INSERT INTO episodes (id, principal, state, spec, created, last_used) VALUES (?, ?, ?, ?, ?, ?)`),
			[]byte(id), Principal(principal), StateOpen, spec, now.UnixMilli(), now.UnixMilli())
		if err != nil {
			return l.fail(err)
		}
		return writeAll(ctx, tx, with)
	})
}

// tx runs fn in a transaction on the store's writer.
func (l *Log) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := l.db.Write.BeginTx(ctx, nil)
	if err != nil {
		return l.fail(err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return l.fail(tx.Commit())
}

func writeAll(ctx context.Context, tx *sql.Tx, with []TxWriter) error {
	for _, w := range with {
		if w == nil {
			continue
		}
		if err := w(ctx, tx); err != nil {
			return err
		}
	}
	return nil
}

// Ended is an episode that lived in one process's memory and has ended,
// for Archive.
type Ended struct {
	ID, Digest, State string // Digest: Principal of the episode's principal
	Spec              []byte
	Steps             []Step
	Created, Ended    time.Time
}

// Archive records episodes that lived in one process's memory and have
// ended, each with all its steps, in one transaction, so that they can
// be exported later (toolenv episodes export). An episode already
// recorded is left as it is.
func (l *Log) Archive(ctx context.Context, eps ...Ended) error {
	ctx, cancel := l.op(ctx)
	defer cancel()
	return l.tx(ctx, func(tx *sql.Tx) error {
		for _, e := range eps {
			res, err := tx.ExecContext(ctx, l.q(`INSERT INTO episodes (id, principal, state, spec, created, last_used, ended, steps) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`),
				[]byte(e.ID), e.Digest, e.State, e.Spec, e.Created.UnixMilli(), e.Ended.UnixMilli(), e.Ended.UnixMilli(), int64(len(e.Steps)))
			if err != nil {
				return l.fail(err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				continue
			}
			for _, s := range e.Steps {
				if _, err := tx.ExecContext(ctx, l.q(`INSERT INTO episode_steps (episode, seq, data) VALUES (?, ?, ?)`), []byte(e.ID), s.Seq, s.Data); err != nil {
					return l.fail(err)
				}
			}
		}
		return nil
	})
}

// Read returns the row of episode id if it was issued to principal, and
// its steps after seq after, in order. ErrNotFound when there is none.
func (l *Log) Read(ctx context.Context, id, principal string, after int64) (*Row, []Step, error) {
	return l.ReadDigest(ctx, id, Principal(principal), after)
}

// ReadDigest is Read for the principal whose digest (Principal) is
// given.
func (l *Log) ReadDigest(ctx context.Context, id, digest string, after int64) (*Row, []Step, error) {
	r, steps, err := l.read(ctx, id, after)
	if err != nil {
		return nil, nil, err
	}
	if r.principal != digest {
		return nil, nil, ErrNotFound
	}
	return r, steps, nil
}

// read returns the row of episode id, whoever it was issued to, and its
// steps after seq after, in order. ErrNotFound when there is none.
func (l *Log) read(ctx context.Context, id string, after int64) (*Row, []Step, error) {
	ctx, cancel := l.op(ctx)
	defer cancel()
	rows, err := l.db.Read.QueryContext(ctx, l.q(`SELECT e.principal, e.state, e.spec, e.created, e.last_used, e.ended, e.steps, s.seq, s.data
FROM episodes e LEFT JOIN episode_steps s ON s.episode = e.id AND s.seq > ?
WHERE e.id = ? ORDER BY s.seq`), after, []byte(id))
	if err != nil {
		return nil, nil, l.fail(err)
	}
	defer rows.Close()
	var (
		r     *Row
		steps []Step
	)
	for rows.Next() {
		var (
			row                      Row
			created, lastUsed, ended int64
			seq                      sql.NullInt64
			data                     []byte
		)
		if err := rows.Scan(&row.principal, &row.State, &row.Spec, &created, &lastUsed, &ended, &row.Steps, &seq, &data); err != nil {
			return nil, nil, l.fail(err)
		}
		if r == nil {
			row.ID = id
			row.Created, row.LastUsed = time.UnixMilli(created), time.UnixMilli(lastUsed)
			if ended != 0 {
				row.Ended = time.UnixMilli(ended)
			}
			r = &row
		}
		if seq.Valid {
			steps = append(steps, Step{Seq: seq.Int64, Data: data})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, l.fail(err)
	}
	if r == nil {
		return nil, nil, ErrNotFound
	}
	return r, steps, nil
}

// Append records s as step s.Seq of open episode id, which must be its
// next step, and what the writers write, in one transaction:
// ErrConflict when another replica recorded step s.Seq first. With done,
// the episode is marked StateDone in the same transaction (its last
// step).
func (l *Log) Append(ctx context.Context, id string, s Step, done bool, now time.Time, with ...TxWriter) error {
	ctx, cancel := l.op(ctx)
	defer cancel()
	return l.tx(ctx, func(tx *sql.Tx) error {
		state, ended := StateOpen, int64(0)
		if done {
			state, ended = StateDone, now.UnixMilli()
		}
		res, err := tx.ExecContext(ctx, l.q(`UPDATE episodes SET steps = ?, last_used = ?, state = ?, ended = ? WHERE id = ? AND state = ? AND steps = ?`),
			s.Seq, now.UnixMilli(), state, ended, []byte(id), StateOpen, s.Seq-1)
		if err != nil {
			return l.fail(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrConflict
		}
		if _, err := tx.ExecContext(ctx, l.q(`INSERT INTO episode_steps (episode, seq, data) VALUES (?, ?, ?)`), []byte(id), s.Seq, s.Data); err != nil {
			return l.fail(err)
		}
		return writeAll(ctx, tx, with)
	})
}

// Touch marks an open episode used.
func (l *Log) Touch(ctx context.Context, id string, now time.Time) error {
	ctx, cancel := l.op(ctx)
	defer cancel()
	_, err := l.db.Write.ExecContext(ctx, l.q(`UPDATE episodes SET last_used = ? WHERE id = ? AND state = ?`), now.UnixMilli(), []byte(id), StateOpen)
	return l.fail(err)
}

// End marks an open episode closed or expired (state). Its steps are
// kept: a closed episode is still exported.
func (l *Log) End(ctx context.Context, id, state string, now time.Time) error {
	ctx, cancel := l.op(ctx)
	defer cancel()
	_, err := l.db.Write.ExecContext(ctx, l.q(`UPDATE episodes SET state = ?, ended = ? WHERE id = ? AND state = ?`), state, now.UnixMilli(), []byte(id), StateOpen)
	return l.fail(err)
}

// IDs lists the episodes issued to principal, oldest first (all
// principals when all is set), for export.
func (l *Log) IDs(ctx context.Context, principal string, all bool) ([]string, error) {
	ctx, cancel := l.op(ctx)
	defer cancel()
	q := `SELECT id FROM episodes ORDER BY created, id`
	var args []any
	if !all {
		q = `SELECT id FROM episodes WHERE principal = ? ORDER BY created, id`
		args = append(args, Principal(principal))
	}
	rows, err := l.db.Read.QueryContext(ctx, l.q(q), args...)
	if err != nil {
		return nil, l.fail(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id []byte
		if err := rows.Scan(&id); err != nil {
			return nil, l.fail(err)
		}
		ids = append(ids, string(id))
	}
	return ids, l.fail(rows.Err())
}

// ReadAny is Read without the principal check, for export by the
// store's operator.
func (l *Log) ReadAny(ctx context.Context, id string) (*Row, []Step, error) {
	return l.read(ctx, id, 0)
}
