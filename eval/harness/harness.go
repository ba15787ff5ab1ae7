package harness

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/eval/queue"
	"github.com/toolenv/toolenv/eval/report"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/configfile"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/internal/redact"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/store"
)

// Options are what a program gives an evaluation besides its
// configuration.
type Options struct {
	// Logger logs skipped task lines and failed episodes; nil discards.
	Logger *slog.Logger
	// Getenv looks up the variables the *KeyEnv fields name; nil means
	// os.Getenv.
	Getenv func(string) string
	// Progress shows a progress bar (or, off a terminal, progress lines);
	// nil shows none.
	Progress io.Writer
	// Command is the command line, recorded in run.json.
	Command []string
}

// Evaluation is a prepared evaluation: its tasks loaded, its environment
// open, its run.json written. Run runs it; Close releases it.
type Evaluation struct {
	// Info is what run.json records.
	Info *eval.RunInfo
	// Tasks are the tasks evaluated, in order.
	Tasks []*toolenv.Task
	// Journal is the episodes file.
	Journal string

	// QueueRun names the run in the queue (Config.Queue), if any.
	QueueRun string

	cfg        *Config
	run        eval.Config
	queue      *queue.Run
	queueStore store.Store
	problems   []string
	agent      agent.Agent
	progress   io.Writer
	closers    []io.Closer
}

