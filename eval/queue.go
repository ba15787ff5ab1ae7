package eval

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
)

// Queue shares the episodes of one run between workers on any number of
// machines: each worker claims episodes nobody holds, keeps its claims
// alive with heartbeats while it runs them and hands their results in;
// an episode whose worker stopped heartbeating (it died) is claimed by
// another. Package eval/queue keeps one in PostgreSQL (or SQLite, for
// workers on one machine).
type Queue interface {
	// Join registers the run's episodes. Every worker of a run registers
	// the same ones; registering is idempotent.
	Join(ctx context.Context, keys []EpisodeKey) error
	// Claim takes an episode nobody holds: never run, put back for
	// another attempt, or held by a worker whose lease ran out. With no
	// claim it says whether the run is done (every episode finished) or
	// other workers hold the rest (claim again later).
	Claim(ctx context.Context) (c *Claim, done bool, err error)
	// Heartbeat extends a claim's lease; ErrClaimLost when the lease ran
	// out and another worker took the episode over.
	Heartbeat(ctx context.Context, c *Claim) error
	// Finish stores the claimed episode's result, once: ErrClaimLost
	// when another worker took the episode over (its result counts).
	Finish(ctx context.Context, c *Claim, e *Episode) error
	// Retry puts a claimed episode that ended with an error back for
	// another attempt, after a delay; false when it has had its
	// attempts (then Finish it with its error).
	Retry(ctx context.Context, c *Claim, reason string) (bool, error)
	// Release gives a claim back unfinished (the worker is stopping):
	// the attempt does not count.
	Release(ctx context.Context, c *Claim) error
	// Progress counts the run's finished episodes and all of them.
	Progress(ctx context.Context) (done, total int, err error)
	// Lease is how long a claim lives without a heartbeat.
	Lease() time.Duration
}

// EpisodeKey names an episode of a run: a task and the run number.
type EpisodeKey struct {
	Task string `json:"task"`
	Run  int    `json:"run"`
}

// Claim is a worker's hold on one episode.
type Claim struct {
	EpisodeKey
	// Attempt counts the claims of the episode, this one included.
	Attempt int
	// Token identifies this hold: a claim taken over has a new one.
	Token string
	// Exhausted says the episode had all its attempts: its workers kept
	// dying on it. The worker hands it in with an error without running
	// it.
	Exhausted bool
}

// ErrClaimLost is returned when a claim's lease ran out and another
// worker took its episode over.
var ErrClaimLost = errors.New("the episode's claim was taken over by another worker (its lease ran out)")

// queuePoll is how long a worker waits before claiming again when other
// workers hold every unfinished episode, and before retrying a queue that
// cannot be reached.
const queuePoll = 500 * time.Millisecond

