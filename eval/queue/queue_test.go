package queue_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/queue"
	"github.com/toolenv/toolenv/internal/pgtest"
	"github.com/toolenv/toolenv/nl2api"
	"github.com/toolenv/toolenv/nl2api/nl2apitest"
	"github.com/toolenv/toolenv/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var kinds = []struct {
	name  string
	fresh func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "queue.db") }},
	{"postgres", func(t *testing.T) string { return pgtest.DB(t) }},
}

// world is a generated NL2SQL corpus built into a SLOT collection, its
// tasks and an in-process environment over it.
type world struct {
	tasks []*toolenv.Task
	colls map[string]*toolenv.Collection
	env   agent.Env
}

func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	data, out := filepath.Join(dir, "data"), filepath.Join(dir, "out")
	if _, err := nl2apitest.Generate(data, nl2apitest.Options{Seed: 9}); err != nil {
		t.Fatal(err)
	}
	if _, err := nl2api.Build(context.Background(), nl2api.Options{Data: data, Out: out, Flavors: []string{"slot"}, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	env, err := environment.Open(context.Background(), &environment.Config{Collections: []string{filepath.Join(out, "slot")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	w := &world{colls: map[string]*toolenv.Collection{}, env: agent.NewLocal(env.Pipeline, env.Collections(), agent.LocalOptions{})}
	for _, c := range env.Collections() {
		w.colls[c.Name] = c
		for _, task := range env.Tasks[c.Name] {
			task.Collection = c.Name
			w.tasks = append(w.tasks, task)
		}
	}
	if len(w.tasks) < 10 {
		t.Fatalf("only %d tasks", len(w.tasks))
	}
	return w
}

// paced delays every episode's start, so that episodes take long enough
// for several workers to share a run, and can fail the starts of chosen
// tasks.
type paced struct {
	agent.Env
	delay  time.Duration
	failOn func(task string) error
	starts sync.Map // task → *atomic.Int32
}

func (p *paced) Start(ctx context.Context, task *toolenv.Task) (agent.Session, error) {
	n, _ := p.starts.LoadOrStore(task.ID, new(atomic.Int32))
	n.(*atomic.Int32).Add(1)
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(p.delay):
	}
	if p.failOn != nil {
		if err := p.failOn(task.ID); err != nil {
			return nil, err
		}
	}
	return p.Env.Start(ctx, task)
}

// firstStart calls first before the first episode it starts.
type firstStart struct {
	agent.Env
	once  sync.Once
	first func()
}

func (f *firstStart) Start(ctx context.Context, task *toolenv.Task) (agent.Session, error) {
	f.once.Do(f.first)
	return f.Env.Start(ctx, task)
}

func (p *paced) startsOf(task string) int {
	n, ok := p.starts.Load(task)
	if !ok {
		return 0
	}
	return int(n.(*atomic.Int32).Load())
}

func openStore(t testing.TB, dsn string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dsn, store.Options{Migrations: queue.Migrations, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// worker opens a worker's own connection to the run.
func worker(t testing.TB, dsn, name string, opts queue.Options) *queue.Run {
	t.Helper()
	opts.Worker = name
	r, err := queue.Open(context.Background(), openStore(t, dsn), queue.Spec{Name: "run-1", Fingerprint: "fp-1", Info: []byte(`{"agent":"oracle"}`)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func config(w *world, env agent.Env, q eval.Queue, out string) eval.Config {
	return eval.Config{Tasks: w.tasks, Collections: w.colls, Env: env, Agent: agent.Oracle{}, Concurrency: 2, Out: out, Queue: q}
}

// checkOnce asserts that the run holds one finished episode per task and
// that every episode with a gold answer reached it.
func checkOnce(t *testing.T, dsn string, w *world) *queue.Snapshot {
	t.Helper()
	snap, err := queue.Read(context.Background(), openStore(t, dsn), "run-1")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range snap.Episodes {
		k := fmt.Sprintf("%s/%d", e.TaskID, e.Run)
		if seen[k] {
			t.Fatalf("episode %s finished twice", k)
		}
		seen[k] = true
	}
	if len(seen) != len(w.tasks) || snap.Status.Done != len(w.tasks) || snap.Status.Pending+snap.Status.Running != 0 {
		t.Fatalf("%d distinct episodes, status %+v; want %d done", len(seen), snap.Status, len(w.tasks))
	}
	if string(snap.Info) != `{"agent":"oracle"}` {
		t.Fatalf("run info %s", snap.Info)
	}
	return snap
}

// TestWorkersShareARun: three workers, each with its own connection,
// run one run's episodes together: each episode once, all of them.
func TestWorkersShareARun(t *testing.T) {
	w := newWorld(t)
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			dsn := k.fresh(t)
			env := &paced{Env: w.env, delay: 20 * time.Millisecond}
			var wg sync.WaitGroup
			ran := make([]int, 3)
			for i := range ran {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := eval.Run(context.Background(), config(w, env, worker(t, dsn, fmt.Sprint("w", i), queue.Options{}), t.TempDir()))
					if err != nil {
						t.Error(err)
						return
					}
					ran[i] = res.Ran
				}()
			}
			wg.Wait()
			snap := checkOnce(t, dsn, w)
			busy := 0
			for _, n := range ran {
				if n > 0 {
					busy++
				}
			}
			if ran[0]+ran[1]+ran[2] != len(w.tasks) || busy < 2 {
				t.Fatalf("workers ran %v episodes; want %d in all, on at least two workers", ran, len(w.tasks))
			}
			completed := 0
			for _, e := range snap.Episodes {
				if e.Score.Completed {
					completed++
				}
			}
			if completed == 0 {
				t.Fatal("no episode reached its gold answer")
			}
			for _, task := range w.tasks {
				if n := env.startsOf(task.ID); n != 1 {
					t.Fatalf("task %s started %d times", task.ID, n)
				}
			}
		})
	}
}

// TestDeadWorkersEpisodeIsReclaimedOnce: a worker that claimed an episode
// and died (it never heartbeats or hands in) loses it when its lease runs
// out; another worker runs it, once; the dead worker's late result is
// refused.
func TestDeadWorkersEpisodeIsReclaimedOnce(t *testing.T) {
	w := newWorld(t)
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := k.fresh(t)
			opts := queue.Options{Lease: 2 * time.Second}
			dead := worker(t, dsn, "dead", opts)
			keys := make([]eval.EpisodeKey, len(w.tasks))
			for i, task := range w.tasks {
				keys[i] = eval.EpisodeKey{Task: task.ID}
			}
			if err := dead.Join(ctx, keys); err != nil {
				t.Fatal(err)
			}
			claim, _, err := dead.Claim(ctx)
			if err != nil || claim == nil || claim.Attempt != 1 {
				t.Fatalf("claim %+v, %v", claim, err)
			}
			env := &paced{Env: w.env, delay: 5 * time.Millisecond}
			var wg sync.WaitGroup
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := eval.Run(ctx, config(w, env, worker(t, dsn, fmt.Sprint("w", i), opts), t.TempDir())); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			snap := checkOnce(t, dsn, w)
			if snap.Status.Reclaims != 1 || env.startsOf(claim.Task) != 1 {
				t.Fatalf("status %+v, %s started %d times: want reclaimed once and run once", snap.Status, claim.Task, env.startsOf(claim.Task))
			}
			// The dead worker comes back: its claim is gone.
			if err := dead.Heartbeat(ctx, claim); !errors.Is(err, eval.ErrClaimLost) {
				t.Fatalf("late heartbeat: %v", err)
			}
			if err := dead.Finish(ctx, claim, &eval.Episode{TaskID: claim.Task}); !errors.Is(err, eval.ErrClaimLost) {
				t.Fatalf("late result: %v", err)
			}
		})
	}
}

// TestErrorsAreRetriedThenKept: an episode that ends with an error is put
// back and run again, up to the attempts; then its error is its result.
func TestErrorsAreRetriedThenKept(t *testing.T) {
	w := newWorld(t)
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := k.fresh(t)
			flaky, broken := w.tasks[0].ID, w.tasks[1].ID
			env := &paced{Env: w.env}
			env.failOn = func(task string) error {
				switch {
				case task == broken, task == flaky && env.startsOf(task) == 1:
					return errors.New("model endpoint refused the connection")
				}
				return nil
			}
			opts := queue.Options{Attempts: 3, Lease: 2 * time.Second}
			if _, err := eval.Run(ctx, config(w, env, worker(t, dsn, "w", opts), t.TempDir())); err != nil {
				t.Fatal(err)
			}
			snap := checkOnce(t, dsn, w)
			if env.startsOf(flaky) != 2 || env.startsOf(broken) != 3 {
				t.Fatalf("starts: flaky %d (want 2), broken %d (want 3)", env.startsOf(flaky), env.startsOf(broken))
			}
			byTask := map[string]*eval.Episode{}
			for _, e := range snap.Episodes {
				byTask[e.TaskID] = e
			}
			if msg := byTask[flaky].Outcome.Trajectory.Error; msg != "" {
				t.Fatalf("flaky episode kept its first error: %s", msg)
			}
			if msg := byTask[broken].Outcome.Trajectory.Error; !strings.Contains(msg, "refused the connection") {
				t.Fatalf("broken episode: %q", msg)
			}
			if snap.Status.Errors != 1 || snap.Status.Retries != 3 {
				t.Fatalf("status %+v: want 1 error, 3 retries (flaky 1, broken 2)", snap.Status)
			}
		})
	}
}

