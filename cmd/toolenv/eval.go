package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/eval/report"
	"github.com/toolenv/toolenv/eval/stb"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/toolbench"
)

// evalFlags are toolenv eval's own flags.
type evalFlags struct {
	tasks       []string
	agentName   string
	modelURL    string
	modelName   string
	keyEnv      string
	runs        int
	concurrency int
	out         string
	envURL      string
	shard       string
	resume      bool
	retryErrors bool
	replay      bool
	records     string
	seed        int64
	temperature float64
	maxTokens   int
	timeout     time.Duration
	retries     int
	taskIDs     []string
	groups      []string
	limit       int

	judgeURL    string
	judgeModel  string
	judgeKeyEnv string
	noSoPR      bool
	fac         bool
	judgeRounds int
	noJudge     bool

	budget     int
	maxSteps   int
	tries      int
	beam       int
	maxQueries int
	maxObs     int
	style      string
	native     bool
	examples   int

	skew evalSkewFlags // --env, --docs (drift_eval.go)
}

func newEvalCmd(e *env) *cobra.Command {
	var (
		cf *configFlags
		ef evalFlags
	)
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Evaluate an agent and a model on tasks, with the papers' metrics",
		Long: `Run an agent (direct, react, cot, dfsdt or oracle) with a model behind any
OpenAI-compatible endpoint over tasks, in toolenv (in-process by default, or a
running server with --env-url), and measure it: completion rate, intent and slot
P/R/F1 (NESTful scorer and position-aware), sequence match, set/order P/R/F1, BFCL
error categories, ReAct loop statistics, StableToolBench's SoPR and MirrorAPI's FAC.

--tasks is a toolenv collection folder (e.g. one flavor built by "toolenv build
bird") or StableToolBench query files (a file or a folder of them); repeat it to
evaluate several. Every finished episode is appended to DIR/episodes.jsonl at
once; Ctrl-C keeps them and --resume continues. Every model and judge request is
recorded in DIR/records.db: --replay re-runs the evaluation from the records with
no network. The reports are DIR/summary.json, DIR/report.md and DIR/report.html.`,
		Example: `  toolenv eval --tasks out/bird/slot --agent oracle --out runs/oracle-slot
  toolenv eval --tasks out/bird/rest --agent direct --model http://127.0.0.1:8000/v1 --model-name Qwen/Qwen2.5-7B-Instruct --out runs/qwen-rest
  toolenv eval --tasks out/bird/sel --agent react --model http://127.0.0.1:11434/v1 --model-name qwen2.5:7b --runs 3 --concurrency 8 --out runs/react-sel
  OPENAI_API_KEY=... toolenv eval --tasks ../shared/data/stabletoolbench/solvable_queries/test_instruction/G1_instruction.json \
      --agent dfsdt --model https://api.openai.com/v1 --model-name gpt-4o-mini --judge-model gpt-4o --fac --out runs/dfs-g1
  toolenv eval --tasks out/bird/rest --agent direct --model URL --model-name M --out runs/x --replay
  toolenv eval --tasks out/bird/slot --agent react --model URL --model-name M --shard 0/4 --out runs/r   # then: toolenv eval merge --out runs/r runs/r`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := cf.resolve(e)
			if err != nil {
				return err
			}
			return runEval(cmd.Context(), e, &cfg, &ef, os.Args)
		},
	}
	fs := cmd.Flags()
	registerEvalSkewFlags(fs, &ef.skew)
	fs.StringArrayVar(&ef.tasks, "tasks", nil, "tasks: a collection folder (collection.json, tools.json, tasks.jsonl) or StableToolBench query files (repeatable)")
	fs.StringVar(&ef.agentName, "agent", "react", "agent: direct, react, cot, dfsdt or oracle")
	fs.StringVar(&ef.modelURL, "model", "", "OpenAI-compatible endpoint of the model, e.g. http://127.0.0.1:8000/v1 (vLLM), http://127.0.0.1:11434/v1 (Ollama), https://api.openai.com/v1")
	fs.StringVar(&ef.modelName, "model-name", "", "model name the endpoint serves")
	fs.StringVar(&ef.keyEnv, "api-key-env", "OPENAI_API_KEY", "environment variable holding the model's API key (empty: none)")
	fs.IntVar(&ef.runs, "runs", 1, "runs of every task")
	fs.IntVar(&ef.concurrency, "concurrency", 4, "episodes run at once")
	fs.StringVar(&ef.out, "out", "", "output folder")
	fs.StringVar(&ef.envURL, "env-url", "", "run tools on a running toolenv server (e.g. http://127.0.0.1:8080) instead of in-process")
	fs.StringVar(&ef.shard, "shard", "", "run only shard i/n of the tasks (task k goes to shard k mod n); join shards with toolenv eval merge")
	fs.BoolVar(&ef.resume, "resume", false, "continue the run in --out, skipping finished episodes")
	fs.BoolVar(&ef.retryErrors, "retry-errors", false, "with --resume, run again the episodes that ended with an error (model or environment unreachable)")
	fs.BoolVar(&ef.replay, "replay", false, "serve every model and judge request from the records, with no network (a request never recorded is an error)")
	fs.StringVar(&ef.records, "records", "", "database of recorded model and judge requests (default DIR/records.db)")
	fs.Int64Var(&ef.seed, "seed", 1, "seed of the run: every episode's request seed and in-context examples derive from it")
	fs.Float64Var(&ef.temperature, "temperature", 0, "sampling temperature sent with every agent request")
	fs.IntVar(&ef.maxTokens, "max-tokens", 0, "completion token limit of every agent request (0: the server's)")
	fs.DurationVar(&ef.timeout, "model-timeout", 120*time.Second, "timeout of one model request")
	fs.IntVar(&ef.retries, "model-retries", 3, "retries of a model request that failed with a timeout, 429 or 5xx (with backoff)")
	fs.StringSliceVar(&ef.taskIDs, "task-id", nil, "evaluate only these task ids (comma-separated or repeated)")
	fs.StringSliceVar(&ef.groups, "group", nil, "evaluate only tasks of these groups (a database, a StableToolBench group)")
	fs.IntVar(&ef.limit, "limit", 0, "evaluate only the first N tasks (after the filters)")
	fs.StringVar(&ef.judgeURL, "judge-url", "", "endpoint of the SoPR/FAC judge (default: --model)")
	fs.StringVar(&ef.judgeModel, "judge-model", "", "judge model name (default: --model-name); judging applies to react, cot and dfsdt")
	fs.StringVar(&ef.judgeKeyEnv, "judge-api-key-env", "", "environment variable of the judge's API key (default: --api-key-env)")
	fs.BoolVar(&ef.noJudge, "no-judge", false, "do not judge final answers (no SoPR, no FAC)")
	fs.BoolVar(&ef.noSoPR, "no-sopr", false, "skip StableToolBench's Solvable Pass Rate")
	fs.BoolVar(&ef.fac, "fac", false, "also judge MirrorAPI's Final Answer Completeness (its judge is a fine-tuned model; see docs/eval.md)")
	fs.IntVar(&ef.judgeRounds, "judge-rounds", 1, "judgements of each answer (StableToolBench's --evaluate_times)")
	fs.IntVar(&ef.budget, "budget", 10, "react: think-act-observe turns")
	fs.IntVar(&ef.maxSteps, "max-steps", 12, "cot/dfsdt: ToolBench's single_chain_max_step (chain length in nodes)")
	fs.IntVar(&ef.tries, "tries", 1, "cot: chains tried (CoT@N)")
	fs.IntVar(&ef.beam, "beam", 2, "dfsdt: children per state (tree_beam_size)")
	fs.IntVar(&ef.maxQueries, "max-queries", 200, "dfsdt: model calls per task (max_query_count)")
	fs.IntVar(&ef.maxObs, "max-observation", 0, "characters of a tool's response shown to the model (0: 1024 for cot/dfsdt, 4096 for react)")
	fs.StringVar(&ef.style, "style", "", "direct: prompt style nestful or bfcl (default: nestful for SLOT/SEL, bfcl otherwise)")
	fs.BoolVar(&ef.native, "native-tools", false, "direct: offer the tools natively (tools field) instead of in the prompt")
	fs.IntVar(&ef.examples, "examples", 3, "direct, nestful style: in-context examples")
	cf = bindConfig(fs, bindEnv)
	cmd.AddCommand(newEvalMergeCmd(e), newEvalCompareCmd(e), newEvalReportCmd(e), newEvalSTBCmd(e))
	cmd.AddCommand(newEvalFidelityCmd(e))
	return cmd
}