// runQueue is Run with a queue: this worker runs the episodes it claims
// until the run is done.
func runQueue(ctx context.Context, cfg Config, log *slog.Logger) (*Result, error) {
	q := cfg.Queue
	byID := map[string]*toolenv.Task{}
	var keys []EpisodeKey
	for _, t := range cfg.Tasks {
		byID[t.ID] = t
		for r := 0; r < cfg.Runs; r++ {
			keys = append(keys, EpisodeKey{t.ID, r})
		}
	}
	if len(byID) != len(cfg.Tasks) {
		return nil, errors.New("eval: with a queue, task ids must be unique")
	}
	if err := q.Join(ctx, keys); err != nil {
		return nil, fmt.Errorf("eval: join the queue: %w", err)
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	host, _ := os.Hostname()
	path := filepath.Join(cfg.Out, fmt.Sprintf("episodes-worker-%s-%d.jsonl", host, os.Getpid()))
	j, err := OpenJournal(path)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	examples := examplesOf(&cfg)
	res := &Result{Journal: path}
	wait := cfg.QueueWait
	if wait <= 0 {
		wait = 2 * time.Minute
	}
	down := &outage{wait: wait}
	var (
		mu      sync.Mutex
		fatal   error
		wg      sync.WaitGroup
		workCtx = ctx
	)
	fail := func(err error) {
		mu.Lock()
		if fatal == nil {
			fatal = err
		}
		mu.Unlock()
	}
	for w := 0; w < cfg.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for workCtx.Err() == nil {
				mu.Lock()
				stop := fatal != nil
				mu.Unlock()
				if stop {
					return
				}
				c, done, err := q.Claim(workCtx)
				if err != nil {
					if workCtx.Err() != nil {
						return
					}
					if !retryable(err) {
						fail(fmt.Errorf("eval: claim an episode: %w", err))
						return
					}
					if stop := down.note(err); stop != nil {
						fail(stop)
						return
					}
					log.Warn("eval queue: cannot claim an episode; retrying", "err", err)
					sleep(workCtx, queuePoll)
					continue
				}
				down.note(nil)
				if c == nil {
					if done {
						return
					}
					sleep(workCtx, queuePoll)
					continue
				}
				task := byID[c.Task]
				if task == nil {
					fail(fmt.Errorf("eval: the queue handed out task %q, which this worker does not have (every worker of a run must load the same tasks)", c.Task))
					_ = q.Release(context.WithoutCancel(ctx), c)
					return
				}
				if c.Exhausted {
					e := abandoned(&cfg, task, c)
					if _, err := handIn(ctx, down, func(ctx context.Context) (bool, error) { return true, q.Finish(ctx, c, e) }); err != nil && !errors.Is(err, ErrClaimLost) {
						fail(err)
						return
					}
					continue
				}
				e, err := runClaimed(workCtx, &cfg, q, down, examples[task.Collection], task, c, log)
				if err != nil {
					fail(err)
					return
				}
				if e == nil {
					continue
				}
				if err := j.Append(e); err != nil {
					fail(err)
					return
				}
				mu.Lock()
				res.Episodes = append(res.Episodes, e)
				res.Ran++
				mu.Unlock()
				if cfg.Progress != nil {
					done, total, err := q.Progress(ctx)
					if err == nil {
						mu.Lock()
						cfg.Progress(done, total, e)
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	res.Episodes = Dedupe(res.Episodes)
	if fatal != nil {
		return res, fatal
	}
	if ctx.Err() != nil {
		res.Interrupted = true
		return res, ctx.Err()
	}
	return res, nil
}

// runClaimed runs one claimed episode with heartbeats and hands it in.
// It returns the episode when this worker's result counts, nil when it
// does not (the claim was lost, the episode was put back, or ctx ended).
func runClaimed(ctx context.Context, cfg *Config, q Queue, down *outage, examples []*toolenv.Task, task *toolenv.Task, c *Claim, log *slog.Logger) (*Episode, error) {
	epCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	lost := make(chan struct{})
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		t := time.NewTicker(max(q.Lease()/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-epCtx.Done():
				return
			case <-t.C:
			}
			err := q.Heartbeat(epCtx, c)
			if errors.Is(err, ErrClaimLost) {
				log.Warn("eval queue: another worker took the episode over; abandoning it", "task", c.Task, "run", c.Run)
				close(lost)
				cancel()
				return
			}
			if err != nil && epCtx.Err() == nil {
				log.Warn("eval queue: heartbeat failed; the episode goes on", "task", c.Task, "run", c.Run, "err", err)
			}
		}
	}()
	e := runEpisode(epCtx, cfg, examples, workItem{task, c.Run}, log)
	cancel()
	<-hbDone
	select {
	case <-lost:
		return nil, nil
	default:
	}
	if e == nil { // interrupted: give the episode back
		if err := q.Release(context.WithoutCancel(ctx), c); err != nil {
			log.Warn("eval queue: could not give back an unfinished episode (it is claimed again when its lease runs out)", "task", c.Task, "err", err)
		}
		return nil, nil
	}
	if e.Outcome != nil && e.Outcome.Trajectory != nil && e.Outcome.Trajectory.Error != "" {
		again, err := handIn(ctx, down, func(ctx context.Context) (bool, error) { return q.Retry(ctx, c, e.Outcome.Trajectory.Error) })
		if err != nil {
			return nil, err
		}
		if again {
			log.Warn("eval queue: episode ended with an error; put back for another attempt", "task", c.Task, "run", c.Run, "attempt", c.Attempt, "err", e.Outcome.Trajectory.Error)
			return nil, nil
		}
	}
	if _, err := handIn(ctx, down, func(ctx context.Context) (bool, error) { return true, q.Finish(ctx, c, e) }); err != nil {
		if errors.Is(err, ErrClaimLost) {
			log.Warn("eval queue: another worker finished the episode first; this result is dropped", "task", c.Task, "run", c.Run)
			return nil, nil
		}
		return nil, err
	}
	return e, nil
}

// handIn runs fn until the queue takes it: while the queue cannot be
// reached the finished episode is kept and handed in when it returns
// (the worker stops only when ctx ends).
func handIn(ctx context.Context, down *outage, fn func(context.Context) (bool, error)) (bool, error) {
	for {
		ok, err := fn(ctx)
		if err == nil || errors.Is(err, ErrClaimLost) || ctx.Err() != nil || !retryable(err) {
			down.note(nil)
			return ok, err
		}
		if stop := down.note(err); stop != nil {
			return false, stop
		}
		sleep(ctx, queuePoll)
	}
}

// retryable reports whether a queue error may go away: the queue cannot
// be reached now.
func retryable(err error) bool { return errors.Is(err, ErrQueueUnavailable) }

// ErrQueueUnavailable marks queue errors that mean it cannot be reached
// now (its database is down): a worker waits for it to return, up to
// Config.QueueWait.
var ErrQueueUnavailable = errors.New("the evaluation queue cannot be reached")

// outage tracks how long the queue has been unreachable.
type outage struct {
	mu    sync.Mutex
	since time.Time
	wait  time.Duration
}

// note records the outcome of a queue operation and returns an error
// once the queue has been unreachable for longer than the wait.
func (o *outage) note(err error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err == nil || !retryable(err) {
		o.since = time.Time{}
		return nil
	}
	if o.since.IsZero() {
		o.since = time.Now()
	}
	if time.Since(o.since) > o.wait {
		return fmt.Errorf("eval: the queue has been unreachable for more than %s, so this worker stops (its unfinished episodes go to other workers; run it again to rejoin): %w", o.wait, err)
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// abandoned is the episode of a claim whose workers kept dying on it.
func abandoned(cfg *Config, task *toolenv.Task, c *Claim) *Episode {
	msg := fmt.Sprintf("the episode was claimed %d times and its workers stopped every time (killed, or crashed on it); not run again", c.Attempt-1)
	return errorEpisode(cfg, task, c.Run, msg)
}

// examplesOf returns, for the direct agent, the tasks with gold sequences
// by collection (its in-context examples).
func examplesOf(cfg *Config) map[string][]*toolenv.Task {
	examples := map[string][]*toolenv.Task{}
	if cfg.Agent.Name() == "direct" {
		for _, t := range cfg.Tasks {
			if len(t.Gold) > 0 {
				examples[t.Collection] = append(examples[t.Collection], t)
			}
		}
	}
	return examples
}