// TestEpisodeWhoseWorkersKeepDying: after its attempts, an episode whose
// workers all died is handed in with an error saying so, not run again.
func TestEpisodeWhoseWorkersKeepDying(t *testing.T) {
	w := newWorld(t)
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := k.fresh(t)
			opts := queue.Options{Attempts: 2, Lease: 1500 * time.Millisecond}
			doomed := worker(t, dsn, "doomed", opts)
			keys := make([]eval.EpisodeKey, len(w.tasks))
			for i, task := range w.tasks {
				keys[i] = eval.EpisodeKey{Task: task.ID}
			}
			if err := doomed.Join(ctx, keys); err != nil {
				t.Fatal(err)
			}
			var cursed string
			for attempt := 1; attempt <= 2; attempt++ {
				c, _, err := doomed.Claim(ctx) // and die
				if err != nil || c == nil || c.Attempt != attempt || (cursed != "" && c.Task != cursed) {
					t.Fatalf("claim %d: %+v, %v", attempt, c, err)
				}
				cursed = c.Task
				time.Sleep(1700 * time.Millisecond) // past the lease
			}
			env := &paced{Env: w.env}
			if _, err := eval.Run(ctx, config(w, env, worker(t, dsn, "w", opts), t.TempDir())); err != nil {
				t.Fatal(err)
			}
			snap := checkOnce(t, dsn, w)
			if env.startsOf(cursed) != 0 || snap.Status.Reclaims != 2 || snap.Status.Errors != 1 {
				t.Fatalf("%s started %d times, status %+v: want never run, reclaimed twice, one error", cursed, env.startsOf(cursed), snap.Status)
			}
			for _, e := range snap.Episodes {
				if e.TaskID == cursed && !strings.Contains(e.Outcome.Trajectory.Error, "claimed 2 times") {
					t.Fatalf("its error: %q", e.Outcome.Trajectory.Error)
				}
			}
		})
	}
}

