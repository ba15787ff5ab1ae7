package tasksession

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/server/session"
	"github.com/toolenv/toolenv/store"
)

// The states of a session row.
const (
	stateLive    = "live"
	stateEnded   = "ended"   // ended by its client
	stateEvicted = "evicted" // evicted at the cap
	stateExpired = "expired" // idle too long
)

// Prefix begins every id Sessions issues: the in-memory table's
// (server/session), so that clients see one kind of id.
const Prefix = session.Prefix

// Errors of the issuer, the in-memory table's, so that the server answers
// them alike; wrapped, so test them with errors.Is.
var (
	// ErrUnknown: the id was never issued to this principal, or the
	// session ended (the message says how and when).
	ErrUnknown = session.ErrUnknown
	// ErrFull: the fleet holds its cap of live sessions and every one
	// was used too recently to evict.
	ErrFull = session.ErrFull
)

// Options configure Sessions. The zero value means the defaults.
type Options struct {
	// Max caps the live sessions of the fleet (default 4096; negative:
	// no cap). A new session over the cap evicts the one idle longest
	// that no call used within Active; when there is none, Issue fails
	// with ErrFull.
	Max int
	// Idle expires sessions unused this long (default 30 min; negative:
	// never).
	Idle time.Duration
	// Active is how recently used a session must be to be safe from
	// eviction at the cap: it may have a call in flight on some replica
	// (default 2 min).
	Active time.Duration
	// Retain is how long an ended session is remembered, so that its
	// late calls get an error saying what happened (default 24 h).
	Retain time.Duration
	// SweepEvery is how often the calls of ended sessions and the rows
	// of old ones are deleted (default 1 min; the sweep runs inside
	// Issue and Start, at most this often per process).
	SweepEvery time.Duration
	// Timeout bounds every operation on the store (default 5 s), so that
	// calls fail fast while the database is gone.
	Timeout time.Duration
	// ClientNamed also accepts ids a client names itself (the protocol
	// before server-issued ids), scoped to its principal.
	ClientNamed bool
	// OnEnd is told the backend id of every session this process ends,
	// evicts or expires, so that backends drop what they hold of it.
	OnEnd func(id string)
	// Now is the clock (default time.Now); tests inject their own.
	Now func() time.Time
	// Logger logs sweeps and evictions (these rate-limited, see
	// session.Evictions); nil discards.
	Logger *slog.Logger
	// OnEvict is told of every n sessions this process evicts at the cap
	// (a metrics counter; each replica counts its own).
	OnEvict func(n int)
}

func (o *Options) defaults() {
	switch {
	case o.Max == 0:
		o.Max = 4096
	case o.Max < 0:
		o.Max = 0
	}
	switch {
	case o.Idle == 0:
		o.Idle = 30 * time.Minute
	case o.Idle < 0:
		o.Idle = 0
	}
	if o.Active <= 0 {
		o.Active = 2 * time.Minute
	}
	if o.Retain <= 0 {
		o.Retain = 24 * time.Hour
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = time.Minute
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Sessions are the task sessions of a fleet, kept in one store: the
// server's session issuer and the backends' session log. It is safe for
// concurrent use, by any number of processes sharing the store.
type Sessions struct {
	db   *store.DB
	path string
	opts Options

	mu        sync.Mutex
	lastSweep time.Time
	evictions *session.Evictions

	unitsMu sync.Mutex
	units   map[string]*Unit // sessions whose entries are held (Hold)
}

var _ sqltools.SessionLog = (*Sessions)(nil)

// New returns the sessions kept in st, whose schema must hold Migrations
// (open it with them).
func New(ctx context.Context, st store.Store, opts Options) (*Sessions, error) {
	opts.defaults()
	s := &Sessions{db: st.SQL(), path: st.Path(), opts: opts,
		evictions: session.NewEvictions(session.EvictionOptions{Kind: "task", Max: opts.Max, Logger: opts.Logger, OnEvict: opts.OnEvict})}
	ctx, cancel := s.op(ctx)
	defer cancel()
	if _, err := s.db.Read.ExecContext(ctx, `SELECT id FROM task_sessions WHERE 1 = 0`); err != nil {
		return nil, fmt.Errorf("task sessions in %s: %w (open the store with tasksession.Migrations, or run toolenv store migrate)", s.path, s.fail(err))
	}
	return s, nil
}

// Idle returns the idle timeout (0: none).
func (s *Sessions) Idle() time.Duration { return s.opts.Idle }

// Max returns the cap on live sessions (0: none).
func (s *Sessions) Max() int { return s.opts.Max }

// NewID returns a fresh unguessable id: Prefix and 128 random bits.
func NewID() string { return session.NewID() }

// backendID is the id backends see for a client-named session: the name
// itself without tokens, else scoped to the principal so that two tokens
// never share a session.
func backendID(principal, name string) string {
	if principal == "" {
		return name
	}
	return store.PrincipalDigest(principal) + "/" + name
}

func (s *Sessions) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.opts.Timeout)
}

