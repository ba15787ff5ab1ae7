package eval

import (
	"context"
	"errors"
	"fmt"
	"github.com/toolenv/toolenv/eval/endstate"
	"hash/fnv"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/eval/judge"
)

// Shard selects part of the tasks: task i (in the order given) belongs to
// shard i mod Count. The zero value is the whole run.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// ParseShard reads "i/n" (0 <= i < n).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: want i/n with 0 <= i < n, e.g. 0/4", s)
	}
	return Shard{Index: i, Count: n}, nil
}

func (s Shard) has(i int) bool { return s.Count <= 1 || i%s.Count == s.Index }

// Config is an evaluation.
type Config struct {
	// Tasks are the tasks, in a stable order (sharding and seeds depend on
	// it only through task ids).
	Tasks []*toolenv.Task
	// Collections are the tasks' collections, by name.
	Collections map[string]*toolenv.Collection
	// Env is the environment episodes run in.
	Env agent.Env
	// Agent is the agent evaluated.
	Agent agent.Agent
	// Model answers the agent; ModelName is the model asked for.
	Model     agent.Model
	ModelName string
	// Temperature and MaxTokens are sent with every agent request (nil /
	// 0: the server's defaults).
	Temperature *float64
	MaxTokens   int
	// Runs is how many times each task is run (default 1).
	Runs int
	// Concurrency is how many episodes run at once (default 1).
	Concurrency int
	// Seed seeds every episode: an episode's seed is derived from it, the
	// task id and the run, so results do not depend on scheduling.
	Seed int64
	// Judge, when set, judges every episode that ends with a final answer
	// (SoPR unless NoSoPR, FAC when FAC is set), JudgeRounds times each
	// (default 1).
	Judge       *judge.Judge
	NoSoPR      bool
	FAC         bool
	JudgeRounds int
	// Out is the output folder.
	Out string
	// Resume continues the run in Out, skipping finished episodes (and
	// redoing those that ended with an error when RetryErrors is set);
	// without it a folder that already holds episodes is an error.
	Resume      bool
	RetryErrors bool
	// Shard runs part of the tasks; Merge joins the shards.
	Shard Shard
	// Queue, when set, shares the run with other workers (Queue): this
	// one runs the episodes it claims, instead of a shard, until every
	// episode of the run is finished. Its journal is
	// episodes-worker-<host>-<pid>.jsonl; Resume and Shard do not apply.
	Queue Queue
	// QueueWait is how long a worker waits for an unreachable queue to
	// return before it stops (0: 2 min).
	QueueWait time.Duration
	// StopAfterErrors stops the run when this many episodes in a row (in
	// the order they finish) measured nothing (Episode.Errored: the
	// model, the environment or the judge did not answer, after the
	// client's retries): the episodes still running are dropped, and Run
	// returns the result with Result.Stopped set and a StatusUnavailable
	// error. 0 means DefaultStopAfterErrors; negative never stops.
	StopAfterErrors int
	// Progress is called after each finished episode, with the number
	// done and the total of this shard (with a queue: of the run).
	Progress func(done, total int, e *Episode)
	// Logger logs skipped and failed episodes; nil discards.
	Logger *slog.Logger
	// Resumed, when set, is told before the first episode how many
	// finished episodes the journal already holds for this run and how
	// many are left to run.
	Resumed func(found, toRun int)
}

// Result is what Run did.
type Result struct {
	// Episodes are every finished episode of this shard, including those
	// of earlier runs when resuming.
	Episodes []*Episode
	// Ran is how many episodes this call ran; Skipped how many it found
	// already finished.
	Ran, Skipped int
	// Journal is the journal's path.
	Journal string
	// Interrupted says ctx ended before every episode finished.
	Interrupted bool
	// Stopped says why the run stopped before every episode finished
	// (StopAfterErrors), or "".
	Stopped string
}

// DefaultStopAfterErrors is how many episodes in a row may measure
// nothing before a run stops (Config.StopAfterErrors).
const DefaultStopAfterErrors = 3

// ErrOutExists is returned when the output folder already holds
// episodes and Resume is not set.
var ErrOutExists = errors.New("the output folder already holds episodes of a run")

type workItem struct {
	task *toolenv.Task
	run  int
}

