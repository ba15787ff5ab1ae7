package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/redact"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/mirror/sqlstore"
	"github.com/toolenv/toolenv/store"
)

// mirrorFlags are the flags every "toolenv mirror" command shares: where
// the dataset lives, which APIs it mirrors, how they are reached and the
// model behind the model-facing stages.
type mirrorFlags struct {
	out         string
	store       string
	dataset     string
	collections []string
	toolbench   []string
	openapi     []string

	upstreamURL     string
	upstreamKeyEnv  string
	upstreamDirect  bool
	upstreamTimeout time.Duration
	baseURL         string
	maxResultBytes  int

	llmURL       string
	llmModel     string
	llmKeyEnv    string
	llmTimeout   time.Duration
	judgeModel   string
	explainModel string
	replay       bool

	seed int64
	opts mirror.RunOptions
}

func (f *mirrorFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.out, "out", "", "the dataset's folder: its store (mirror.db), report and exported files (data/)")
	fs.StringVar(&f.store, "store", "", "the store: an SQLite file or a postgres:// URL (a toolenv store; the mirror adds its tables); default OUT/mirror.db")
	fs.StringVar(&f.dataset, "dataset", "mirror", "the dataset's name within the store")
	fs.StringArrayVar(&f.collections, "collection", nil, "a collection folder to mirror, e.g. a built NL2SQL REST flavor; NAME=DIR renames it (repeatable)")
	fs.StringArrayVar(&f.toolbench, "toolbench", nil, "ToolBench docs to mirror (a StableToolBench query file, a folder of them, or a tools tree; repeatable)")
	fs.StringArrayVar(&f.openapi, "openapi", nil, "an OpenAPI document to mirror; NAME=FILE names the collection (repeatable)")
	fs.StringVar(&f.upstreamURL, "upstream-url", "", "StableToolBench/RapidAPI proxy URL that answers documented (virtual) APIs")
	fs.StringVar(&f.upstreamKeyEnv, "upstream-key-env", "TOOLBENCH_KEY", "environment variable holding the proxy's toolbench_key")
	fs.BoolVar(&f.upstreamDirect, "upstream-direct", false, "call each documented API at its own URL (its binding's base URL)")
	fs.DurationVar(&f.upstreamTimeout, "upstream-timeout", 15*time.Second, "timeout of one upstream request")
	fs.StringVar(&f.baseURL, "base-url", "", "call every documented API at this base URL instead (e.g. a running \"toolenv serve\"); implies --upstream-direct")
	fs.IntVar(&f.maxResultBytes, "max-result-bytes", 4<<20, "answers larger than this are recorded as too large")
	fs.StringVar(&f.llmURL, "llm-url", "", "OpenAI-compatible endpoint of the model that writes requests, checks documentation, synthesizes and explains; empty: the schema-driven sampler, and no model stages")
	fs.StringVar(&f.llmModel, "llm-model", "", "model name at --llm-url")
	fs.StringVar(&f.llmKeyEnv, "llm-key-env", "OPENAI_API_KEY", "environment variable holding the model's API key")
	fs.DurationVar(&f.llmTimeout, "llm-timeout", 120*time.Second, "timeout of one model request")
	fs.StringVar(&f.judgeModel, "judge-model", "", "model name for the documentation check (default --llm-model; the paper used gpt-4o)")
	fs.StringVar(&f.explainModel, "explain-model", "", "model name for rationales (default --llm-model; the paper used o1-preview)")
	fs.BoolVar(&f.replay, "replay", false, "answer every model request from the store's records, with no network (a request never made before is an error)")
	fs.Int64Var(&f.seed, "seed", 1, "seed of every seeded choice (sampler, failures kept, split, rationale sample, export order)")

	o := &f.opts
	fs.IntVar(&o.Generate.PerAPI, "per-api", 200, "distinct requests per API (the paper's 200)")
	fs.IntVar(&o.Generate.Invalid, "invalid", 0, "deliberately invalid requests per API from the sampler (default per-api/10; negative: none)")
	fs.BoolVar(&o.Generate.Sampler, "sampler", false, "write requests with the schema-driven sampler even when a model is set")
	fs.BoolVar(&o.HarvestRound, "harvest", true, "sampler: a second round of requests with values the first round's responses held")
	fs.IntVar(&o.Generate.Workers, "gen-workers", 4, "APIs whose requests a model writes at once")
	fs.IntVar(&o.Collect.Workers, "workers", 32, "calls in flight at once")
	fs.IntVar(&o.Collect.Attempts, "attempts", 3, "attempts of a call that failed for a passing reason (the paper's 3)")
	fs.Float64Var(&o.Collect.Rate, "rate", 0, "most calls per second to one API (0: no limit)")
	fs.IntVar(&o.Collect.Burst, "burst", 1, "calls one API may get at once under --rate")
	fs.IntVar(&o.Collect.BreakAfter, "break-after", 5, "connection failures in a row that open an API's circuit breaker (its requests wait for a later run)")
	fs.DurationVar(&o.Collect.BreakFor, "break-for", 30*time.Second, "how long an open breaker stays open")
	fs.DurationVar(&o.Collect.CallTimeout, "call-timeout", 30*time.Second, "timeout of one call attempt")
	fs.IntVar(&o.Collect.Limit, "limit", 0, "collect at most this many pairs in this run (0: all)")
	fs.IntVar(&o.Filter.KeepFailures, "keep-failures", 10000, "parameter-related failures kept (the paper's ~10,000), spread over the APIs")
	fs.BoolVar(&o.Filter.NoDocCheck, "no-doc-check", false, "skip the documentation-following check (Table 8)")
	fs.BoolVar(&o.Filter.DocUnparsedDrop, "doc-unparsed-drop", false, "drop pairs whose documentation check gave no readable verdict")
	fs.IntVar(&o.Filter.Workers, "llm-workers", 4, "model requests in flight at once")
	fs.IntVar(&o.Synth.Below, "synth-below", 20, "APIs with fewer kept pairs are long-tail and get synthesized pairs")
	fs.IntVar(&o.Synth.Target, "synth-target", 0, "kept pairs synthesis tops a long-tail API up to (default --synth-below)")
	fs.IntVar(&o.Synth.Examples, "synth-examples", 10, "real examples per synthesis request (the paper's 10)")
	fs.IntVar(&o.Split.OODSuccess, "ood-success", 200, "successful pairs of held-out APIs in the OOD test set")
	fs.IntVar(&o.Split.OODFailure, "ood-failure", 100, "failed pairs of held-out APIs in the OOD failure set")
	fs.IntVar(&o.Split.IDSize, "id-size", 100, "successful pairs in each ID test set (high, medium, low)")
	fs.IntVar(&o.Explain.Success, "explain-success", 43597, "successful training pairs sampled for rationales (the paper's 43,597)")
	fs.IntVar(&o.Explain.Failure, "explain-failure", 2000, "failed training pairs sampled for rationales (the paper's 2,000)")
	fs.IntVar(&o.Explain.MaxTokens, "max-tokens", 2560, "length filter on a CoT sample's output, in approximate tokens (the paper's 2,560)")
	fs.BoolVar(&o.Export.NoCoT, "no-cot", false, "export SFT samples only")
}