// newAgent builds the agent the flags name.
func newAgent(ef *evalFlags) (agent.Agent, map[string]any, error) {
	switch ef.agentName {
	case "oracle":
		return agent.Oracle{}, nil, nil
	case "direct":
		if ef.style != "" && ef.style != agent.StyleNestful && ef.style != agent.StyleBFCL {
			return nil, nil, usagef("--style %q: want nestful or bfcl", ef.style)
		}
		ex := ef.examples
		if ex == 0 {
			ex = -1
		}
		return agent.Direct{Style: ef.style, NativeTools: ef.native, Examples: ex}, map[string]any{"style": ef.style, "native_tools": ef.native, "examples": ef.examples}, nil
	case "react":
		return agent.ReAct{Budget: ef.budget, MaxObservation: ef.maxObs}, map[string]any{"budget": ef.budget, "max_observation": ef.maxObs}, nil
	case "cot":
		return agent.CoT{MaxSteps: ef.maxSteps, Tries: ef.tries, MaxObservation: ef.maxObs}, map[string]any{"max_steps": ef.maxSteps, "tries": ef.tries, "max_observation": ef.maxObs}, nil
	case "dfsdt":
		return agent.DFSDT{MaxSteps: ef.maxSteps, Beam: ef.beam, MaxQueries: ef.maxQueries, MaxObservation: ef.maxObs},
			map[string]any{"max_steps": ef.maxSteps, "beam": ef.beam, "max_queries": ef.maxQueries, "max_observation": ef.maxObs}, nil
	}
	return nil, nil, usagef("--agent %q: want direct, react, cot, dfsdt or oracle", ef.agentName)
}

