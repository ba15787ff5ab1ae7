// Package queue keeps the episodes of an evaluation run in a shared store
// so that any number of workers on any machines run them together
// (toolenv eval --queue postgres://…): eval.Queue over PostgreSQL (or
// SQLite, for workers on one machine).
//
// A run is a row naming it, with a fingerprint of what it evaluates (the
// tasks, agent, model and seed) and its run.json; its episodes are rows
// keyed by task and run number. A worker claims the first episode nobody
// holds with one UPDATE over a SELECT … FOR UPDATE SKIP LOCKED (workers
// never wait on each other's claims), under a lease that its heartbeats
// extend. Times are the database's clock, so the workers' clocks may
// disagree. An episode whose worker stopped heartbeating (killed,
// partitioned) is claimed again once its lease runs out: each claim has a
// token, and a worker that lost its claim can neither extend it nor hand
// its result in, so every episode has exactly one result. An episode
// that ends with an error (model or environment unreachable) is put back
// after a delay until it has had Options.Attempts attempts; one whose
// workers kept dying is handed in with an error after as many.
//
// Every database error is taken for the database being unreachable
// (eval.ErrQueueUnavailable): workers keep their finished episodes and
// wait for it to return (eval.Config.QueueWait).
package queue

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/store"
)

// Component is the name of the queue's tables in the store's schema.
const Component = "evalqueue"

// Migrations are the schema of the queue's tables. Pass them in
// store.Options.Migrations wherever a store holding a queue is opened.
var Migrations = []store.Migration{{
	Component: Component, Version: 1, Name: "evaluation runs and their episodes",
	SQLite: `CREATE TABLE eval_runs (
	name        TEXT PRIMARY KEY,
	fingerprint TEXT NOT NULL,
	info        BLOB,
	created     INTEGER NOT NULL
);
CREATE TABLE eval_episodes (
	run         TEXT NOT NULL,
	task        BLOB NOT NULL,
	run_no      INTEGER NOT NULL,
	seq         INTEGER NOT NULL,
	state       TEXT NOT NULL DEFAULT 'pending',
	attempts    INTEGER NOT NULL DEFAULT 0,
	reclaims    INTEGER NOT NULL DEFAULT 0,
	token       TEXT NOT NULL DEFAULT '',
	worker      TEXT NOT NULL DEFAULT '',
	lease_until INTEGER NOT NULL DEFAULT 0,
	not_before  INTEGER NOT NULL DEFAULT 0,
	result      BLOB,
	error       TEXT NOT NULL DEFAULT '',
	updated     INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (run, task, run_no)
);
CREATE INDEX eval_episodes_state ON eval_episodes (run, state, seq)`,
	Postgres: `CREATE TABLE eval_runs (
	name        text PRIMARY KEY,
	fingerprint text NOT NULL,
	info        bytea,
	created     bigint NOT NULL
);
CREATE TABLE eval_episodes (
	run         text NOT NULL,
	task        bytea NOT NULL,
	run_no      bigint NOT NULL,
	seq         bigint NOT NULL,
	state       text NOT NULL DEFAULT 'pending',
	attempts    bigint NOT NULL DEFAULT 0,
	reclaims    bigint NOT NULL DEFAULT 0,
	token       text NOT NULL DEFAULT '',
	worker      text NOT NULL DEFAULT '',
	lease_until bigint NOT NULL DEFAULT 0,
	not_before  bigint NOT NULL DEFAULT 0,
	result      bytea,
	error       text NOT NULL DEFAULT '',
	updated     bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (run, task, run_no)
);
CREATE INDEX eval_episodes_state ON eval_episodes (run, state, seq)`,
}}

// Options configure a Run. The zero value means the defaults.
type Options struct {
	// Lease is how long a claim lives without a heartbeat (default 60 s;
	// workers heartbeat every third of it). A dead worker's episode is
	// claimed again after it.
	Lease time.Duration
	// Attempts is how often an episode is claimed at most (default 3):
	// an episode that ended with an error is put back until then, and
	// one whose workers died as often is handed in with an error.
	Attempts int
	// Worker names this worker in the queue (default host/pid).
	Worker string
	// Timeout bounds every operation on the database (default 5 s).
	Timeout time.Duration
}