// seeds spreads --seed over the stages.
func (f *mirrorFlags) seeds() {
	o := &f.opts
	o.Generate.Seed, o.Filter.Seed, o.Synth.Seed, o.Split.Seed, o.Explain.Seed, o.Export.Seed = f.seed, f.seed, f.seed, f.seed, f.seed, f.seed
	o.Synth.Workers, o.Explain.Workers = o.Filter.Workers, o.Filter.Workers
}

// openMirror loads the collections, builds the call path and opens the
// store and the model: the Engine every mirror command runs.
func openMirror(ctx context.Context, f *mirrorFlags, e *env) (*mirror.Engine, func(), error) {
	if f.out == "" {
		return nil, nil, usagef("--out is required: the dataset's folder")
	}
	if f.llmURL != "" && f.llmModel == "" || f.replay && f.llmModel == "" {
		return nil, nil, usagef("--llm-url and --replay need --llm-model (the model name the endpoint serves)")
	}
	f.seeds()
	log := e.logger()
	src, err := mirror.OpenSources(ctx, mirror.SourceConfig{
		Collections: f.collections, ToolBench: f.toolbench, OpenAPI: f.openapi,
		UpstreamURL: f.upstreamURL, ToolbenchKey: e.getenv(f.upstreamKeyEnv), Direct: f.upstreamDirect, BaseURL: f.baseURL,
		Timeout: f.upstreamTimeout, MaxResultBytes: f.maxResultBytes, Logger: log,
	})
	if err != nil {
		return nil, nil, err
	}
	path := f.store
	if path == "" {
		path = filepath.Join(f.out, "mirror.db")
	}
	st, err := sqlstore.Open(ctx, path, store.Options{Logger: log})
	if err != nil {
		src.Close()
		return nil, nil, err
	}
	cleanup := func() { st.Close(); src.Close() }
	eng := &mirror.Engine{
		Store: st, Dataset: f.dataset, Tools: src.Tools, Tasks: src.Tasks, Collections: src.Collections, Invoker: src.Invoker,
		Logger: log, Progress: e.stderr,
	}
	if f.llmURL != "" || f.replay {
		base := f.llmURL
		if base == "" {
			base = "http://replay.invalid/v1"
		}
		eng.Model = llm.New(base, llm.Options{APIKey: e.getenv(f.llmKeyEnv), Timeout: f.llmTimeout, Logger: log, Recorder: st, Reuse: true, Replay: f.replay})
		eng.ModelName, eng.JudgeModel, eng.ExplainModel = f.llmModel, f.judgeModel, f.explainModel
	}
	f.opts.Export.Out = filepath.Join(f.out, "data")
	f.opts.Export.Card = mirror.CardInfo{Name: f.dataset, Sources: src.Described, Model: f.llmModel,
		Seeds:   map[string]int64{"seed (sampler, failures kept, split, rationale sample, export order)": f.seed},
		Toolenv: buildinfo.Provenance(nil, f.config(eng))}
	return eng, cleanup, nil
}