// Prepare checks cfg, loads the tasks and opens their environment: the
// environment envCfg describes (with the task folders added) in-process,
// or the server at cfg.EnvURL. It writes run.json into cfg.Out. Problems
// with cfg are *toolenv.Error values with StatusInvalidArguments.
func Prepare(ctx context.Context, cfg *Config, envCfg *environment.Config, opts Options) (_ *Evaluation, err error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	ev := &Evaluation{cfg: cfg, progress: opts.Progress}
	defer func() {
		if err != nil {
			ev.Close()
		}
	}()
	sources := append(append([]string(nil), cfg.Tasks...), cfg.Skew.Env...)
	tools, err := skewTaskTools(&cfg.Skew, TaskTools)
	if err != nil {
		return nil, err
	}
	if len(sources) == 0 {
		return nil, invalid("--tasks is required: a collection folder (e.g. out/bird/slot) or StableToolBench query files")
	}
	if cfg.Out == "" {
		return nil, invalid("--out is required: the folder for the episodes and the reports")
	}
	a, agentOpts, err := NewAgent(cfg)
	if err != nil {
		return nil, err
	}
	ev.agent = a
	needModel := cfg.Agent != "oracle"
	if needModel && (cfg.Model.URL == "" || cfg.Model.Name == "") {
		return nil, invalid("--agent %s needs --model (an OpenAI-compatible endpoint) and --model-name", cfg.Agent)
	}
	if cfg.Queue.URL != "" && (cfg.Shard != "" || cfg.Resume) {
		return nil, invalid("--queue shares the run between workers: it does not go with --shard (a static split) or --resume (a worker that stopped rejoins with the same command)")
	}
	var shard eval.Shard
	if cfg.Shard != "" {
		if shard, err = eval.ParseShard(cfg.Shard); err != nil {
			return nil, invalid("--shard: %v", err)
		}
	}
	if cfg.Runs < 1 || cfg.Concurrency < 1 {
		return nil, invalid("--runs and --concurrency must be at least 1")
	}
	if cfg.Judge.FAC && (cfg.Agent == "direct" || cfg.Agent == "oracle") {
		return nil, invalid("--fac judges an agent's final answer, and --agent %s gives none: use react, cot or dfsdt, or leave --fac out", cfg.Agent)
	}
	// Every model is asked once before anything is written or the first
	// episode runs: a dead or wrong endpoint fails here, in seconds, not
	// after each episode's retries (a replay uses no network, and checks
	// nothing).
	if needModel && !cfg.Replay {
		if err := checkModels(ctx, cfg, getenv); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	taskFiles, sources := splitTaskFiles(sources)
	if len(taskFiles) > 0 && cfg.EnvURL != "" {
		return nil, invalid("--tasks %s: a tasks file runs in-process, with the environment's collections (e.g. --mcp-server); it does not go with --env-url", taskFiles[0])
	}
	collDirs, queries, err := splitTaskSources(sources)
	if err != nil {
		return nil, err
	}

	// The environment: in-process (the full pipeline over each
	// collection's backend) or a running server.
	var (
		lt      *loadedTasks
		runEnv  agent.Env
		envName = "in-process"
	)
	if cfg.EnvURL != "" {
		if lt, err = loadTasksOnly(collDirs, queries); err != nil {
			return nil, err
		}
		var colls []*toolenv.Collection
		for _, c := range lt.colls {
			colls = append(colls, c)
		}
		runEnv = agent.NewRemote(cfg.EnvURL, agent.RemoteOptions{TaskTools: tools, Collections: colls})
		envName = redact.URL(cfg.EnvURL)
	} else {
		ec := *envCfg
		ec.Collections = append(append([]string(nil), ec.Collections...), collDirs...)
		ec.ToolBench = append(append([]string(nil), ec.ToolBench...), queries...)
		env, err := environment.Open(ctx, &ec)
		if err != nil {
			return nil, err
		}
		ev.closers = append(ev.closers, env)
		lt = &loadedTasks{colls: map[string]*toolenv.Collection{}}
		var colls []*toolenv.Collection
		for _, c := range env.Collections() {
			lt.colls[c.Name] = c
			colls = append(colls, c)
			if !taskSource(c, collDirs, len(queries) > 0) {
				continue // served for its tools, not evaluated
			}
			for _, t := range env.Tasks[c.Name] {
				if t.Collection == "" {
					t.Collection = c.Name
				}
				lt.tasks = append(lt.tasks, t)
			}
		}
		if len(taskFiles) > 0 {
			brought := map[string]bool{}
			for _, t := range lt.tasks {
				brought[t.Collection] = true
			}
			ts, problems, err := readTaskFiles(taskFiles, lt.colls, brought)
			if err != nil {
				return nil, err
			}
			lt.tasks = append(lt.tasks, ts...)
			lt.problems = append(lt.problems, problems...)
		}
		for _, d := range collDirs {
			if _, problems, err := toolenv.ReadTasks(filepath.Join(d, toolenv.TasksFile)); err == nil {
				for _, p := range problems {
					lt.problems = append(lt.problems, p.Error())
				}
			}
		}
		runEnv = agent.NewLocal(env.Pipeline, colls, agent.LocalOptions{TaskTools: tools, StartSession: env.StartSession, EndSession: env.EndSession})
		env.WarmSessions() // MCP servers isolated per episode: instances ready for the first tasks
	}
	SortTasks(lt.tasks)
	tasks := filterTasks(lt.tasks, cfg)
	if len(tasks) == 0 {
		return nil, invalid("no tasks to evaluate in %s (check --tasks and the filters)", strings.Join(sources, ", "))
	}
	if cfg.Agent == "oracle" {
		var none []string
		for _, t := range tasks {
			if len(t.Gold) == 0 {
				none = append(none, t.ID)
			}
		}
		if len(none) > 0 {
			return nil, invalid("--agent oracle replays each task's gold call sequence, and %d of the %d task(s) have none (the first: %s): choose tasks that have one (toolenv build bird writes them; StableToolBench's queries have none), or another agent", len(none), len(tasks), none[0])
		}
	}
	for _, p := range lt.problems {
		log.Warn("task line skipped", "problem", p)
	}
	ev.Tasks, ev.problems = tasks, lt.problems

	// Records of every model and judge exchange, for --replay.
	records, err := OpenRecords(ctx, cfg.Records, cfg.Out, cfg.Replay, log)
	if err != nil {
		return nil, err
	}
	ev.closers = append(ev.closers, records)
	// One connection per concurrent episode stays open: the default
	// transport keeps only two idle connections per host.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 4 * cfg.Concurrency
	tr.MaxIdleConnsPerHost = 2 * cfg.Concurrency
	hc := &http.Client{Transport: tr}
	newClient := func(url, key, keyEnv string) *llm.Client {
		if key == "" && keyEnv != "" {
			key = getenv(keyEnv)
		}
		return llm.New(url, llm.Options{APIKey: key, HTTPClient: hc, Timeout: cfg.Model.Timeout, MaxRetries: Retries(cfg.Model.Retries), Recorder: records, Replay: cfg.Replay, Logger: log})
	}
	ev.run = eval.Config{
		Tasks: tasks, Collections: lt.colls, Env: runEnv, Agent: a, ModelName: cfg.Model.Name,
		Runs: cfg.Runs, Concurrency: cfg.Concurrency, Seed: cfg.Seed, MaxTokens: cfg.Model.MaxTokens,
		Out: cfg.Out, Resume: cfg.Resume, RetryErrors: cfg.RetryErrors, Shard: shard, Logger: log,
		StopAfterErrors: cmp.Or(cfg.StopAfterErrors, -1),
	}
	if needModel {
		ev.run.Model = newClient(cfg.Model.URL, cfg.Model.APIKey, cfg.Model.KeyEnv)
		ev.run.Temperature = llm.Float(cfg.Model.Temperature)
	}
	ev.Info = &eval.RunInfo{
		Agent: a.Name(), Model: cfg.Model.Name, ModelURL: redact.URL(cfg.Model.URL), Tasks: sources, TaskCount: len(tasks), Runs: cfg.Runs,
		Concurrency: cfg.Concurrency, Seed: cfg.Seed, Shard: shard, Temperature: ev.run.Temperature, MaxTokens: cfg.Model.MaxTokens,
		AgentOptions: agentOpts, Env: envName, Replay: cfg.Replay, Records: records.Path(), Skipped: lt.problems,
		Command: redactArgs(opts.Command), Version: buildinfo.Version(), Started: time.Now().UTC(),
		Config: recorded(cfg, envCfg), Planned: planned(tasks, shard, cfg),
	}
	ev.Info.Prompts = append(ev.Info.Prompts, agent.Prompts()...)
	if ju, jm, jk, key, ok := judgeOf(cfg); ok {
		j := &cfg.Judge
		ev.run.Judge = &judge.Judge{Model: newClient(ju, key, jk), ModelName: jm}
		ev.run.NoSoPR, ev.run.FAC, ev.run.JudgeRounds = j.NoSoPR, j.FAC, j.Rounds
		ev.Info.Judge = &eval.JudgeInfo{Model: jm, URL: redact.URL(ju), Rounds: max(j.Rounds, 1), SoPR: !j.NoSoPR, FAC: j.FAC}
		ev.Info.Prompts = append(ev.Info.Prompts, judge.Prompts()...)
	}
	ev.Journal = filepath.Join(cfg.Out, eval.JournalName(shard))
	if cfg.Queue.URL != "" {
		if err := ev.joinQueue(ctx, log); err != nil {
			return nil, err
		}
	}
	if err := eval.WriteRunInfo(cfg.Out, ev.Info); err != nil {
		return nil, err
	}
	return ev, nil
}

// planned is how many episodes the run is to have: its shard's tasks (a
// queued run's: all of them) × Runs.
func planned(tasks []*toolenv.Task, shard eval.Shard, cfg *Config) int {
	n := len(tasks)
	if shard.Count > 1 && cfg.Queue.URL == "" {
		n = 0
		for i := range tasks {
			if i%shard.Count == shard.Index {
				n++
			}
		}
	}
	return n * cfg.Runs
}

// judgeOf returns the judge's endpoint, model and key (each the model's
// when not given), and whether the run is judged at all.
func judgeOf(cfg *Config) (url, model, keyEnv, key string, ok bool) {
	j := &cfg.Judge
	if cfg.Agent == "oracle" || j.Off || cfg.Agent == "direct" || j.NoSoPR && !j.FAC {
		return "", "", "", "", false
	}
	url, model, keyEnv, key = cmp.Or(j.URL, cfg.Model.URL), cmp.Or(j.Model, cfg.Model.Name), j.KeyEnv, j.APIKey
	if keyEnv == "" && key == "" {
		keyEnv, key = cfg.Model.KeyEnv, cfg.Model.APIKey
	}
	return url, model, keyEnv, key, true
}

// checkModels asks the agent's model and the judge once each (llm.Preflight).
func checkModels(ctx context.Context, cfg *Config, getenv func(string) string) error {
	client := func(url, key, keyEnv string) *llm.Client {
		if key == "" && keyEnv != "" {
			key = getenv(keyEnv)
		}
		return llm.New(url, llm.Options{APIKey: key, Timeout: cfg.Model.Timeout})
	}
	eps := []llm.Endpoint{{Role: "--model", Client: client(cfg.Model.URL, cfg.Model.APIKey, cfg.Model.KeyEnv), Model: cfg.Model.Name}}
	if url, model, keyEnv, key, ok := judgeOf(cfg); ok && (url != cfg.Model.URL || model != cfg.Model.Name) {
		eps = append(eps, llm.Endpoint{Role: "the judge (--judge-url, --judge-model)", Client: client(url, key, keyEnv), Model: model})
	}
	return llm.Preflight(ctx, eps...)
}

// taskSource reports whether the tasks of c are evaluated: c was read
// from one of the task folders (compared as files: the same folder may
// be spelled two ways, in a --config file and in --tasks), or it is the
// ToolBench collection and query files were given. The environment's
// other collections are served, their tasks not run.
func taskSource(c *toolenv.Collection, dirs []string, queries bool) bool {
	if queries && c.Kind == "toolbench" {
		return true
	}
	if c.Dir == "" {
		return false
	}
	fc, err := os.Stat(c.Dir)
	if err != nil {
		return false
	}
	for _, d := range dirs {
		if fd, err := os.Stat(d); err == nil && os.SameFile(fc, fd) {
			return true
		}
	}
	return false
}

// joinQueue opens the run in the queue cfg.Queue names.
func (ev *Evaluation) joinQueue(ctx context.Context, log *slog.Logger) error {
	qc := &ev.cfg.Queue
	st, err := store.Open(ctx, qc.URL, store.Options{Logger: log, Migrations: queue.Migrations})
	if err != nil {
		var se *store.SchemaError
		if errors.As(err, &se) {
			return err
		}
		return fmt.Errorf("--queue: %w", err)
	}
	ev.closers = append(ev.closers, st)
	ev.queueStore = st
	fp, err := queue.Fingerprint(ev.fingerprint())
	if err != nil {
		return err
	}
	name := qc.Run
	if name == "" {
		name = "run-" + fp[:16]
	}
	info, err := json.Marshal(ev.Info)
	if err != nil {
		return err
	}
	run, err := queue.Open(ctx, st, queue.Spec{Name: name, Fingerprint: fp, Info: info}, queue.Options{Lease: qc.Lease, Attempts: qc.Attempts})
	if err != nil {
		return err
	}
	ev.queue, ev.QueueRun = run, name
	ev.run.Queue, ev.run.QueueWait = run, qc.Wait
	ev.Info.Queue = &eval.QueueInfo{Store: store.Redact(qc.URL), Run: name}
	ev.Journal = filepath.Join(ev.cfg.Out, "episodes-worker-*.jsonl")
	return nil
}

// fingerprint is what workers of one run must agree on: what it
// evaluates, not where its files or its model are.
func (ev *Evaluation) fingerprint() any {
	in := ev.Info
	tasks := make([]string, len(ev.Tasks))
	for i, t := range ev.Tasks {
		tasks[i] = t.Collection + "\x00" + t.ID
	}
	return map[string]any{
		"agent": in.Agent, "agent_options": in.AgentOptions, "model": in.Model, "seed": in.Seed, "runs": in.Runs,
		"temperature": in.Temperature, "max_tokens": in.MaxTokens, "judge": in.Judge, "tasks": tasks,
	}
}

// recorded is the configuration run.json and the summary record: the
// environment's (for in-process runs) and the evaluation's, credentials
// hidden, without where the files go and how the run was resumed or
// replayed (run.json says so in its own fields): a replay records the
// same configuration as the run it replays.
func recorded(c *Config, envCfg *environment.Config) any {
	cfg := *c
	cfg.Out, cfg.Records, cfg.Replay, cfg.Resume, cfg.RetryErrors, cfg.Shard = "", "", false, false, false, ""
	if cfg.EnvURL != "" || envCfg == nil {
		return &configfile.Object{Keys: []string{"eval"}, Values: map[string]any{"eval": configfile.Redacted(&cfg)}}
	}
	return configfile.Redacted(&File{Config: *envCfg, Eval: cfg})
}

// Agent returns the agent evaluated.
func (ev *Evaluation) Agent() agent.Agent { return ev.agent }

// Result is what an evaluation did.
type Result struct {
	// Run is eval.Run's result: the episodes, how many ran or were
	// resumed, whether it was interrupted.
	*eval.Result
	// Summary is the metrics written to summary.json.
	Summary *eval.Summary
}

// Run runs the episodes and writes run.json again, the summary and the
// reports. After an interrupt it still writes the reports of the
// episodes finished and returns them with ctx's error.
func (ev *Evaluation) Run(ctx context.Context) (*Result, error) {
	cfg, a := ev.cfg, ev.agent
	// The bar starts with the first finished episode, which tells the
	// total (resumed episodes count as done); its description shows the
	// completion rate so far when the tasks have gold answers.
	var (
		bar                 *progress.Bar
		scored, completions int
	)
	if ev.progress != nil {
		ev.run.Progress = func(done, total int, ep *eval.Episode) {
			if bar == nil {
				bar = progress.New(ev.progress, total, "eval "+a.Name())
				if done > 1 {
					bar.Add(done - 1)
				}
			}
			if ep.Score.HasAnswer {
				scored++
				if ep.Score.Completed {
					completions++
				}
				bar.Describe(progressLine(a.Name(), completions, scored))
			}
			bar.Add(1)
		}
	}
	if cfg.Resume && ev.progress != nil {
		ev.run.Resumed = func(found, toRun int) {
			fmt.Fprintf(ev.progress, "toolenv: --resume: %d finished episode(s) found in %s; %d left to run\n", found, cfg.Out, toRun)
		}
	}
	res, runErr := eval.Run(ctx, ev.run)
	if bar != nil {
		bar.Finish()
	}
	if res == nil {
		if errors.Is(runErr, eval.ErrOutExists) {
			return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Err: runErr}
		}
		return nil, runErr
	}
	info := ev.Info
	info.Finished, info.Ran, info.Resumed, info.Interrupted, info.Stopped = time.Now().UTC(), res.Ran, res.Skipped, res.Interrupted, res.Stopped
	if err := eval.WriteRunInfo(cfg.Out, info); err != nil {
		return nil, err
	}
	var problems []error
	for _, p := range ev.problems {
		problems = append(problems, errors.New(p))
	}
	episodes := res.Episodes
	if ev.queue != nil {
		// The reports are the whole run's as the queue holds it now (the
		// last worker to finish writes the complete one).
		snap, err := queue.Read(context.WithoutCancel(ctx), ev.queueStore, ev.QueueRun)
		if err != nil {
			return nil, err
		}
		episodes = snap.Episodes
		info.Queue.Status = &snap.Status
	}
	s, err := report.Write(cfg.Out, info, episodes, problems)
	if err != nil {
		return nil, err
	}
	if runErr == nil {
		runErr = allErrored(res.Episodes)
	}
	if res.Interrupted && errors.Is(runErr, context.Canceled) {
		// Said once, as what happened and what to do, rather than as
		// "context canceled".
		runErr = toolenv.Errorw(toolenv.StatusCanceled, "continue with the same command and --resume",
			"interrupted: %d episode(s) are saved in %s and in the reports", len(res.Episodes), cfg.Out)
	}
	return &Result{Result: res, Summary: s}, runErr
}