// Run runs the evaluation. It returns when every episode of the shard has
// finished or ctx ends; episodes finished before an interruption are in
// the journal and in the result.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Agent == nil || cfg.Env == nil {
		return nil, errors.New("eval: Config needs an Agent and an Env")
	}
	if cfg.Runs <= 0 {
		cfg.Runs = 1
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	if cfg.JudgeRounds <= 0 {
		cfg.JudgeRounds = 1
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Queue != nil {
		return runQueue(ctx, cfg, log)
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	path := filepath.Join(cfg.Out, JournalName(cfg.Shard))
	var done []*Episode
	if _, err := os.Stat(path); err == nil {
		if !cfg.Resume {
			return nil, fmt.Errorf("%w: %s (pass --resume to continue it, or choose another --out)", ErrOutExists, path)
		}
		eps, problems, err := ReadJournal(path)
		if err != nil {
			return nil, err
		}
		for _, p := range problems {
			log.Warn("journal line skipped", "err", p)
		}
		done = Dedupe(eps)
	}
	finished := map[string]*Episode{}
	for _, e := range done {
		if cfg.RetryErrors && e.Outcome != nil && e.Outcome.Trajectory != nil && e.Outcome.Trajectory.Error != "" {
			continue
		}
		finished[e.TaskID+"\x00"+strconv.Itoa(e.Run)] = e
	}
	res := &Result{Journal: path}
	var items []workItem
	for i, t := range cfg.Tasks {
		if !cfg.Shard.has(i) {
			continue
		}
		for r := 0; r < cfg.Runs; r++ {
			if e, ok := finished[t.ID+"\x00"+strconv.Itoa(r)]; ok {
				res.Episodes = append(res.Episodes, e)
				res.Skipped++
				continue
			}
			items = append(items, workItem{t, r})
		}
	}
	if cfg.Resumed != nil {
		cfg.Resumed(res.Skipped, len(items))
	}
	j, err := OpenJournal(path)
	if err != nil {
		return nil, err
	}
	defer j.Close()

	examples := examplesOf(&cfg)
	total := len(items) + res.Skipped
	stopAfter := cfg.StopAfterErrors
	if stopAfter == 0 {
		stopAfter = DefaultStopAfterErrors
	}
	outer := ctx
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	inARow, lastErr := 0, ""
	work := make(chan workItem)
	results := make(chan *Episode, cfg.Concurrency)
	var wg sync.WaitGroup
	for w := 0; w < cfg.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				if e := runEpisode(ctx, &cfg, examples[it.task.Collection], it, log); e != nil {
					results <- e
				}
			}
		}()
	}
	go func() {
	feed:
		for _, it := range items {
			select {
			case work <- it:
			case <-ctx.Done():
				break feed
			}
		}
		close(work)
		wg.Wait()
		close(results)
	}()
	var writeErr error
	doneCount := res.Skipped
	for e := range results {
		// Group commit: take whatever else has finished meanwhile and
		// sync once for all of them.
		batch := []*Episode{e}
	drain:
		for {
			select {
			case more, ok := <-results:
				if !ok {
					break drain
				}
				batch = append(batch, more)
			default:
				break drain
			}
		}
		if writeErr != nil {
			continue
		}
		if err := j.AppendAll(batch); err != nil {
			writeErr = err
			continue
		}
		for _, e := range batch {
			res.Episodes = append(res.Episodes, e)
			res.Ran++
			doneCount++
			if cfg.Progress != nil {
				cfg.Progress(doneCount, total, e)
			}
			if why := e.Errored(); why != "" {
				inARow, lastErr = inARow+1, why
			} else {
				inARow = 0
			}
			if stopAfter > 0 && inARow >= stopAfter && res.Stopped == "" && doneCount < total {
				res.Stopped = fmt.Sprintf("%d episodes in a row measured nothing (the last: %s)", inARow, lastErr)
				log.Error("stopping the run", "why", res.Stopped)
				stop()
			}
		}
	}
	if writeErr != nil {
		return res, writeErr
	}
	res.Episodes = Dedupe(res.Episodes)
	if res.Stopped != "" && outer.Err() == nil {
		return res, toolenv.Errorw(toolenv.StatusUnavailable,
			"check the model endpoint (and the judge's) and the environment, then continue with the same command and --resume --retry-errors",
			"the run stopped after %d of %d episodes: %s", doneCount, total, res.Stopped)
	}
	if outer.Err() != nil && doneCount < total {
		res.Interrupted = true
		return res, outer.Err()
	}
	return res, nil
}

// EpisodeSeed derives an episode's seed from the run's seed, the task id
// and the run number.
func EpisodeSeed(seed int64, taskID string, run int) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%d", seed, taskID, run)
	return int64(h.Sum64() >> 1)
}