// config is the effective configuration the dataset card records: the
// sources' settings and every stage's, without the paths, the replay
// switch or the model's URL, which differ between a run and its replay.
func (f *mirrorFlags) config(eng *mirror.Engine) map[string]any {
	cfg := map[string]any{
		"dataset": f.dataset,
		"sources": map[string]any{"collections": f.collections, "toolbench": f.toolbench, "openapi": f.openapi,
			"upstream_url": redact.URL(f.upstreamURL), "upstream_direct": f.upstreamDirect, "base_url": redact.URL(f.baseURL),
			"upstream_timeout": f.upstreamTimeout.String(), "max_result_bytes": f.maxResultBytes},
		"stages": f.opts.Config(),
	}
	if eng.Model != nil {
		judge, explain := cmp.Or(f.judgeModel, f.llmModel), cmp.Or(f.explainModel, f.llmModel)
		cfg["models"] = map[string]any{"model": f.llmModel, "judge_model": judge, "explain_model": explain, "timeout": f.llmTimeout.String()}
	}
	return cfg
}

func newMirrorCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mirror",
		Short: "Make MirrorAPI training data and MirrorAPI-Bench from real API calls",
		Long: `MirrorAPI's data engine: write requests for every API of a collection, call the
real API for each through toolenv's own call path, filter the answers with the
MirrorAPI paper's Appendix D rules (and its documentation check), synthesize more
for long-tail APIs, split off MirrorAPI-Bench (OOD and ID high/medium/low), ask
for chain-of-thought rationales, and export SFT and CoT fine-tuning data with a
dataset card. Every stage resumes where an interrupt or a crash left it; every
model request is recorded in the store, so --replay runs again with no network.

"toolenv mirror run" runs every stage; the other commands run one each. Without
--llm-url the schema-driven sampler writes the requests and the model stages
(documentation check, synthesis, rationales) are skipped. See docs/mirror.md.`,
	}
	cmd.AddCommand(newMirrorRunCmd(e))
	for _, stage := range mirror.Stages {
		cmd.AddCommand(newMirrorStageCmd(e, stage))
	}
	cmd.AddCommand(newMirrorReportCmd(e), newMirrorCacheSetCmd(e), newMirrorFACCmd(e), newMirrorCompareCmd(e))
	return cmd
}