// taskTools narrows an NL2SQL task's tools to its starting table.
func taskTools(c *toolenv.Collection, t *toolenv.Task) ([]*toolenv.Tool, error) {
	if c.Backend.Type == sqltools.BackendType && t.Meta["columns"] != nil {
		return sqltools.TaskTools(c, t)
	}
	return agent.TaskTools(c, t), nil
}

// loadedTasks are the tasks of an evaluation with their collections.
type loadedTasks struct {
	colls    map[string]*toolenv.Collection
	tasks    []*toolenv.Task
	problems []string
}

// sortTasks orders tasks by collection, then by id (numerically when the
// ids end with numbers), so that runs, shards and seeds are stable.
func sortTasks(ts []*toolenv.Task) {
	sort.SliceStable(ts, func(i, j int) bool {
		if ts[i].Collection != ts[j].Collection {
			return ts[i].Collection < ts[j].Collection
		}
		return naturalLess(ts[i].ID, ts[j].ID)
	})
}

func naturalLess(a, b string) bool {
	ta, na := splitNum(a)
	tb, nb := splitNum(b)
	if ta != tb || na < 0 || nb < 0 {
		return a < b
	}
	return na < nb
}

func splitNum(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) || len(s)-i > 9 {
		return s, -1
	}
	n := 0
	for _, c := range s[i:] {
		n = n*10 + int(c-'0')
	}
	return s[:i], n
}

// splitTaskSources sorts --tasks into collection folders and
// StableToolBench query files.
func splitTaskSources(paths []string) (collections, queries []string, err error) {
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, usagef("--tasks %s: %v", p, err)
		}
		if st.IsDir() {
			if _, err := os.Stat(filepath.Join(p, toolenv.CollectionFile)); err == nil {
				collections = append(collections, p)
				continue
			}
		}
		queries = append(queries, p)
	}
	return collections, queries, nil
}