func (o *Options) defaults() {
	if o.Lease <= 0 {
		o.Lease = time.Minute
	}
	if o.Attempts <= 0 {
		o.Attempts = 3
	}
	if o.Worker == "" {
		host, _ := os.Hostname()
		o.Worker = host + "/" + strconv.Itoa(os.Getpid())
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
}

// Spec names a run and says what it evaluates.
type Spec struct {
	// Name is the run's name, shared by its workers.
	Name string
	// Fingerprint digests what the run evaluates (Fingerprint): a worker
	// whose fingerprint differs from the run's is refused.
	Fingerprint string
	// Info is the run's run.json, kept for toolenv eval report.
	Info []byte
}

// Run is one evaluation run in a store, as one worker sees it. It is an
// eval.Queue, safe for concurrent use.
type Run struct {
	db   *store.DB
	path string
	spec Spec
	opts Options
}

var _ eval.Queue = (*Run)(nil)

// Open returns run spec in st, whose schema must hold Migrations. The run
// is created by the first worker's Join.
func Open(ctx context.Context, st store.Store, spec Spec, opts Options) (*Run, error) {
	opts.defaults()
	if spec.Name == "" {
		return nil, errors.New("queue: the run has no name")
	}
	r := &Run{db: st.SQL(), path: st.Path(), spec: spec, opts: opts}
	ctx, cancel := r.op(ctx)
	defer cancel()
	if _, err := r.db.Read.ExecContext(ctx, `SELECT name FROM eval_runs WHERE 1 = 0`); err != nil {
		return nil, fmt.Errorf("evaluation queue in %s: %w (open the store with queue.Migrations, or run toolenv store migrate)", r.path, r.fail(err))
	}
	return r, nil
}

// Lease is how long a claim lives without a heartbeat.
func (r *Run) Lease() time.Duration { return r.opts.Lease }

// Fingerprint digests what a run evaluates, from a value that holds it
// (its tasks, agent and its options, model, seed; not where the files or
// the model are, which differ between machines).
func Fingerprint(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return digest(b), nil
}

func (r *Run) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.opts.Timeout)
}

// now is the database's clock in Unix milliseconds, as SQL.
func (r *Run) now() string {
	if r.db.Dialect == "postgres" {
		return `(extract(epoch from clock_timestamp()) * 1000)::bigint`
	}
	return `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`
}

// q rewrites ? placeholders as $1, $2, … for PostgreSQL and NOW as the
// database's clock.
func (r *Run) q(query string) string {
	return r.db.Rebind(strings.ReplaceAll(query, "NOW", r.now()))
}

// fail marks a database error as the queue being unreachable (see the
// package documentation).
func (r *Run) fail(err error) error {
	if err == nil || errors.Is(err, eval.ErrQueueUnavailable) {
		return err
	}
	return fmt.Errorf("%w (%s): %w", eval.ErrQueueUnavailable, store.Redact(r.path), err)
}