// TestWorkersMustAgree: a worker whose run differs from the run of the
// same name is refused with a message saying what to do.
func TestWorkersMustAgree(t *testing.T) {
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "q.db")
	st := openStore(t, dsn)
	a, err := queue.Open(ctx, st, queue.Spec{Name: "r", Fingerprint: "one"}, queue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Join(ctx, []eval.EpisodeKey{{Task: "t1"}, {Task: "t2"}}); err != nil {
		t.Fatal(err)
	}
	b, _ := queue.Open(ctx, st, queue.Spec{Name: "r", Fingerprint: "two"}, queue.Options{})
	if err := b.Join(ctx, []eval.EpisodeKey{{Task: "t1"}, {Task: "t2"}}); err == nil || !strings.Contains(err.Error(), "--run-name") {
		t.Fatalf("another configuration joined: %v", err)
	}
	c, _ := queue.Open(ctx, st, queue.Spec{Name: "r", Fingerprint: "one"}, queue.Options{})
	if err := c.Join(ctx, []eval.EpisodeKey{{Task: "t1"}}); err == nil || !strings.Contains(err.Error(), "same tasks") {
		t.Fatalf("another task set joined: %v", err)
	}
	if err := c.Join(ctx, []eval.EpisodeKey{{Task: "t1"}, {Task: "t2"}}); err != nil {
		t.Fatalf("the same run again: %v", err)
	}
	if _, err := queue.Read(ctx, st, "nope"); err == nil || !strings.Contains(err.Error(), "no run") {
		t.Fatalf("reading a run that does not exist: %v", err)
	}
}