// loadTasksOnly reads tasks and collections without building backends
// (for --env-url, where a server runs the tools).
func loadTasksOnly(collDirs, queries []string) (*loadedTasks, error) {
	lt := &loadedTasks{colls: map[string]*toolenv.Collection{}}
	for _, d := range collDirs {
		c, err := toolenv.ReadCollection(d)
		if err != nil {
			return nil, err
		}
		lt.colls[c.Name] = c
		tasks, problems, err := toolenv.ReadTasks(filepath.Join(d, toolenv.TasksFile))
		if err != nil {
			return nil, err
		}
		for _, t := range tasks {
			if t.Collection == "" {
				t.Collection = c.Name
			}
		}
		lt.tasks = append(lt.tasks, tasks...)
		for _, p := range problems {
			lt.problems = append(lt.problems, p.Error())
		}
	}
	if len(queries) > 0 {
		src, err := toolbench.Load(queries...)
		if err != nil {
			return nil, err
		}
		c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
		lt.colls[c.Name] = c
		lt.tasks = append(lt.tasks, src.Tasks(c)...)
	}
	return lt, nil
}

func filterTasks(ts []*toolenv.Task, ef *evalFlags) []*toolenv.Task {
	ids := map[string]bool{}
	for _, id := range ef.taskIDs {
		ids[strings.TrimSpace(id)] = true
	}
	groups := map[string]bool{}
	for _, g := range ef.groups {
		groups[strings.TrimSpace(g)] = true
	}
	var out []*toolenv.Task
	for _, t := range ts {
		if len(ids) > 0 && !ids[t.ID] {
			continue
		}
		if len(groups) > 0 && !groups[t.Group] {
			continue
		}
		out = append(out, t)
		if ef.limit > 0 && len(out) == ef.limit {
			break
		}
	}
	return out
}