func (r *Run) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := r.db.Write.BeginTx(ctx, nil)
	if err != nil {
		return r.fail(err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return r.fail(tx.Commit())
}

// Join creates the run (or joins it, when its fingerprint is this one)
// and registers its episodes.
func (r *Run) Join(ctx context.Context, keys []eval.EpisodeKey) error {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout+time.Duration(len(keys))*time.Millisecond)
	defer cancel()
	return r.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, r.q(`INSERT INTO eval_runs (name, fingerprint, info, created) VALUES (?, ?, ?, NOW) ON CONFLICT (name) DO NOTHING`),
			r.spec.Name, r.spec.Fingerprint, r.spec.Info); err != nil {
			return r.fail(err)
		}
		var fp string
		if err := tx.QueryRowContext(ctx, r.q(`SELECT fingerprint FROM eval_runs WHERE name = ?`), r.spec.Name).Scan(&fp); err != nil {
			return r.fail(err)
		}
		if fp != r.spec.Fingerprint {
			return fmt.Errorf("queue: run %q was started with another configuration (fingerprint %.12s, this worker's %.12s): every worker of a run must evaluate the same tasks with the same agent, model and seed; check the flags, or name another run with --run-name", r.spec.Name, fp, r.spec.Fingerprint)
		}
		const chunk = 256
		for i := 0; i < len(keys); i += chunk {
			part := keys[i:min(i+chunk, len(keys))]
			var b strings.Builder
			args := make([]any, 0, 4*len(part))
			b.WriteString(`INSERT INTO eval_episodes (run, task, run_no, seq) VALUES `)
			for j, k := range part {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString("(?, ?, ?, ?)")
				args = append(args, r.spec.Name, []byte(k.Task), k.Run, i+j)
			}
			b.WriteString(` ON CONFLICT (run, task, run_no) DO NOTHING`)
			if _, err := tx.ExecContext(ctx, r.q(b.String()), args...); err != nil {
				return r.fail(err)
			}
		}
		var n int
		if err := tx.QueryRowContext(ctx, r.q(`SELECT count(*) FROM eval_episodes WHERE run = ?`), r.spec.Name).Scan(&n); err != nil {
			return r.fail(err)
		}
		if n != len(keys) {
			return fmt.Errorf("queue: run %q holds %d episodes, this worker has %d: every worker of a run must load the same tasks", r.spec.Name, n, len(keys))
		}
		return nil
	})
}

func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Claim takes the first episode nobody holds.
func (r *Run) Claim(ctx context.Context) (*eval.Claim, bool, error) {
	ctx, cancel := r.op(ctx)
	defer cancel()
	lock := ""
	if r.db.Dialect == "postgres" {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	token := newToken()
	var (
		task     []byte
		run      int
		attempts int
	)
	err := r.db.Write.QueryRowContext(ctx, r.q(`UPDATE eval_episodes SET
	state = 'running', attempts = attempts + 1, reclaims = reclaims + CASE WHEN state = 'running' THEN 1 ELSE 0 END,
	token = ?, worker = ?, lease_until = NOW + ?, updated = NOW
WHERE (run, task, run_no) = (
	SELECT run, task, run_no FROM eval_episodes
	WHERE run = ? AND ((state = 'pending' AND not_before <= NOW) OR (state = 'running' AND lease_until < NOW))
	ORDER BY seq LIMIT 1`+lock+`)
RETURNING task, run_no, attempts`), token, r.opts.Worker, r.opts.Lease.Milliseconds(), r.spec.Name).Scan(&task, &run, &attempts)
	if errors.Is(err, sql.ErrNoRows) {
		st, err := r.Status(ctx)
		if err != nil {
			return nil, false, err
		}
		return nil, st.Pending+st.Running == 0, nil
	}
	if err != nil {
		return nil, false, r.fail(err)
	}
	return &eval.Claim{EpisodeKey: eval.EpisodeKey{Task: string(task), Run: run}, Attempt: attempts, Token: token,
		Exhausted: attempts > r.opts.Attempts}, false, nil
}

// held runs an update of a claimed episode; ErrClaimLost when the claim
// is no longer c's.
func (r *Run) held(ctx context.Context, c *eval.Claim, set string, args ...any) error {
	ctx, cancel := r.op(ctx)
	defer cancel()
	args = append(args, r.spec.Name, []byte(c.Task), c.Run, c.Token)
	res, err := r.db.Write.ExecContext(ctx, r.q(`UPDATE eval_episodes SET `+set+`, updated = NOW
WHERE run = ? AND task = ? AND run_no = ? AND token = ? AND state = 'running'`), args...)
	if err != nil {
		return r.fail(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return eval.ErrClaimLost
	}
	return nil
}

// Heartbeat extends c's lease.
func (r *Run) Heartbeat(ctx context.Context, c *eval.Claim) error {
	return r.held(ctx, c, `lease_until = NOW + ?`, r.opts.Lease.Milliseconds())
}

// Finish stores the claimed episode's result.
func (r *Run) Finish(ctx context.Context, c *eval.Claim, e *eval.Episode) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("queue: encode episode %s run %d: %w", c.Task, c.Run, err)
	}
	msg := ""
	if e.Outcome != nil && e.Outcome.Trajectory != nil {
		msg = e.Outcome.Trajectory.Error
	}
	return r.held(ctx, c, `state = 'done', result = ?, error = ?, lease_until = 0`, b, msg)
}