// allErrored returns an error when there were episodes and every one
// ended with an error (the model or the environment unreachable): then
// the run measured nothing, and a command that exits 0 would pass for a
// run whose scores are all zero. Its status is unavailable.
func allErrored(eps []*eval.Episode) error {
	if len(eps) == 0 {
		return nil
	}
	first := ""
	for _, ep := range eps {
		if ep.Outcome == nil || ep.Outcome.Trajectory == nil || ep.Outcome.Trajectory.Error == "" {
			return nil
		}
		if first == "" {
			first = ep.Outcome.Trajectory.Error
		}
	}
	return toolenv.Errorw(toolenv.StatusUnavailable,
		"nothing was measured: check that the model endpoint (--model) and the environment are reachable, then run again with --resume --retry-errors",
		"every one of the %d episodes ended with an error (the first: %s)", len(eps), first)
}

// Close releases the environment and the records.
func (ev *Evaluation) Close() error {
	var errs []error
	for i := len(ev.closers) - 1; i >= 0; i-- {
		errs = append(errs, ev.closers[i].Close())
	}
	ev.closers = nil
	return errors.Join(errs...)
}

// Retries turns a retry count into llm.Options.MaxRetries: at least one
// try, and none again for n <= 0.
func Retries(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// OpenRecords opens the records of an evaluation's model exchanges: path,
// else out/records.db. With replay they must exist already.
func OpenRecords(ctx context.Context, path, out string, replay bool, log *slog.Logger) (store.Store, error) {
	if path == "" {
		path = filepath.Join(out, "records.db")
	}
	if replay {
		if _, err := os.Stat(path); err != nil {
			return nil, invalid("--replay: no records at %s (run once without --replay, or pass --records)", path)
		}
	}
	records, err := store.Open(ctx, path, store.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("open the records: %w", err)
	}
	return records, nil
}

// invalid is a mistake in the configuration.
func invalid(format string, args ...any) error {
	return toolenv.Errorw(toolenv.StatusInvalidArguments, "", format, args...)
}

// Log is where one-line notes go (the Progress writer), or nowhere.
func (o Options) Log() io.Writer {
	if o.Progress == nil {
		return io.Discard
	}
	return o.Progress
}

// redactArgs is a command line as run records keep it: nil stays nil,
// secrets hidden (redact.Args).
func redactArgs(args []string) []string {
	if args == nil {
		return nil
	}
	return redact.Args(args)
}

// progressLine is the progress bar's description once episodes with a
// gold answer have finished: how many of those reached it, worded so
// that it cannot read as episodes finished ("completed 0/17" did).
func progressLine(agentName string, reached, scored int) string {
	return fmt.Sprintf("eval %s (gold answer reached in %d of %d scored)", agentName, reached, scored)
}
