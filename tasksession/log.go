package tasksession

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/toolenv/toolenv/backend/sqltools"
)

// Start makes the log of a new session that was not issued (a session
// an MCP connection or a Go program names), or finds a live one. A
// session that ended is an error saying how.
func (s *Sessions) Start(ctx context.Context, id string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	s.maybeSweep(ctx)
	now := s.now()
	res, err := s.db.Write.ExecContext(ctx, s.q(`INSERT INTO task_sessions (id, principal, issued, state, created, last_used) VALUES (?, '', ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`),
		[]byte(id), false, stateLive, now, now)
	if err != nil {
		return s.fail(err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	r, err := s.readRow(ctx, s.db.Write, id)
	if err != nil {
		return err
	}
	if r == nil {
		return fmt.Errorf("start session %q: its row vanished while starting; retry", clip(id))
	}
	if r.state == stateLive && r.lastUsed < s.idleCutoff(now) {
		s.expire(ctx, id, now)
		r.state, r.ended = stateExpired, now
	}
	if r.state != stateLive {
		return s.gone(id, r)
	}
	return nil
}

// Read returns the session's logged calls after seq after, in order.
func (s *Sessions) Read(ctx context.Context, id string, after int64) ([]sqltools.LogEntry, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.db.Read.QueryContext(ctx, s.q(`SELECT s.state, s.last_used, s.ended, c.seq, c.data
FROM task_sessions s LEFT JOIN task_session_calls c ON c.session = s.id AND c.seq > ?
WHERE s.id = ? ORDER BY c.seq`), after, []byte(id))
	if err != nil {
		return nil, s.fail(err)
	}
	defer rows.Close()
	var (
		r       *row
		entries []sqltools.LogEntry
	)
	for rows.Next() {
		var (
			st   row
			seq  sql.NullInt64
			data []byte
		)
		if err := rows.Scan(&st.state, &st.lastUsed, &st.ended, &seq, &data); err != nil {
			return nil, s.fail(err)
		}
		if r == nil {
			r = &st
		}
		if seq.Valid {
			entries = append(entries, sqltools.LogEntry{Seq: seq.Int64, Data: data})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(err)
	}
	if r == nil {
		return nil, sqltools.ErrNoSession
	}
	now := s.now()
	if r.state == stateLive && r.lastUsed < s.idleCutoff(now) {
		s.expire(ctx, id, now)
		r.state, r.ended = stateExpired, now
	}
	if r.state != stateLive {
		return nil, s.gone(id, r)
	}
	return entries, nil
}

// Append adds e as the session's call e.Seq, which must be the next one:
// sqltools.ErrLogConflict when another replica appended it first.
//
// While a Unit holds the session, the entry is kept in the unit instead.
func (s *Sessions) Append(ctx context.Context, id string, e sqltools.LogEntry) error {
	if u := s.held(id); u != nil {
		return u.add(e)
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	now := s.now()
	var appended bool
	err := s.tx(ctx, func(tx *sql.Tx) error {
		// The row's call count is the optimistic check: of two replicas
		// appending call n, the second finds calls = n already.
		res, err := tx.ExecContext(ctx, s.q(`UPDATE task_sessions SET calls = ?, last_used = ? WHERE id = ? AND state = ? AND calls = ? AND last_used >= ?`),
			e.Seq, now, []byte(id), stateLive, e.Seq-1, s.idleCutoff(now))
		if err != nil {
			return s.fail(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO task_session_calls (session, seq, data) VALUES (?, ?, ?)`), []byte(id), e.Seq, e.Data); err != nil {
			return s.fail(err)
		}
		appended = true
		return nil
	})
	if err != nil || appended {
		return err
	}
	r, err := s.readRow(ctx, s.db.Write, id)
	switch {
	case err != nil:
		return err
	case r == nil:
		return sqltools.ErrNoSession
	case r.state == stateLive && r.lastUsed < s.idleCutoff(now):
		s.expire(ctx, id, now)
		r.state, r.ended = stateExpired, now
	}
	if r.state != stateLive {
		return s.gone(id, r)
	}
	return sqltools.ErrLogConflict
}