// Retry puts the claimed episode back, after a delay, unless it has had
// its attempts.
func (r *Run) Retry(ctx context.Context, c *eval.Claim, reason string) (bool, error) {
	if c.Attempt >= r.opts.Attempts {
		return false, nil
	}
	delay := min(time.Duration(c.Attempt)*2*time.Second, r.opts.Lease)
	return true, r.held(ctx, c, `state = 'pending', token = '', error = ?, not_before = NOW + ?, lease_until = 0`, reason, delay.Milliseconds())
}

// Release gives the claimed episode back; the attempt does not count.
func (r *Run) Release(ctx context.Context, c *eval.Claim) error {
	return r.held(ctx, c, `state = 'pending', token = '', attempts = attempts - 1, lease_until = 0`)
}

// Status counts a run's episodes by state.
type Status = eval.QueueStatus

// Progress counts finished episodes and all of them.
func (r *Run) Progress(ctx context.Context) (int, int, error) {
	st, err := r.Status(ctx)
	return st.Done, st.Pending + st.Running + st.Done, err
}

// Status counts the run's episodes.
func (r *Run) Status(ctx context.Context) (Status, error) {
	return status(ctx, r, r.spec.Name)
}

func status(ctx context.Context, r *Run, name string) (Status, error) {
	ctx, cancel := r.op(ctx)
	defer cancel()
	var st Status
	err := r.db.Read.QueryRowContext(ctx, r.q(`SELECT
	COALESCE(SUM(CASE WHEN state = 'pending' THEN 1 ELSE 0 END), 0),
	COALESCE(SUM(CASE WHEN state = 'running' THEN 1 ELSE 0 END), 0),
	COALESCE(SUM(CASE WHEN state = 'done' THEN 1 ELSE 0 END), 0),
	COALESCE(SUM(CASE WHEN state = 'done' AND error <> '' THEN 1 ELSE 0 END), 0),
	COALESCE(SUM(reclaims), 0),
	COALESCE(SUM(CASE WHEN attempts > 1 THEN attempts - 1 ELSE 0 END), 0)
FROM eval_episodes WHERE run = ?`), name).Scan(&st.Pending, &st.Running, &st.Done, &st.Errors, &st.Reclaims, &st.Retries)
	return st, r.fail(err)
}

// Snapshot is a run as the store holds it.
type Snapshot struct {
	Name string
	// Info is the run.json the first worker recorded.
	Info []byte
	// Episodes are the finished episodes.
	Episodes []*eval.Episode
	Status   Status
}