func newMirrorRunCmd(e *env) *cobra.Command {
	var f mirrorFlags
	cmd := &cobra.Command{
		Use:   "run --collection DIR --out DIR",
		Short: "Run every stage: generate, collect, filter, synthesize, split, explain, export",
		Example: `  toolenv build bird --data ../shared/data/bird --out out/bird
  toolenv build bird --data ../shared/data/spider-de --out out/spider-de
  toolenv mirror run --collection out/bird/rest --collection spider-rest=out/spider-de/rest --out out/mirror
  toolenv mirror run --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction \
      --upstream-url http://rapidapi-proxy:8080/rapidapi --llm-url https://api.openai.com/v1 --llm-model gpt-4o --out out/mirror-stb
  toolenv mirror run ... --replay     # the same run again from the records, no network`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMirror(cmd.Context(), &f, e, nil)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func newMirrorStageCmd(e *env, stage string) *cobra.Command {
	var f mirrorFlags
	short := map[string]string{
		mirror.StageGenerate:   "Write requests for every API (the model's two stages, or the schema-driven sampler)",
		mirror.StageCollect:    "Call the real API for every request that has no answer yet",
		mirror.StageFilter:     "Keep the answers Appendix D's rules and the documentation check accept",
		mirror.StageSynthesize: "Ask the model for more pairs of long-tail APIs",
		mirror.StageSplit:      "Split off MirrorAPI-Bench: OOD success/failure and ID high/medium/low",
		mirror.StageExplain:    "Ask the model for rationales of a sample of training pairs (Table 9)",
		mirror.StageExport:     "Write SFT and CoT training data, the benchmark files and the dataset card",
	}[stage]
	cmd := &cobra.Command{
		Use:   stage + " --collection DIR --out DIR",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMirror(cmd.Context(), &f, e, []string{stage})
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func newMirrorReportCmd(e *env) *cobra.Command {
	var f mirrorFlags
	cmd := &cobra.Command{
		Use:   "report --collection DIR --out DIR",
		Short: "Write the dataset's report (funnel, losses per rule, splits, per category) again",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMirror(cmd.Context(), &f, e, []string{})
		},
	}
	f.register(cmd.Flags())
	return cmd
}

// runMirror runs the stages only names (nil: all) and writes the report.
func runMirror(ctx context.Context, f *mirrorFlags, e *env, only []string) error {
	eng, cleanup, err := openMirror(ctx, f, e)
	if err != nil {
		return err
	}
	defer cleanup()
	f.opts.Only = only
	if only != nil && !slices.Contains(only, mirror.StageExport) {
		f.opts.Export.Out = ""
	}
	start := time.Now()
	rep, err := eng.Run(ctx, f.opts)
	if rep != nil && rep.Summary != nil {
		rep.Settings = map[string]any{"per_api": f.opts.Generate.PerAPI, "seed": f.seed, "workers": f.opts.Collect.Workers,
			"keep_failures": f.opts.Filter.KeepFailures, "model": f.llmModel, "replay": f.replay, "elapsed": time.Since(start).Round(time.Millisecond).String()}
		if werr := mirror.WriteReport(f.out, rep); werr != nil && err == nil {
			err = werr
		}
		fmt.Fprint(e.stdout, mirror.FunnelText(rep.Summary))
		fmt.Fprintf(e.stdout, "report: %s (%s)\n", filepath.Join(f.out, "report.md"), time.Since(start).Round(time.Millisecond))
	}
	if errors.Is(err, mirror.ErrInterrupted) {
		return &toolenv.Error{Status: toolenv.StatusCanceled, Message: "mirror", Err: err}
	}
	return err
}

func newMirrorCacheSetCmd(e *env) *cobra.Command {
	var (
		f         mirrorFlags
		storePath string
		test      int
	)
	cmd := &cobra.Command{
		Use:   "cache-set --from STORE --toolbench DOCS --out DIR",
		Short: "Write the cache-model data (MirrorAPI-Cache, §4.4) from the real answers of a toolenv store",
		Long: `Turn the real answers a toolenv store holds (a StableToolBench cache imported with
"toolenv cache import", or answers recorded from the upstream) into SFT samples with
the exact Table 10 system prompt, holding out --test of them (the paper's 200) by a
seeded hash. The sources (--toolbench, --collection, --openapi) give each entry its
documentation; entries of other tools, and answers a simulator made, are counted and
skipped. Writes OUT/train.openai.jsonl, OUT/train.sharegpt.jsonl, OUT/test.jsonl
(for "toolenv eval fidelity --pairs"), OUT/test.messages.jsonl and OUT/README.md.`,
		Example: `  toolenv cache import ./tool_response_cache --toolbench DOCS --store stb.db
  toolenv mirror cache-set --from stb.db --toolbench DOCS --out out/cache-model`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if storePath == "" || f.out == "" {
				return usagef("--from (a toolenv store) and --out are required")
			}
			if _, err := os.Stat(storePath); err != nil {
				return usagef("--from %s: %v", storePath, err)
			}
			src, err := mirror.OpenSources(ctx, mirror.SourceConfig{Collections: f.collections, ToolBench: f.toolbench, OpenAPI: f.openapi, DocsOnly: true, Logger: e.logger()})
			if err != nil {
				return err
			}
			defer src.Close()
			st, err := store.Open(ctx, storePath, store.Options{Logger: e.logger()})
			if err != nil {
				return err
			}
			defer st.Close()
			cs, err := mirror.CacheSet(ctx, st, src.Tools, mirror.CacheSetOptions{Out: f.out, Test: test, Seed: f.seed, Progress: e.stderr})
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "cache set: %d entries read, %d training samples, %d held out; skipped %v\nwritten to %s\n", cs.Entries, cs.Train, cs.Test, cs.Skipped, f.out)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&storePath, "from", "", "the toolenv store whose cache to use")
	fs.StringVar(&f.out, "out", "", "the folder to write")
	fs.StringArrayVar(&f.collections, "collection", nil, "a collection folder whose tools the entries are of; NAME=DIR renames it (repeatable)")
	fs.StringArrayVar(&f.toolbench, "toolbench", nil, "ToolBench docs whose APIs the entries are of (repeatable)")
	fs.StringArrayVar(&f.openapi, "openapi", nil, "an OpenAPI document whose operations the entries are of (repeatable)")
	fs.IntVar(&test, "test", 200, "entries held out as the test set (the paper's 200)")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the held-out choice")
	return cmd
}

func newMirrorFACCmd(e *env) *cobra.Command {
	var (
		runs                     []string
		out                      string
		llmURL, llmModel, keyEnv string
		replay                   bool
		records                  string
	)
	cmd := &cobra.Command{
		Use:   "fac --runs DIR --out DIR",
		Short: "Write FAC annotation files (Table 13's prompt) from evaluation episodes",
		Long: `Write the final answers of "toolenv eval" runs for Final Answer Completeness
annotation (the MirrorAPI paper's §4.2): OUT/fac.jsonl holds each episode's query
and answer with the FAC scoring prompt of Table 13, ready to send to a model;
OUT/fac.csv is the same for human annotators. With --llm-url and --llm-model a
model annotates every episode (OUT/fac.labels.jsonl); its requests are recorded
(--records, default OUT/records.db) so --replay annotates again with no network.`,
		Example: `  toolenv mirror fac --runs runs/gpt4o-cot --runs runs/gpt4o-dfs --out out/fac
  toolenv mirror fac --runs runs/gpt4o-cot --out out/fac --llm-url https://api.openai.com/v1 --llm-model gpt-4-turbo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if len(runs) == 0 || out == "" {
				return usagef("--runs (an eval output folder, repeatable) and --out are required")
			}
			var eps []*eval.Episode
			for _, dir := range runs {
				es, problems, err := eval.ReadJournals(dir)
				if err != nil {
					return fmt.Errorf("--runs %s: %w", dir, err)
				}
				for _, p := range problems {
					e.logger().Warn("episode skipped", "err", p)
				}
				if len(es) == 0 {
					return usagef("--runs %s holds no episodes (episodes*.jsonl)", dir)
				}
				eps = append(eps, es...)
			}
			opts := mirror.FACOptions{Out: out, Progress: e.stderr}
			if llmURL != "" || replay {
				if llmModel == "" {
					return usagef("--llm-url and --replay need --llm-model")
				}
				if records == "" {
					records = filepath.Join(out, "records.db")
				}
				rec, err := sqlstore.OpenSQLite(ctx, records, store.Options{Logger: e.logger()})
				if err != nil {
					return err
				}
				defer rec.Close()
				base := llmURL
				if base == "" {
					base = "http://replay.invalid/v1"
				}
				client := llm.New(base, llm.Options{APIKey: e.getenv(keyEnv), Recorder: rec, Reuse: true, Replay: replay, Logger: e.logger()})
				opts.Judge = &judge.Judge{Model: client, ModelName: llmModel}
			}
			st, err := mirror.FACFiles(ctx, eps, opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "FAC files: %d episodes, %d with a final answer; labels %v\nwritten to %s\n", st.Episodes, st.Written, st.Labels, out)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&runs, "runs", nil, "an eval output folder (its episodes*.jsonl; repeatable)")
	fs.StringVar(&out, "out", "", "the folder to write")
	fs.StringVar(&llmURL, "llm-url", "", "OpenAI-compatible endpoint of a model to annotate with")
	fs.StringVar(&llmModel, "llm-model", "", "the annotating model (the paper used gpt-4o, gpt-4o-mini and gpt-4-turbo)")
	fs.StringVar(&keyEnv, "llm-key-env", "OPENAI_API_KEY", "environment variable holding the model's API key")
	fs.BoolVar(&replay, "replay", false, "annotate from the records, with no network")
	fs.StringVar(&records, "records", "", "where the model's requests are recorded (default OUT/records.db)")
	return cmd
}

func newMirrorCompareCmd(e *env) *cobra.Command {
	var (
		f                           mirrorFlags
		agents                      []string
		agentURL, agentKeyEnv       string
		agentModels                 []string
		simURL, simModel, simPrompt string
		judgeURL                    string
		queries, concurrency        int
	)
	cmd := &cobra.Command{
		Use:   "compare --collection DIR --out DIR --llm-url URL --llm-model M --agent-url URL --agent-model M",
		Short: "Compare agents on the real, a cached and a simulated environment (MirrorAPI §4.3)",
		Long: `The MirrorAPI paper's comparison of real and simulated environments (§4.3, Figure 3):
the model at --llm-url writes queries over 2-5 APIs of the mirrored collections
with the paper's Query Generation prompt (Table 14); the same agents (--agent) and
models (--agent-model) run them in the real environment (the APIs themselves), a
cached one (the real runs' and the dataset's real answers, then the simulator) and
a simulated one (the simulator alone: --sim-url/--sim-model, else the offline
synthesizer); every real trajectory gets the tool-functioning check, and queries
whose real APIs failed are dropped; the pass rates are reported side by side
(SoPR with --judge-url/--judge-model, else answered episodes). Every model request
is recorded in the store; --replay runs again with no network. Writes
OUT/compare/{tasks.jsonl,functioning.jsonl,compare.json,compare.md,compare.html}
and the episodes under OUT/compare/runs/<env>/.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if f.llmURL == "" && !f.replay {
				return usagef("--llm-url and --llm-model are required: a model writes the queries (Table 14)")
			}
			eng, cleanup, err := openMirror(ctx, &f, e)
			if err != nil {
				return err
			}
			defer cleanup()
			st := eng.Store.(llm.Recorder)
			client := func(url, keyEnv string) *llm.Client {
				if url == "" {
					url = "http://replay.invalid/v1"
				}
				return llm.New(url, llm.Options{APIKey: e.getenv(keyEnv), Recorder: st, Reuse: true, Replay: f.replay, Logger: e.logger()})
			}
			if agentURL == "" && !f.replay {
				agentURL = f.llmURL
			}
			opts := mirror.CompareOptions{Out: filepath.Join(f.out, "compare"), Queries: queries, Seed: f.seed, Concurrency: concurrency}
			for _, name := range agents {
				switch name {
				case "cot":
					opts.Agents = append(opts.Agents, agent.CoT{})
				case "dfsdt", "dfs":
					opts.Agents = append(opts.Agents, agent.DFSDT{})
				case "react":
					opts.Agents = append(opts.Agents, agent.ReAct{})
				default:
					return usagef("--agent %q: use cot, dfsdt or react (the paper runs CoT and DFS)", name)
				}
			}
			if len(agentModels) == 0 {
				return usagef("--agent-model is required (repeatable): the models the agents run with, e.g. gpt-4o")
			}
			ac := client(agentURL, agentKeyEnv)
			for _, m := range agentModels {
				opts.Models = append(opts.Models, mirror.AgentModel{Name: m, Model: ac})
			}
			var sim *llm.Client
			if simURL != "" || (f.replay && simModel != "") {
				sim = client(simURL, f.llmKeyEnv)
			}
			if sim != nil {
				opts.Simulated, err = mirror.SimulatedInvoker(eng.Collections, sim, simModel, simPrompt)
			} else {
				opts.Simulated, err = mirror.SimulatedInvoker(eng.Collections, nil, "", "")
			}
			if err != nil {
				return usagef("%v", err)
			}
			if f.judgeModel != "" {
				opts.Judge = &judge.Judge{Model: client(cmp.Or(judgeURL, f.llmURL), f.llmKeyEnv), ModelName: f.judgeModel, Seed: f.seed}
			}
			cs, err := eng.Compare(ctx, opts)
			if err != nil {
				if errors.Is(err, mirror.ErrInterrupted) {
					return &toolenv.Error{Status: toolenv.StatusCanceled, Message: "mirror compare", Err: err}
				}
				return err
			}
			md, _ := os.ReadFile(filepath.Join(opts.Out, "compare.md"))
			fmt.Fprintf(e.stdout, "%s\nwritten to %s (%d of %d queries kept)\n", md, opts.Out, cs.Kept, cs.Queries)
			return nil
		},
	}
	fs := cmd.Flags()
	f.register(fs)
	fs.StringArrayVar(&agents, "agent", []string{"cot", "dfsdt"}, "agent to run: cot, dfsdt or react (repeatable; the paper's CoT and DFS)")
	fs.StringVar(&agentURL, "agent-url", "", "OpenAI-compatible endpoint of the agents' models (default --llm-url)")
	fs.StringVar(&agentKeyEnv, "agent-key-env", "OPENAI_API_KEY", "environment variable holding the agents' API key")
	fs.StringArrayVar(&agentModels, "agent-model", nil, "a model the agents run with (repeatable; the paper: gpt-4o, gpt-4o-mini, ToolLLaMA-2)")
	fs.StringVar(&simURL, "sim-url", "", "OpenAI-compatible endpoint of the simulator of the simulated environment (e.g. MirrorAPI on vLLM); empty: the offline synthesizer")
	fs.StringVar(&simModel, "sim-model", "", "the simulator's model name")
	fs.StringVar(&simPrompt, "sim-prompt", "sft", "the simulator's prompt: sft, cot (MirrorAPI) or stb (StableToolBench's, for general models such as gpt-4o)")
	fs.StringVar(&judgeURL, "judge-url", "", "endpoint of the SoPR/FAC judge (default --llm-url); the judge is --judge-model")
	fs.IntVar(&queries, "queries", 20, "queries to write (Table 14); the paper kept 158")
	fs.IntVar(&concurrency, "concurrency", 4, "episodes at once")
	return cmd
}
