package episode

import (
	"context"
	"database/sql"

	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/store/epstore"
	"github.com/toolenv/toolenv/tasksession"
)

// SessionRollback is what a backend that keeps state per session (the
// tool calls' session, whose id is the episode's) implements so that an
// episode's step is atomic: a step happens whole — recorded and applied —
// or not at all. Before a step's calls the episode takes a checkpoint;
// when the step is cut (its client gone, its deadline passed, its record
// not written, its answers over their budget) it rolls the session back
// to it, so that no call of the cut step stays in the session:
//
//	n := b.CheckpointSession(id)     // the session's successful calls so far
//	... the step's calls ...
//	b.RollbackSession(ctx, id, n)    // the session is its first n calls again
//
// sqltools.Backend implements it; so must a backend whose sessions hold
// writable state (a per-episode world), for which a rollback returns the
// world to the state its first n calls make. With the task sessions in
// the store, the step's log entries are written in the transaction that
// records the step (tasksession.Unit), so the store never holds part of
// a step and a rollback only has to put the memory back.
type SessionRollback interface {
	// CheckpointSession returns how many successful calls session holds
	// now (0 for one the backend does not hold) and keeps what rolling
	// back to that count needs, until the session's next checkpoint.
	CheckpointSession(session string) int64
	// RollbackSession undoes the calls of session after its first n
	// successful calls. A session made since the checkpoint is dropped.
	RollbackSession(ctx context.Context, session string, n int64) error
}

// SessionPinner is what a backend that keeps sessions in memory, and
// evicts the idle ones or those over a memory cap, implements so that an
// open episode's session is never evicted under it: the episode pins it
// at reset and drops it (server.SessionDropper) when it ends, and its own
// limits (the cap on open episodes, the step limit, the answer budget of
// a step) bound what it holds.
type SessionPinner interface {
	PinSession(session string)
}

// unit is what a step (or a reset) holds of its episode's session while
// its calls run: the backend's checkpoint, and with task sessions in the
// store the log entries held back until the step is recorded.
type unit struct {
	rb   SessionRollback
	n    int64
	held *tasksession.Unit
}

// begin starts a unit of ep's session.
func (e *Env) begin(ep *Episode) *unit {
	u := &unit{}
	if rb, ok := invoke.BackendAs[SessionRollback](e.env.Registry.Backend(ep.coll.Name)); ok {
		u.rb = rb
		u.n = rb.CheckpointSession(ep.id)
	}
	if e.env.Sessions != nil {
		u.held = e.env.Sessions.Hold(ep.id)
	}
	return u
}

// writer is the unit's held log entries as a writer of the transaction
// that records the step (nil without any).
func (u *unit) writer() epstore.TxWriter {
	if u.held == nil || u.held.Len() == 0 {
		return nil
	}
	return func(ctx context.Context, tx *sql.Tx) error { return u.held.WriteTx(ctx, tx) }
}

// write writes the held entries on their own (episodes kept in memory
// while the task sessions are in the store).
func (u *unit) write(ctx context.Context) error {
	if u.held == nil || u.held.Len() == 0 {
		return nil
	}
	return u.held.Write(ctx)
}

// undo rolls the session back to the unit's checkpoint: the step did not
// happen. Its error is the backend's (it dropped the session then).
func (u *unit) undo(ctx context.Context, id string) error {
	if u.held != nil {
		u.held.Release()
	}
	if u.rb == nil {
		return nil
	}
	return u.rb.RollbackSession(context.WithoutCancel(ctx), id, u.n)
}

// end releases the unit after the step was recorded.
func (u *unit) end() {
	if u.held != nil {
		u.held.Release()
	}
}

// pin pins ep's session in its backend, if it keeps sessions in memory.
func (e *Env) pin(ep *Episode) {
	if p, ok := invoke.BackendAs[SessionPinner](e.env.Registry.Backend(ep.coll.Name)); ok {
		p.PinSession(ep.id)
	}
}
