package tasksession

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/toolenv/toolenv/server/session"
	"github.com/toolenv/toolenv/store"
)

// Issue makes a session for principal and returns its id. release does
// nothing (a session just used cannot be evicted for Options.Active); it
// is there for the server's issuer interface.
func (s *Sessions) Issue(ctx context.Context, principal string) (id string, release func(), err error) {
	id = NewID()
	if err := s.create(ctx, id, principal); err != nil {
		return "", nil, err
	}
	return id, noRelease, nil
}

func noRelease() {}

// create adds a live issued session, making room at the cap.
func (s *Sessions) create(ctx context.Context, id, principal string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	s.maybeSweep(ctx)
	now := s.now()
	var ended []string
	evicted := 0
	err := s.tx(ctx, func(tx *sql.Tx) error {
		ended, evicted = ended[:0], 0
		if s.db.Dialect == "postgres" {
			// Replicas issuing at once count and evict one at a time.
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7216450713)`); err != nil {
				return s.fail(err)
			}
		}
		exp, err := s.expireIdle(ctx, tx, now)
		if err != nil {
			return err
		}
		ended = append(ended, exp...)
		if s.opts.Max > 0 {
			var live int
			if err := tx.QueryRowContext(ctx, s.q(`SELECT count(*) FROM task_sessions WHERE state = ?`), stateLive).Scan(&live); err != nil {
				return s.fail(err)
			}
			for ; live >= s.opts.Max; live-- {
				victim, err := s.evictOne(ctx, tx, now)
				if err != nil {
					return err
				}
				if victim == "" {
					return fmt.Errorf("%w: all %d live sessions of the fleet were used in the last %s (retry later, end sessions you no longer need with DELETE /sessions/{id}, or raise --max-sessions)",
						ErrFull, s.opts.Max, s.opts.Active)
				}
				ended = append(ended, victim)
				evicted++
			}
		}
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO task_sessions (id, principal, issued, state, created, last_used) VALUES (?, ?, ?, ?, ?, ?)`),
			[]byte(id), store.PrincipalDigest(principal), true, stateLive, now, now)
		return s.fail(err)
	})
	if err != nil {
		return err
	}
	s.evictions.Evicted(evicted)
	s.ended(ended)
	return nil
}

// evictedError is why a session was evicted; it matches
// session.ErrEvicted.
type evictedError struct{ why string }

func (e *evictedError) Error() string        { return e.why }
func (e *evictedError) Is(target error) bool { return target == session.ErrEvicted }

// expireIdle marks every live session idle too long as expired and
// returns their ids (their calls go at the next sweep).
func (s *Sessions) expireIdle(ctx context.Context, tx *sql.Tx, now int64) ([]string, error) {
	if s.opts.Idle <= 0 {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, s.q(`UPDATE task_sessions SET state = ?, ended = ? WHERE state = ? AND last_used < ? RETURNING id`),
		stateExpired, now, stateLive, s.idleCutoff(now))
	if err != nil {
		return nil, s.fail(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id []byte
		if err := rows.Scan(&id); err != nil {
			return nil, s.fail(err)
		}
		ids = append(ids, string(id))
	}
	return ids, s.fail(rows.Err())
}

// evictOne evicts the live session idle longest that was not used within
// Options.Active, deleting its calls; "" when there is none.
func (s *Sessions) evictOne(ctx context.Context, tx *sql.Tx, now int64) (string, error) {
	var id []byte
	err := tx.QueryRowContext(ctx, s.q(`SELECT id FROM task_sessions WHERE state = ? AND last_used < ? ORDER BY last_used, id LIMIT 1`),
		stateLive, now-s.opts.Active.Milliseconds()).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", s.fail(err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE task_sessions SET state = ?, ended = ? WHERE id = ?`), stateEvicted, now, id); err != nil {
		return "", s.fail(err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM task_session_calls WHERE session = ?`), id); err != nil {
		return "", s.fail(err)
	}
	return string(id), nil
}

// Acquire checks that id was issued to principal and marks it used. It
// returns the id backends know the session by: the id itself, or for a
// client-named id (Options.ClientNamed), its form scoped to principal.
// release does nothing.
func (s *Sessions) Acquire(ctx context.Context, id, principal string) (backend string, release func(), err error) {
	key := id
	named := s.opts.ClientNamed && !strings.HasPrefix(id, Prefix)
	if named {
		key = backendID(principal, id)
	}
	ok, err := s.touch(ctx, key, principal)
	if err != nil {
		return "", nil, err
	}
	if ok {
		return key, noRelease, nil
	}
	r, err := s.explain(ctx, key, principal)
	if err == nil && r == nil && named {
		// A name this client uses for the first time.
		if err := s.create(ctx, key, principal); err != nil {
			return "", nil, err
		}
		return key, noRelease, nil
	}
	if err == nil {
		err = s.unknown(id, r)
	}
	return "", nil, err
}

// touch marks a live session of principal used; false when there is
// none.
func (s *Sessions) touch(ctx context.Context, id, principal string) (bool, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	now := s.now()
	res, err := s.db.Write.ExecContext(ctx, s.q(`UPDATE task_sessions SET last_used = ? WHERE id = ? AND principal = ? AND issued = ? AND state = ? AND last_used >= ?`),
		now, []byte(id), store.PrincipalDigest(principal), true, stateLive, s.idleCutoff(now))
	if err != nil {
		return false, s.fail(err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// explain reads the row of a session touch did not find: nil when it is
// not principal's issued session (never issued, or to someone else: the
// caller is not told which). A live session idle too long is expired
// now.
func (s *Sessions) explain(ctx context.Context, id, principal string) (*row, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	r, err := s.readRow(ctx, s.db.Write, id)
	if err != nil || r == nil || !r.issued || r.principal != store.PrincipalDigest(principal) {
		return nil, err
	}
	if now := s.now(); r.state == stateLive && r.lastUsed < s.idleCutoff(now) {
		s.expire(ctx, id, now)
		r.state, r.ended = stateExpired, now
	}
	return r, nil
}

// unknown is the error of an id Acquire or End does not accept.
func (s *Sessions) unknown(id string, r *row) error {
	if r == nil || r.state == stateLive {
		return fmt.Errorf("%w %q: not issued to this client", ErrUnknown, clip(id))
	}
	if r.state == stateEvicted {
		return fmt.Errorf("%w %q: %w", ErrUnknown, clip(id), &evictedError{s.why(r)})
	}
	return fmt.Errorf("%w %q: %s", ErrUnknown, clip(id), s.why(r))
}

// End ends session id of principal and deletes its calls.
func (s *Sessions) End(ctx context.Context, id, principal string) error {
	key := id
	if s.opts.ClientNamed && !strings.HasPrefix(id, Prefix) {
		key = backendID(principal, id)
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	now := s.now()
	var found bool
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE task_sessions SET state = ?, ended = ? WHERE id = ? AND principal = ? AND issued = ? AND state = ?`),
			stateEnded, now, []byte(key), store.PrincipalDigest(principal), true, stateLive)
		if err != nil {
			return s.fail(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		found = true
		_, err = tx.ExecContext(ctx, s.q(`DELETE FROM task_session_calls WHERE session = ?`), []byte(key))
		return s.fail(err)
	})
	if err != nil {
		return err
	}
	if !found {
		r, err := s.explain(ctx, key, principal)
		if err != nil {
			return err
		}
		return s.unknown(id, r)
	}
	s.ended([]string{key})
	return nil
}