// Split names the part of the benchmark a task belongs to in reports: its
// group for StableToolBench queries (G1_instruction), else its
// collection (bird-slot).
func Split(t *toolenv.Task) string {
	if t.Source == "stabletoolbench" && t.Group != "" {
		return t.Group
	}
	if t.Collection != "" {
		return t.Collection
	}
	if t.Group != "" {
		return t.Group
	}
	return "tasks"
}

// runEpisode runs one episode and scores it. It returns nil when ctx
// ended before the episode finished.
func runEpisode(ctx context.Context, cfg *Config, examples []*toolenv.Task, it workItem, log *slog.Logger) *Episode {
	task := it.task
	e := newEpisode(cfg, task, it.run)
	seed := e.Seed
	start := time.Now()
	coll := cfg.Collections[task.Collection]
	sess, err := cfg.Env.Start(ctx, task)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		log.Warn("episode could not start", "task", task.ID, "run", it.run, "err", err)
		return errorEpisode(cfg, task, it.run, "environment: "+err.Error())
	}
	tools := map[string]*toolenv.Tool{}
	for _, t := range sess.Tools() {
		tools[t.Name] = t
	}
	ep := &agent.Episode{
		Task: task, Session: sess, Model: cfg.Model, ModelName: cfg.ModelName, Run: it.run, Seed: seed,
		Temperature: cfg.Temperature, MaxTokens: cfg.MaxTokens, Collection: coll, Examples: examples,
	}
	out := cfg.Agent.Run(ctx, ep)
	var state *endstate.Result
	if endstate.Stateful(task) && !out.Canceled && ctx.Err() == nil {
		// In the episode's own world, before the session releases it,
		// through the session.
		state = endstate.Evaluate(ctx, task, func(ctx context.Context, name string, args map[string]any) *toolenv.Result {
			return sess.Call(ctx, agent.Call{Name: name, Args: args})
		}, coll != nil && coll.Tool(endstate.InspectTool) != nil, nil)
	}
	_ = sess.Close(context.WithoutCancel(ctx))
	if out.Canceled || ctx.Err() != nil {
		return nil
	}
	out.Trajectory.Counts.Wall = time.Since(start)
	e.Outcome = out
	e.Score = score(task, tools, out, state)
	categorize(e, tools)
	if out.Trajectory.Error != "" {
		log.Warn("episode ended with an error", "task", task.ID, "run", it.run, "err", out.Trajectory.Error)
	}
	if cfg.Judge != nil && judgeable(e) {
		conv := e.Converted()
		for r := 0; r < cfg.JudgeRounds; r++ {
			j := *cfg.Judge
			j.Seed = seed + int64(r)
			if !cfg.NoSoPR {
				e.SoPR = append(e.SoPR, j.SoPR(ctx, task.Query, &conv.Answer))
			}
			if cfg.FAC {
				e.FAC = append(e.FAC, j.FAC(ctx, task.Query, conv.Answer.FinalAnswer))
			}
			if ctx.Err() != nil {
				return nil
			}
		}
	}
	return e
}

// newEpisode is the episode of run number run of task, before it runs.
func newEpisode(cfg *Config, task *toolenv.Task, run int) *Episode {
	return &Episode{
		TaskID: task.ID, Run: run, Agent: cfg.Agent.Name(), Model: cfg.ModelName, Split: Split(task),
		Collection: task.Collection, Source: task.Source, Seed: EpisodeSeed(cfg.Seed, task.ID, run), Query: task.Query, Gold: task.Gold,
	}
}

// errorEpisode is an episode that ended with an error before the agent
// could act.
func errorEpisode(cfg *Config, task *toolenv.Task, run int, msg string) *Episode {
	e := newEpisode(cfg, task, run)
	e.Outcome = &agent.Outcome{Trajectory: &toolenv.Trajectory{TaskID: task.ID, Agent: e.Agent, Model: e.Model, Run: run, Steps: []toolenv.Step{}, Error: msg}}
	var state *endstate.Result
	if endstate.Stateful(task) {
		state = endstate.Failed(msg)
	}
	e.Score = score(task, nil, e.Outcome, state)
	return e
}

// judgeable reports whether SoPR and FAC apply: agents that end with a
// final answer (not direct and oracle, which only produce calls).
func judgeable(e *Episode) bool {
	switch e.Agent {
	case "direct", "oracle":
		return false
	}
	return true
}
