package tasksession

import (
	"context"
	"database/sql"
)

// maybeSweep sweeps when this process has not for Options.SweepEvery.
// A failed sweep is logged: the next one does its work.
func (s *Sessions) maybeSweep(ctx context.Context) {
	now := s.opts.Now()
	s.mu.Lock()
	due := now.Sub(s.lastSweep) >= s.opts.SweepEvery
	if due {
		s.lastSweep = now
	}
	s.mu.Unlock()
	if !due {
		return
	}
	if _, err := s.Sweep(ctx); err != nil {
		s.opts.Logger.Warn("task sessions: sweep failed", "err", err)
	}
}

// SweepResult counts what a sweep did.
type SweepResult struct {
	// Expired are live sessions idle too long, now expired.
	Expired int
	// Calls are logged calls of ended sessions deleted.
	Calls int64
	// Forgotten are rows of sessions ended longer ago than
	// Options.Retain, deleted.
	Forgotten int64
}

// Sweep expires idle sessions, deletes the calls of every session that is
// not live (and calls left without a session by a race with eviction),
// and forgets sessions that ended more than Options.Retain ago.
func (s *Sessions) Sweep(ctx context.Context) (SweepResult, error) {
	var res SweepResult
	now := s.now()
	var expired []string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		ids, err := s.expireIdle(ctx, tx, now)
		if err != nil {
			return err
		}
		expired = ids
		r, err := tx.ExecContext(ctx, s.q(`DELETE FROM task_session_calls WHERE NOT EXISTS (
	SELECT 1 FROM task_sessions s WHERE s.id = task_session_calls.session AND s.state = ?)`), stateLive)
		if err != nil {
			return s.fail(err)
		}
		res.Calls, _ = r.RowsAffected()
		r, err = tx.ExecContext(ctx, s.q(`DELETE FROM task_sessions WHERE state <> ? AND ended < ?`), stateLive, now-s.opts.Retain.Milliseconds())
		if err != nil {
			return s.fail(err)
		}
		res.Forgotten, _ = r.RowsAffected()
		return nil
	})
	if err != nil {
		return res, err
	}
	res.Expired = len(expired)
	s.ended(expired)
	if res.Expired > 0 || res.Calls > 0 || res.Forgotten > 0 {
		s.opts.Logger.Debug("task sessions swept", "expired", res.Expired, "calls", res.Calls, "forgotten", res.Forgotten)
	}
	return res, nil
}

// Stats are the fleet's session counts.
type Stats struct {
	// Live sessions, and sessions remembered after they ended.
	Live, Ended int64
	// Calls are the calls logged by live sessions.
	Calls int64
}

// Stats counts the sessions in the store.
func (s *Sessions) Stats(ctx context.Context) (Stats, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	var st Stats
	err := s.db.Read.QueryRowContext(ctx, s.q(`SELECT
	COALESCE(SUM(CASE WHEN state = ? THEN 1 ELSE 0 END), 0),
	COALESCE(SUM(CASE WHEN state <> ? THEN 1 ELSE 0 END), 0),
	COALESCE(SUM(CASE WHEN state = ? THEN calls ELSE 0 END), 0)
FROM task_sessions`), stateLive, stateLive, stateLive).Scan(&st.Live, &st.Ended, &st.Calls)
	return st, s.fail(err)
}