func runEval(ctx context.Context, e *env, envCfg *environment.Config, ef *evalFlags, argv []string) error {
	log := e.logger()
	ef.tasks = append(ef.tasks, ef.skew.env...)
	tools, err := skewTaskTools(&ef.skew, taskTools)
	if err != nil {
		return err
	}
	if len(ef.tasks) == 0 {
		return usagef("--tasks is required: a collection folder (e.g. out/bird/slot) or StableToolBench query files")
	}
	if ef.out == "" {
		return usagef("--out is required: the folder for the episodes and the reports")
	}
	a, agentOpts, err := newAgent(ef)
	if err != nil {
		return err
	}
	needModel := ef.agentName != "oracle"
	if needModel && (ef.modelURL == "" || ef.modelName == "") {
		return usagef("--agent %s needs --model (an OpenAI-compatible endpoint) and --model-name", ef.agentName)
	}
	var shard eval.Shard
	if ef.shard != "" {
		if shard, err = eval.ParseShard(ef.shard); err != nil {
			return usagef("--shard: %v", err)
		}
	}
	if ef.runs < 1 || ef.concurrency < 1 {
		return usagef("--runs and --concurrency must be at least 1")
	}
	if err := os.MkdirAll(ef.out, 0o755); err != nil {
		return err
	}
	collDirs, queries, err := splitTaskSources(ef.tasks)
	if err != nil {
		return err
	}

	// The environment: in-process (the full pipeline over each
	// collection's backend) or a running server.
	var (
		lt      *loadedTasks
		runEnv  agent.Env
		envName = "in-process"
	)
	if ef.envURL != "" {
		if lt, err = loadTasksOnly(collDirs, queries); err != nil {
			return err
		}
		var colls []*toolenv.Collection
		for _, c := range lt.colls {
			colls = append(colls, c)
		}
		runEnv = agent.NewRemote(ef.envURL, agent.RemoteOptions{TaskTools: tools, Collections: colls})
		envName = ef.envURL
	} else {
		envCfg.Collections = append(envCfg.Collections, collDirs...)
		envCfg.ToolBench = append(envCfg.ToolBench, queries...)
		envx, err := environment.Open(ctx, envCfg)
		if err != nil {
			return err
		}
		defer envx.Close()
		lt = &loadedTasks{colls: map[string]*toolenv.Collection{}}
		var colls []*toolenv.Collection
		for _, c := range envx.Collections() {
			lt.colls[c.Name] = c
			colls = append(colls, c)
			for _, t := range envx.Tasks[c.Name] {
				if t.Collection == "" {
					t.Collection = c.Name
				}
				lt.tasks = append(lt.tasks, t)
			}
		}
		for _, d := range collDirs {
			if _, problems, err := toolenv.ReadTasks(filepath.Join(d, toolenv.TasksFile)); err == nil {
				for _, p := range problems {
					lt.problems = append(lt.problems, p.Error())
				}
			}
		}
		runEnv = agent.NewLocal(envx.Pipeline, colls, agent.LocalOptions{TaskTools: tools})
	}
	sortTasks(lt.tasks)
	tasks := filterTasks(lt.tasks, ef)
	if len(tasks) == 0 {
		return usagef("no tasks to evaluate in %s (check --tasks and the filters)", strings.Join(ef.tasks, ", "))
	}
	for _, p := range lt.problems {
		log.Warn("task line skipped", "problem", p)
	}

	// Records of every model and judge exchange, for --replay.
	records, err := openRecords(ctx, ef.records, ef.out, ef.replay, log)
	if err != nil {
		return err
	}
	defer records.Close()
	// One connection per concurrent episode stays open: the default
	// transport keeps only two idle connections per host.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 4 * ef.concurrency
	tr.MaxIdleConnsPerHost = 2 * ef.concurrency
	hc := &http.Client{Transport: tr}
	newClient := func(url, keyEnv string) *llm.Client {
		key := ""
		if keyEnv != "" {
			key = e.getenv(keyEnv)
		}
		return llm.New(url, llm.Options{APIKey: key, HTTPClient: hc, Timeout: ef.timeout, MaxRetries: retries(ef.retries), Recorder: records, Replay: ef.replay, Logger: log})
	}
	cfg := eval.Config{
		Tasks: tasks, Collections: lt.colls, Env: runEnv, Agent: a, ModelName: ef.modelName,
		Runs: ef.runs, Concurrency: ef.concurrency, Seed: ef.seed, MaxTokens: ef.maxTokens,
		Out: ef.out, Resume: ef.resume, RetryErrors: ef.retryErrors, Shard: shard, Logger: log,
	}
	if needModel {
		cfg.Model = newClient(ef.modelURL, ef.keyEnv)
		cfg.Temperature = llm.Float(ef.temperature)
	}
	info := &eval.RunInfo{
		Agent: a.Name(), Model: ef.modelName, ModelURL: ef.modelURL, Tasks: ef.tasks, TaskCount: len(tasks), Runs: ef.runs,
		Concurrency: ef.concurrency, Seed: ef.seed, Shard: shard, Temperature: cfg.Temperature, MaxTokens: ef.maxTokens,
		AgentOptions: agentOpts, Env: envName, Replay: ef.replay, Records: records.Path(), Skipped: lt.problems,
		Command: argv, Version: buildinfo.Version(), Started: time.Now().UTC(),
	}
	if ef.envURL == "" {
		info.Config = envCfg.Redacted()
	}
	info.Prompts = append(info.Prompts, agent.Prompts()...)
	judging := needModel && !ef.noJudge && ef.agentName != "direct" && (!ef.noSoPR || ef.fac)
	if judging {
		ju, jm, jk := ef.judgeURL, ef.judgeModel, ef.judgeKeyEnv
		if ju == "" {
			ju = ef.modelURL
		}
		if jm == "" {
			jm = ef.modelName
		}
		if jk == "" {
			jk = ef.keyEnv
		}
		cfg.Judge = &judge.Judge{Model: newClient(ju, jk), ModelName: jm}
		cfg.NoSoPR, cfg.FAC, cfg.JudgeRounds = ef.noSoPR, ef.fac, ef.judgeRounds
		info.Judge = &eval.JudgeInfo{Model: jm, URL: ju, Rounds: max(ef.judgeRounds, 1), SoPR: !ef.noSoPR, FAC: ef.fac}
		info.Prompts = append(info.Prompts, judge.Prompts()...)
	}
	if err := eval.WriteRunInfo(ef.out, info); err != nil {
		return err
	}

	// The bar starts with the first finished episode, which tells the
	// total (resumed episodes count as done); its description shows the
	// completion rate so far when the tasks have gold answers.
	var (
		bar                 *progress.Bar
		scored, completions int
	)
	cfg.Progress = func(done, total int, ep *eval.Episode) {
		if bar == nil {
			bar = progress.New(e.stderr, total, "eval "+a.Name())
			if done > 1 {
				bar.Add(done - 1)
			}
		}
		if ep.Score.HasAnswer {
			scored++
			if ep.Score.Completed {
				completions++
			}
			bar.Describe(fmt.Sprintf("eval %s (completed %d/%d)", a.Name(), completions, scored))
		}
		bar.Add(1)
	}
	fmt.Fprintf(e.stderr, "toolenv: evaluating %s on %d task(s) × %d run(s), %d at a time, episodes in %s\n", a.Name(), len(tasks), ef.runs, ef.concurrency, filepath.Join(ef.out, eval.JournalName(shard)))
	res, runErr := eval.Run(ctx, cfg)
	if bar != nil {
		bar.Finish()
	}
	if res == nil {
		if errors.Is(runErr, eval.ErrOutExists) {
			return usageError{runErr}
		}
		return runErr
	}
	info.Finished, info.Ran, info.Resumed, info.Interrupted = time.Now().UTC(), res.Ran, res.Skipped, res.Interrupted
	if err := eval.WriteRunInfo(ef.out, info); err != nil {
		return err
	}
	var problems []error
	for _, p := range lt.problems {
		problems = append(problems, errors.New(p))
	}
	s, err := report.Write(ef.out, info, res.Episodes, problems)
	if err != nil {
		return err
	}
	printOverview(e, ef.out, info, s)
	if runErr != nil {
		if res.Interrupted {
			fmt.Fprintf(e.stderr, "toolenv: interrupted; %d episode(s) are saved. Continue with the same command and --resume.\n", len(res.Episodes))
		}
		return runErr
	}
	return nil
}