// TestPostgresLostMidRun: workers keep their finished episodes while
// PostgreSQL is down and hand them in when it returns; the run finishes
// with every episode once. A worker whose queue stays down longer than
// its wait stops with an error saying so.
func TestPostgresLostMidRun(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	srv := pgtest.Start(t)
	dsn := srv.NewDatabase(t)
	env := &paced{Env: w.env, delay: 30 * time.Millisecond}
	var started atomic.Int32
	env.failOn = func(string) error {
		if started.Add(1) == 4 {
			go func() {
				srv.Stop()
				time.Sleep(1500 * time.Millisecond)
				if err := srv.Restart(); err != nil {
					t.Error(err)
				}
			}()
		}
		return nil
	}
	// A lease far longer than any outage: whether a claim outlives the
	// outage is not what this measures (on a busy machine PostgreSQL can
	// take long to come back), and a lease that expired would start the
	// task again on the other worker.
	opts := queue.Options{Lease: 5 * time.Minute, Timeout: time.Second}
	// PostgreSQL goes down only once both workers have joined the queue
	// (a worker joins before it starts its first episode): joining while
	// it is down fails at once, by design (the end of this test), and on
	// a busy machine the second worker could still be starting when the
	// first had begun four episodes.
	joined := make(chan struct{})
	var arrived atomic.Int32
	arrive := func() {
		if arrived.Add(1) == 2 {
			close(joined)
		}
		select {
		case <-joined:
		case <-time.After(5 * time.Minute): // a safety net, not a pace
			t.Error("the other worker never started an episode")
		}
	}
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := config(w, &firstStart{Env: env, first: arrive}, worker(t, dsn, fmt.Sprint("w", i), opts), t.TempDir())
			cfg.QueueWait = time.Minute
			if _, err := eval.Run(ctx, cfg); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	checkOnce(t, dsn, w)
	for _, task := range w.tasks {
		if n := env.startsOf(task.ID); n != 1 {
			t.Fatalf("task %s started %d times", task.ID, n)
		}
	}

	// Down for good: the worker stops after its wait, with the reason.
	dsn2 := srv.NewDatabase(t)
	q := worker(t, dsn2, "w", opts)
	var n atomic.Int32
	down := &paced{Env: w.env, failOn: func(string) error {
		if n.Add(1) == 2 {
			srv.Stop()
		}
		return nil
	}}
	cfg := config(w, down, q, t.TempDir())
	cfg.QueueWait = 2 * time.Second
	_, err := eval.Run(ctx, cfg)
	if !errors.Is(err, eval.ErrQueueUnavailable) || !strings.Contains(err.Error(), "unreachable for more than 2s") {
		t.Fatalf("queue gone mid-run: %v", err)
	}
	// Down at the start: a clear error at once.
	_, err = eval.Run(ctx, config(w, &paced{Env: w.env}, q, t.TempDir()))
	if !errors.Is(err, eval.ErrQueueUnavailable) || !strings.Contains(err.Error(), "join the queue") {
		t.Fatalf("queue down at the start: %v", err)
	}
}
