package sqltools

import (
	"context"
	"fmt"

	toolenv "github.com/toolenv/toolenv"
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
// (the result its label held before, the session's counters before);
// a new checkpoint forgets them, so a session holds the undo of one step
// at most. With a log (Options.Log) the log is the truth: a step's
// entries are held back until its record is written (tasksession.Unit),
// so rolling back only has to put the memory back where the log is.

// undoEntry undoes one successful call.
type undoEntry struct {
	label   string
	prev    *result // what label held before; nil: nothing
	before  state
	applied int64
	bytes   int64 // what the call added to the session's bytes
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
		u := ss.undo[len(ss.undo)-1]
		ss.undo = ss.undo[:len(ss.undo)-1]
		if u.prev != nil {
			ss.results[u.label] = u.prev
		} else {
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