func (s *Sessions) now() int64 { return s.opts.Now().UnixMilli() }

// q rewrites ? placeholders as $1, $2, … for PostgreSQL.
func (s *Sessions) q(query string) string { return s.db.Rebind(query) }

// fail marks a database error as the store being unavailable: every
// query here is well-formed, so an error means the database cannot be
// reached or cannot answer now.
func (s *Sessions) fail(err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w (%s): %w", store.ErrUnavailable, s.path, err)
}

// tx runs fn in a transaction on the store's writer.
func (s *Sessions) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.Write.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return s.fail(tx.Commit())
}

// row is what explaining a missing session needs of its row.
type row struct {
	principal string
	issued    bool
	state     string
	lastUsed  int64
	ended     int64
}

func (s *Sessions) readRow(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, id string) (*row, error) {
	var r row
	err := q.QueryRowContext(ctx, s.q(`SELECT principal, issued, state, last_used, ended FROM task_sessions WHERE id = ?`), []byte(id)).
		Scan(&r.principal, &r.issued, &r.state, &r.lastUsed, &r.ended)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.fail(err)
	}
	return &r, nil
}

// idleCutoff is the last-use time before which a live session has
// expired (math.MinInt64 without an idle timeout).
func (s *Sessions) idleCutoff(now int64) int64 {
	if s.opts.Idle <= 0 {
		return -1 << 63
	}
	return now - s.opts.Idle.Milliseconds()
}

// why says how a session ended, for its late calls.
func (s *Sessions) why(r *row) string {
	at := time.UnixMilli(r.ended).UTC().Format(time.RFC3339)
	switch r.state {
	case stateEvicted:
		return fmt.Sprintf("evicted: --max-sessions %d was reached at %s (the fleet's live sessions) and it was the idlest; raise --max-sessions or end the sessions you no longer need", s.opts.Max, at)
	case stateExpired:
		return fmt.Sprintf("it expired at %s after %s unused", at, s.opts.Idle)
	case stateEnded:
		return fmt.Sprintf("its client ended it at %s", at)
	}
	return "it ended"
}

// expire marks a live session that has been idle too long as expired,
// and deletes its calls.
func (s *Sessions) expire(ctx context.Context, id string, now int64) {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE task_sessions SET state = ?, ended = ? WHERE id = ? AND state = ? AND last_used < ?`),
			stateExpired, now, []byte(id), stateLive, s.idleCutoff(now))
		if err != nil {
			return s.fail(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		_, err = tx.ExecContext(ctx, s.q(`DELETE FROM task_session_calls WHERE session = ?`), []byte(id))
		return s.fail(err)
	})
	if err == nil {
		s.ended([]string{id})
	}
}

func (s *Sessions) ended(ids []string) {
	if s.opts.OnEnd == nil {
		return
	}
	for _, id := range ids {
		s.opts.OnEnd(id)
	}
}

// gone is the error of a call on a session that ended (for backends).
func (s *Sessions) gone(id string, r *row) error {
	status := toolenv.StatusNotFound
	if r.state == stateEvicted {
		status = toolenv.StatusGone
	}
	return &toolenv.Error{Status: status,
		Message: fmt.Sprintf("session %q has ended: %s", clip(id), s.why(r)),
		Hint:    "start a new session (POST /sessions, or call initialize_active_data without a session id) and repeat the task's calls"}
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