func retries(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// printOverview prints the overview table and where the reports are.
func printOverview(e *env, dir string, info *eval.RunInfo, s *eval.Summary) {
	md := report.Markdown(info, s)
	// The overview is the first table.
	if i := strings.Index(md, "## Overview"); i >= 0 {
		rest := md[i:]
		if j := strings.Index(rest[3:], "\n## "); j >= 0 {
			rest = rest[:j+3]
		}
		fmt.Fprintln(e.stdout, strings.TrimSpace(rest))
	}
	fmt.Fprintf(e.stdout, "\nreports: %s, %s, %s\n", filepath.Join(dir, "summary.json"), filepath.Join(dir, "report.md"), filepath.Join(dir, "report.html"))
}

func newEvalMergeCmd(e *env) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge --out DIR SHARD_DIR...",
		Short: "Join the shards of an evaluation (or several evaluations) and write the reports",
		Example: `  toolenv eval merge --out runs/all runs/shard0 runs/shard1
  toolenv eval merge --out runs/r runs/r   # shards written into the same folder`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("--out is required")
			}
			eps, problems, err := eval.Merge(out, args)
			if err != nil {
				return err
			}
			info, _ := eval.ReadRunInfo(args[0])
			if info != nil {
				info.Shard = eval.Shard{}
				tasks := map[string]bool{}
				for _, ep := range eps {
					tasks[ep.TaskID] = true
				}
				info.TaskCount = len(tasks)
				if err := eval.WriteRunInfo(out, info); err != nil {
					return err
				}
			}
			s, err := report.Write(out, info, eps, problems)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "toolenv: merged %d episode(s) from %d folder(s)\n", len(eps), len(args))
			printOverview(e, out, info, s)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "folder for the merged episodes and reports")
	return cmd
}

func newEvalReportCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR",
		Short: "Write the reports of an evaluation folder again from its episodes",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			eps, problems, err := eval.ReadJournals(args[0])
			if err != nil {
				return err
			}
			if len(eps) == 0 {
				return usagef("%s holds no episodes", args[0])
			}
			info, _ := eval.ReadRunInfo(args[0])
			s, err := report.Write(args[0], info, eps, problems)
			if err != nil {
				return err
			}
			printOverview(e, args[0], info, s)
			return nil
		},
	}
}