// Read reads run name from st (opened with Migrations): its run.json,
// finished episodes and counts.
func Read(ctx context.Context, st store.Store, name string) (*Snapshot, error) {
	r := &Run{db: st.SQL(), path: st.Path(), opts: Options{}}
	r.opts.defaults()
	snap := &Snapshot{Name: name}
	ctx1, cancel := r.op(ctx)
	err := r.db.Read.QueryRowContext(ctx1, r.q(`SELECT info FROM eval_runs WHERE name = ?`), name).Scan(&snap.Info)
	cancel()
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("queue: no run %q in %s (toolenv eval report --queue … without --run-name lists the runs)", name, store.Redact(r.path))
	}
	if err != nil {
		return nil, r.fail(err)
	}
	rows, err := r.db.Read.QueryContext(ctx, r.q(`SELECT task, run_no, result FROM eval_episodes WHERE run = ? AND state = 'done' ORDER BY seq`), name)
	if err != nil {
		return nil, r.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			task []byte
			run  int
			b    []byte
		)
		if err := rows.Scan(&task, &run, &b); err != nil {
			return nil, r.fail(err)
		}
		var e eval.Episode
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, fmt.Errorf("queue: run %q: episode %s run %d does not decode: %w", name, task, run, err)
		}
		snap.Episodes = append(snap.Episodes, &e)
	}
	if err := rows.Err(); err != nil {
		return nil, r.fail(err)
	}
	if snap.Status, err = status(ctx, r, name); err != nil {
		return nil, err
	}
	return snap, nil
}

// RunInfo is one run in a store, for listings.
type RunInfo struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
	Status  Status    `json:"status"`
}

// List lists the runs in st, newest first.
func List(ctx context.Context, st store.Store) ([]RunInfo, error) {
	r := &Run{db: st.SQL(), path: st.Path()}
	r.opts.defaults()
	ctx1, cancel := r.op(ctx)
	defer cancel()
	rows, err := r.db.Read.QueryContext(ctx1, `SELECT name, created FROM eval_runs ORDER BY created DESC, name`)
	if err != nil {
		return nil, r.fail(err)
	}
	var out []RunInfo
	for rows.Next() {
		var (
			ri RunInfo
			ms int64
		)
		if err := rows.Scan(&ri.Name, &ms); err != nil {
			rows.Close()
			return nil, r.fail(err)
		}
		ri.Created = time.UnixMilli(ms).UTC()
		out = append(out, ri)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, r.fail(err)
	}
	for i := range out {
		if out[i].Status, err = status(ctx, r, out[i].Name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Export writes the finished episodes of run name in st into the folder
// dir as an evaluation folder (episodes.jsonl, and run.json with the
// queue's counts, where the run recorded one), ready for the reports.
// where is the store's location as it may be shown (redacted). A run
// with no finished episode is an invalid-arguments error.
func Export(ctx context.Context, st store.Store, name, where, dir string) (*Snapshot, *eval.RunInfo, error) {
	snap, err := Read(ctx, st, name)
	if err != nil {
		return nil, nil, err
	}
	if len(snap.Episodes) == 0 {
		return nil, nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments,
			Message: fmt.Sprintf("run %s has no finished episodes yet (%d pending, %d running)", name, snap.Status.Pending, snap.Status.Running)}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	var info *eval.RunInfo
	if len(snap.Info) > 0 {
		info = &eval.RunInfo{}
		if err := json.Unmarshal(snap.Info, info); err != nil {
			return nil, nil, fmt.Errorf("run %s: its run.json does not decode: %w", name, err)
		}
		status := snap.Status
		info.Queue = &eval.QueueInfo{Store: where, Run: name, Status: &status}
		info.Ran, info.Resumed, info.Interrupted = len(snap.Episodes), 0, false
		if err := eval.WriteRunInfo(dir, info); err != nil {
			return nil, nil, err
		}
	}
	if err := eval.WriteJournal(filepath.Join(dir, eval.JournalName(eval.Shard{})), snap.Episodes); err != nil {
		return nil, nil, err
	}
	return snap, info, nil
}

// WriteList writes runs as a table: name, creation time and the counts
// of their episodes.
func WriteList(w io.Writer, runs []RunInfo) {
	fmt.Fprintf(w, "%-34s %-20s %8s %8s %8s %8s %9s\n", "run", "created", "done", "pending", "running", "errors", "reclaims")
	for _, r := range runs {
		fmt.Fprintf(w, "%-34s %-20s %8d %8d %8d %8d %9d\n", r.Name, r.Created.Format(time.DateTime), r.Status.Done, r.Status.Pending, r.Status.Running, r.Status.Errors, r.Status.Reclaims)
	}
}
