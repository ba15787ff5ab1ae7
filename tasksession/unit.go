package tasksession

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/toolenv/toolenv/backend/sqltools"
)

// A Unit holds back the log entries of one session's calls so that they
// are written together with something else, in one transaction, or not
// at all: an RL episode's step (package episode) writes its calls'
// entries in the transaction that records the step (epstore.Log.Append),
// so that a step the process did not finish — its client gone, its
// deadline passed, the process killed — leaves no call in the session's
// log, and no replica ever replays half a step.
//
// While a unit holds a session, Append keeps the session's entries in
// the unit (in this process) instead of writing them; Read still reads
// the store. Release ends the hold; entries not written by then are
// dropped, and the caller rolls the backend's copy of the session back
// (sqltools.Backend.RollbackSession).
type Unit struct {
	s       *Sessions
	id      string
	mu      sync.Mutex
	base    int64 // the session's call count before the first entry held
	entries []sqltools.LogEntry
}

// Hold starts a unit of session id's calls. Release it when done.
func (s *Sessions) Hold(id string) *Unit {
	u := &Unit{s: s, id: id}
	s.unitsMu.Lock()
	if s.units == nil {
		s.units = map[string]*Unit{}
	}
	s.units[id] = u
	s.unitsMu.Unlock()
	return u
}

// Release ends the unit's hold on its session; entries not written are
// dropped.
func (u *Unit) Release() {
	u.s.unitsMu.Lock()
	if u.s.units[u.id] == u {
		delete(u.s.units, u.id)
	}
	u.s.unitsMu.Unlock()
}

// Len returns how many entries the unit holds.
func (u *Unit) Len() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.entries)
}

// held returns the unit holding session id, or nil.
func (s *Sessions) held(id string) *Unit {
	s.unitsMu.Lock()
	defer s.unitsMu.Unlock()
	return s.units[id]
}

// add keeps e, which must follow the entries held (or be the first).
func (u *Unit) add(e sqltools.LogEntry) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.entries) == 0 {
		u.base = e.Seq - 1
	} else if e.Seq != u.base+int64(len(u.entries))+1 {
		return sqltools.ErrLogConflict
	}
	e.Data = append([]byte(nil), e.Data...)
	u.entries = append(u.entries, e)
	return nil
}

// WriteTx writes the entries the unit holds as the session's next calls,
// in tx (a transaction on the store's writer): sqltools.ErrLogConflict
// when the session's log moved on since they were made (another replica
// wrote calls of it), and an error saying so when the session has ended.
// The entries stay held: Release the unit once tx has committed.
func (u *Unit) WriteTx(ctx context.Context, tx *sql.Tx) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.entries) == 0 {
		return nil
	}
	s := u.s
	now := s.now()
	last := u.entries[len(u.entries)-1].Seq
	res, err := tx.ExecContext(ctx, s.q(`UPDATE task_sessions SET calls = ?, last_used = ? WHERE id = ? AND state = ? AND calls = ? AND last_used >= ?`),
		last, now, []byte(u.id), stateLive, u.base, s.idleCutoff(now))
	if err != nil {
		return s.fail(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		r, err := s.readRow(ctx, tx, u.id)
		switch {
		case err != nil:
			return err
		case r == nil:
			return fmt.Errorf("session %q: %w", clip(u.id), sqltools.ErrNoSession)
		case r.state != stateLive:
			return s.gone(u.id, r)
		}
		return sqltools.ErrLogConflict
	}
	for _, e := range u.entries {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO task_session_calls (session, seq, data) VALUES (?, ?, ?)`), []byte(u.id), e.Seq, e.Data); err != nil {
			return s.fail(err)
		}
	}
	return nil
}

// Write writes the entries the unit holds in a transaction of their own
// (for a caller with nothing else to write with them).
func (u *Unit) Write(ctx context.Context) error {
	ctx, cancel := u.s.op(ctx)
	defer cancel()
	return u.s.tx(ctx, func(tx *sql.Tx) error { return u.WriteTx(ctx, tx) })
}