func newEvalCompareCmd(e *env) *cobra.Command {
	var htmlOut string
	cmd := &cobra.Command{
		Use:     "compare DIR DIR...",
		Short:   "Put several evaluations side by side (Markdown on stdout, optionally HTML)",
		Example: `  toolenv eval compare runs/qwen-rest runs/llama-rest --html compare.html`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var evs []report.Evaluation
			for _, d := range args {
				eps, _, err := eval.ReadJournals(d)
				if err != nil {
					return err
				}
				if len(eps) == 0 {
					return usagef("%s holds no episodes", d)
				}
				info, _ := eval.ReadRunInfo(d)
				evs = append(evs, report.Evaluation{Name: filepath.Base(filepath.Clean(d)), Info: info, Summary: eval.Summarize(eps)})
			}
			fmt.Fprint(e.stdout, report.CompareMarkdown(evs))
			if htmlOut != "" {
				fh, err := os.Create(htmlOut)
				if err != nil {
					return err
				}
				defer fh.Close()
				if err := report.CompareHTML(fh, evs); err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "toolenv: wrote %s\n", htmlOut)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&htmlOut, "html", "", "also write the comparison as a self-contained HTML page")
	return cmd
}

func newEvalSTBCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stb",
		Short: "StableToolBench formats: convert raw answers, compute SoPR from recorded labels",
	}
	var method, out string
	convert := &cobra.Command{
		Use:     "convert ANSWER_DIR",
		Short:   "Convert raw answers (answer/<model>/<group>/) to the converted format, as convert_to_answer_format.py",
		Example: `  toolenv eval stb convert ../shared/data/stabletoolbench/data_example/answer/virtual_chatgpt_dfs/G1_instruction --method DFS_woFilter_w2 --out G1_instruction.json`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if method == "" || out == "" {
				return usagef("--method (e.g. CoT@1, DFS_woFilter_w2) and --out are required")
			}
			files, problems, err := stb.ReadRawAnswers(args[0], method)
			if err != nil {
				return err
			}
			for _, p := range problems {
				e.logger().Warn("answer skipped", "err", p)
			}
			cf := &stb.ConvertedFile{Entries: map[string]*stb.Converted{}}
			for _, fl := range files {
				c, err := stb.Convert(method, fl.Answer)
				if err != nil {
					e.logger().Warn("answer not converted", "file", fl.Path, "err", err)
					continue
				}
				cf.IDs = append(cf.IDs, fl.QueryID)
				cf.Entries[fl.QueryID] = c
			}
			if err := stb.WriteConverted(out, cf); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Converted %d answers\n", len(cf.IDs))
			return nil
		},
	}
	convert.Flags().StringVar(&method, "method", "", "the method in the answer file names (CoT@1, DFS_woFilter_w2)")
	convert.Flags().StringVar(&out, "out", "", "converted answers file to write")
	var times int
	passrate := &cobra.Command{
		Use:     "passrate RESULTS.json...",
		Short:   "Compute the Solvable Pass Rate from pass_rate_results files, as eval_pass_rate.py prints it",
		Example: `  toolenv eval stb passrate ../shared/data/stabletoolbench/data_example/pass_rate_results/virtual_chatgpt_cot/G1_instruction_virtual_chatgpt_cot.json --evaluate-times 3`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, p := range args {
				f, err := stb.ReadPassRate(p)
				if err != nil {
					return err
				}
				r, problems := stb.SolvePassRate(f, times)
				for _, pr := range problems {
					e.logger().Warn("label", "problem", pr)
				}
				if len(r.PerRound) == 0 {
					return fmt.Errorf("%s: %w: its %d queries have no label in any round (pass --evaluate-times N to score N rounds anyway)", p, stb.ErrNoLabels, r.Tasks)
				}
				fmt.Fprintf(e.stdout, "%s: %d queries. %s\n", filepath.Base(p), r.Tasks, stb.FormatSolveRate(r))
			}
			return nil
		},
	}
	passrate.Flags().IntVar(&times, "evaluate-times", 0, "eval_pass_rate.py's --evaluate_times (0: the rounds recorded)")
	cmd.AddCommand(convert, passrate)
	return cmd
}

// openRecords opens the records of an evaluation's model exchanges: path,
// else out/records.db. With replay they must exist already.
func openRecords(ctx context.Context, path, out string, replay bool, log *slog.Logger) (store.Store, error) {
	if path == "" {
		path = filepath.Join(out, "records.db")
	}
	if replay {
		if _, err := os.Stat(path); err != nil {
			return nil, usagef("--replay: no records at %s (run once without --replay, or pass --records)", path)
		}
	}
	records, err := store.Open(ctx, path, store.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("open the records: %w", err)
	}
	return records, nil
}
