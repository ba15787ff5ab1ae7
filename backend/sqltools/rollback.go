package sqltools

import (
	"context"
	"fmt"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/world"
)

// A session can be rolled back to an earlier call count: what makes an
// RL episode's step atomic (package episode). The owner of a session
// (the episode) takes a checkpoint before a step's calls
// (CheckpointSession, which returns the session's call count n) and, when
// the step is cut (its client gone, its deadline passed, its record not
// written), calls RollbackSession(n): the session is then exactly its
// first n successful calls again, as if the step's calls had never run.
//
// In memory, every call since the last checkpoint keeps what undoes it
// (the result its label held before, the session's counters before, and
// for a call that changed the session's world the rows it changed, or
// the world it started); a new checkpoint forgets them, so a session
// holds the undo of one step at most. With a log (Options.Log) the log
// is the truth: a step's entries — its world's rows included — are held
// back until its record is written (tasksession.Unit), so rolling back
// only has to put the memory back where the log is, and a replica that
// rebuilds the session from the log never sees the cut step.

// undoEntry undoes one successful call.
type undoEntry struct {
	label   string
	prev    *result // what label held before; nil: nothing
	before  state
	applied int64
	bytes   int64 // what the call added to the session's bytes
	// world is set on a call that changed the session's world.
	world *worldUndo
}

// worldUndo undoes a call that changed the session's world: one that
// started it (the session's world before is put back: none) or one that
// wrote it (its changes reverted, the world's digest back to mark).
type worldUndo struct {
	started  bool
	prev     *world.World
	prevSpec *world.Spec
	changes  []world.Change
	mark     world.Mark
}

// CheckpointSession returns how many successful calls session holds (0
// for a session this backend does not hold) and starts keeping what
// RollbackSession needs to return to that count, until the session's
// next checkpoint.
func (b *Backend) CheckpointSession(session string) int64 {
	ss := b.store.peek(session)
	if ss == nil {
		return 0
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.mark, ss.undo = ss.calls, nil
	return ss.calls
}

// RollbackSession undoes the calls of session after its first n
// successful calls, so that it holds exactly those n again. A session
// made since the checkpoint (or never held here) is dropped: it holds
// nothing the checkpoint knew of. It is an error when the calls to undo
// go back further than the last checkpoint and the session has no log to
// rebuild it from; the session is dropped then too.
func (b *Backend) RollbackSession(ctx context.Context, session string, n int64) error {
	ss := b.store.peek(session)
	if ss == nil {
		return nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.calls <= n && ss.mark >= 0 {
		return nil
	}
	if ss.mark < 0 || n < ss.mark {
		// Made after the checkpoint, or a rollback past it.
		made := ss.mark < 0
		b.store.forget(ss)
		if made || b.opt.Log != nil || n == 0 {
			return nil // with a log, the next call rebuilds it from there
		}
		return &toolenv.Error{Status: toolenv.StatusInternal,
			Message: fmt.Sprintf("session %q cannot be rolled back to call %d: its last checkpoint is at call %d", session, n, ss.mark),
			Hint:    "this is a bug in the caller of RollbackSession; the session was dropped"}
	}
	var freed int64
	for ss.calls > n {
		if len(ss.undo) == 0 {
			// A call kept no undo: never expected, but the session must
			// not stay half rolled back.
			b.store.forget(ss)
			if b.opt.Log != nil {
				return nil // the next call rebuilds it from the log
			}
			return &toolenv.Error{Status: toolenv.StatusInternal,
				Message: fmt.Sprintf("session %q cannot be rolled back to call %d: a call since its checkpoint kept nothing to undo it", session, n),
				Hint:    "this is a bug; the session was dropped: start a new one"}
		}
		u := ss.undo[len(ss.undo)-1]
		ss.undo = ss.undo[:len(ss.undo)-1]
		switch {
		case u.world != nil && u.world.started:
			ss.world, ss.worldSpec = u.world.prev, u.world.prevSpec
		case u.world != nil:
			if err := ss.world.Revert(u.world.changes, u.world.mark); err != nil {
				b.store.forget(ss)
				if b.opt.Log != nil {
					return nil // the next call rebuilds it from the log
				}
				return &toolenv.Error{Status: toolenv.StatusInternal, Err: err,
					Message: fmt.Sprintf("session %q: its world cannot be rolled back to call %d: %v", session, n, err),
					Hint:    "this is a bug; the session was dropped: start a new one"}
			}
		case u.prev != nil:
			ss.results[u.label] = u.prev
		default:
			delete(ss.results, u.label)
		}
		ss.restore(u.before)
		ss.applied = u.applied
		ss.calls--
		freed += u.bytes
	}
	return b.store.grew(ss, -freed)
}

// journal keeps what undoes a call that stored r, when a checkpoint
// asks for it. It runs with ss.mu held, before r is committed.
func (ss *session) journal(r *result, before state, applied, bytes int64) {
	ss.calls++
	if ss.mark < 0 {
		return
	}
	ss.undo = append(ss.undo, undoEntry{label: r.label, prev: ss.results[r.label], before: before, applied: applied, bytes: bytes})
}

// journalWorld keeps what undoes a call that changed the session's
// world, when a checkpoint asks for it: started says it started the
// world (prev and prevSpec are the session's before: none), else it
// wrote changes to the session's world, whose mark was mark before. It
// runs with ss.mu held; applied is the session's log count before the
// call.
func (ss *session) journalWorld(started bool, prev *world.World, prevSpec *world.Spec, changes []world.Change, mark world.Mark, applied int64) {
	ss.calls++
	if ss.mark < 0 {
		return
	}
	ss.undo = append(ss.undo, undoEntry{before: ss.save(), applied: applied,
		world: &worldUndo{started: started, prev: prev, prevSpec: prevSpec, changes: changes, mark: mark}})
}

// PinSession marks session as held by its owner (an RL episode, whose
// own limits bound it): it is never evicted, idle or over the memory
// cap, until DropSession. A session not made yet is pinned when it is.
func (b *Backend) PinSession(session string) { b.store.pin(session) }

// forget drops ss from memory, keeping its pin: its owner still holds
// it, and it is made again on its next call. It runs with ss.mu held.
func (s *store) forget(ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(ss)
	s.evictions-- // not an eviction
}

// peek returns the session of id held in memory, or nil.
func (s *store) peek(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}
