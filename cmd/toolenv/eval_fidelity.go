package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval/bleu"
	"github.com/toolenv/toolenv/eval/fidelity"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mapping/embed"
)

// fidelityFlags are toolenv eval fidelity's own flags; the environment
// flags (--store, the sources, --llm-*, --sim-prompt) are serve's.
type fidelityFlags struct {
	pairs       []string
	noStore     bool
	docExamples bool
	tools       []string
	sample      int
	seed        int64
	out         string
	concurrency int
	replay      bool
	records     string
	retries     int

	embedURL, embedModel, embedKeyEnv string
	judgeURL, judgeModel, judgeKeyEnv string
	judgeTimeout                      time.Duration

	bleuTokens, bleuSmoothing string
}

func newEvalFidelityCmd(e *env) *cobra.Command {
	var (
		cf *configFlags
		ff fidelityFlags
	)
	cmd := &cobra.Command{
		Use:   "fidelity --out DIR",
		Short: "Measure how faithfully the simulator imitates real APIs (MirrorAPI's BLEU, cosine and judges)",
		Long: `Answer every recorded real request again with the simulator under test — the
virtual backend "toolenv serve" builds from the same flags: the LLM simulator
(--llm-url/--llm-model/--sim-prompt sft|cot|stb) or, without one, the offline
synthesizer — bypassing the cache, and score each simulated response against the
real one as the MirrorAPI paper does (section 3.1): BLEU-4 exactly as NLTK computes
it, the cosine of the two responses' embeddings, and, with --judge-url and
--judge-model, the paper's LLM-as-a-judge rating (1-10) and documentation
following verdict.

Real answers are the store's entries of origin upstream or import (--store), the
lines of --pairs files ({"tool", "args", "response"}) and, with --doc-examples, the
tools' documented examples; only tools of the loaded collections (--toolbench,
--collection, --openapi, --demo) are scored, and --tool narrows them further. The
pair being scored is held out: it is never one of the simulator's few-shot
examples, nor an answer the synthesizer could copy.

Every simulator, embedding and judge request is recorded in DIR/records.db;
--replay scores again from the records with no network. The results are
DIR/summary.json, DIR/report.md, DIR/report.html and DIR/pairs.jsonl.`,
		Example: `  toolenv eval fidelity --demo --doc-examples --out runs/fidelity-synth     # the offline synthesizer against the demo's documented answers
  toolenv eval fidelity --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction --store cache.db \
      --llm-url http://127.0.0.1:8000/v1 --llm-model stabletoolbench/MirrorAPI --sim-prompt sft \
      --judge-url https://api.openai.com/v1 --judge-model gpt-4o --embed-url https://api.openai.com/v1 --embed-model text-embedding-3-small \
      --sample 20 --seed 1 --out runs/fidelity-mirrorapi
  toolenv eval fidelity --pairs recorded.jsonl --collection out/bird/rest --llm-url URL --llm-model M --out runs/f --replay`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := cf.resolve(e)
			if err != nil {
				return err
			}
			return runEvalFidelity(cmd.Context(), e, &cfg.Config, &ff, os.Args)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&ff.pairs, "pairs", nil, `a JSONL file of recorded real answers, one {"tool", "args", "response"} a line ("error", "status" optional; "tool" an ID or a unique name); repeatable`)
	fs.BoolVar(&ff.noStore, "no-store-pairs", false, "do not score the store's recorded real answers (origin upstream or import)")
	fs.BoolVar(&ff.docExamples, "doc-examples", false, "also score the loaded tools' documented examples as real answers")
	fs.StringSliceVar(&ff.tools, "tool", nil, "score only these tools (IDs collection/name or names; comma-separated or repeated)")
	fs.IntVar(&ff.sample, "sample", 0, "score at most N pairs per tool, chosen with --seed (0: all)")
	fs.Int64Var(&ff.seed, "seed", 1, "seed of the per-tool sample and of every judge request")
	fs.StringVar(&ff.out, "out", "", "output folder")
	fs.IntVar(&ff.concurrency, "concurrency", 4, "pairs scored at once")
	fs.BoolVar(&ff.replay, "replay", false, "serve every simulator, embedding and judge request from the records, with no network")
	fs.StringVar(&ff.records, "records", "", "database of recorded requests (default DIR/records.db)")
	fs.IntVar(&ff.retries, "retries", 3, "retries of a simulator, embedding or judge request that failed with a timeout, 429 or 5xx")
	fs.StringVar(&ff.embedURL, "embed-url", "", "OpenAI-compatible embeddings endpoint for the cosine (the paper: text-embedding-3-small); empty: toolenv's offline embedder")
	fs.StringVar(&ff.embedModel, "embed-model", "", "embedding model name")
	fs.StringVar(&ff.embedKeyEnv, "embed-key-env", "OPENAI_API_KEY", "environment variable holding the embeddings endpoint's API key")
	fs.StringVar(&ff.judgeURL, "judge-url", "", "OpenAI-compatible endpoint of the judge (the paper: gpt-4o); empty: no judging")
	fs.StringVar(&ff.judgeModel, "judge-model", "", "judge model name")
	fs.StringVar(&ff.judgeKeyEnv, "judge-key-env", "OPENAI_API_KEY", "environment variable holding the judge's API key")
	fs.DurationVar(&ff.judgeTimeout, "judge-timeout", 120*time.Second, "timeout of one judge or embeddings request")
	fs.StringVar(&ff.bleuTokens, "bleu-tokens", "chars", "BLEU tokens: chars (Python's list(text), the MirrorAPI pipeline's) or words (str.split())")
	fs.StringVar(&ff.bleuSmoothing, "bleu-smoothing", "method3", "NLTK smoothing: none, method1 ... method5, method7 (method3 is the MirrorAPI pipeline's)")
	cf = bindConfig(fs, bindEnv)
	return cmd
}

func runEvalFidelity(ctx context.Context, e *env, envCfg *environment.Config, ff *fidelityFlags, argv []string) error {
	log := e.logger()
	started := time.Now().UTC()
	if ff.out == "" {
		return usagef("--out is required: the folder for the scores and the reports")
	}
	if envCfg.Upstream.URL != "" || envCfg.Upstream.Direct {
		return usagef("--upstream-url and --upstream-direct do not apply: the real answers are the recorded ones, and the simulator under test must answer alone")
	}
	if ff.sample < 0 || ff.concurrency < 1 {
		return usagef("--sample must be at least 0 and --concurrency at least 1")
	}
	if (ff.judgeURL == "") != (ff.judgeModel == "") {
		return usagef("--judge-url and --judge-model go together (the judge's endpoint and model)")
	}
	if (ff.embedURL == "") != (ff.embedModel == "") {
		return usagef("--embed-url and --embed-model go together (the embeddings endpoint and model)")
	}
	if _, err := bleu.ParseTokenizer(ff.bleuTokens); err != nil {
		return usagef("--bleu-tokens: %v", err)
	}
	smoothing, err := bleu.ParseSmoothing(ff.bleuSmoothing)
	if err != nil {
		return usagef("--bleu-smoothing: %v", err)
	}
	if err := os.MkdirAll(ff.out, 0o755); err != nil {
		return err
	}

	// Records of every simulator, embedding and judge exchange.
	records, err := harness.OpenRecords(ctx, ff.records, ff.out, ff.replay, log)
	if err != nil {
		return err
	}
	defer records.Close()
	newClient := func(url, keyEnv string, timeout time.Duration) *llm.Client {
		key := ""
		if keyEnv != "" {
			key = e.getenv(keyEnv)
		}
		return llm.New(url, llm.Options{APIKey: key, Timeout: timeout, MaxRetries: harness.Retries(ff.retries), Recorder: records, Replay: ff.replay, Logger: log})
	}

	envx, err := environment.Open(ctx, envCfg)
	if err != nil {
		return err
	}
	defer envx.Close()
	colls := envx.Collections()

	// The simulator under test: the virtual backend of every loaded
	// collection, as serve builds it but without upstream and cache, its
	// recorded examples seen through a hold-out of the pair being scored.
	simulator := "offline synthesizer"
	var simLLM *llm.Client
	if envCfg.Simulator.URL != "" {
		simLLM = newClient(envCfg.Simulator.URL, envCfg.Simulator.KeyEnv, envCfg.Simulator.Timeout)
		simulator = fmt.Sprintf("%s at %s, prompt %s (synthesizer when it cannot answer)", envCfg.Simulator.Model, envCfg.Simulator.URL, envCfg.Simulator.Prompt)
	}
	simReg := invoke.NewRegistry()
	for _, c := range colls {
		opts := virtual.Options{Model: envCfg.Simulator.Model, Prompt: envCfg.Simulator.Prompt, Examples: fidelity.HoldOut(envx.Store), Tools: c.Tools, Logger: log}
		if simLLM != nil {
			opts.LLM = simLLM
		}
		b, err := virtual.Build(opts)
		if err != nil {
			return usagef("%v", err)
		}
		if err := simReg.Add(c, b); err != nil {
			return err
		}
	}
	simHandler := toolenv.Chain(simReg, invoke.Recover(log), invoke.Timeout(envCfg.Timeout), invoke.Limit(envCfg.MaxResultBytes))

	// The real answers.
	var (
		pairs   []*fidelity.Pair
		skipped []string
		sources []string
	)
	if !ff.noStore {
		ps, err := fidelity.StorePairs(ctx, envx.Store)
		if err != nil {
			return err
		}
		pairs = append(pairs, ps...)
		sources = append(sources, fmt.Sprintf("store %s (%d real answers)", envCfg.Store, len(ps)))
	}
	for _, path := range ff.pairs {
		ps, problems, err := fidelity.ReadPairs(path)
		if err != nil {
			return usagef("--pairs: %v", err)
		}
		for _, p := range problems {
			log.Warn("pair skipped", "problem", p)
			skipped = append(skipped, p.Error())
		}
		pairs = append(pairs, ps...)
		sources = append(sources, fmt.Sprintf("%s (%d pairs)", path, len(ps)))
	}
	if ff.docExamples {
		var tools []*toolenv.Tool
		for _, c := range colls {
			tools = append(tools, c.Tools...)
		}
		ps := fidelity.DocPairs(tools)
		pairs = append(pairs, ps...)
		sources = append(sources, fmt.Sprintf("documented examples (%d)", len(ps)))
	}
	pairs, unknown := fidelity.Resolve(pairs, envx.Registry, colls, ff.tools)
	for _, t := range slices.Sorted(maps.Keys(unknown)) {
		skipped = append(skipped, fmt.Sprintf("%d pair(s) of %s: not a tool of the loaded collections (load it with --toolbench, --collection or --openapi)", unknown[t], t))
	}
	pairs = fidelity.Sample(pairs, ff.sample, ff.seed)
	if len(pairs) == 0 {
		return usagef("no real answers to score for the loaded collections: the store %s holds none of origin upstream or import (pass --pairs FILE, or --doc-examples)%s", envCfg.Store, skippedHint(skipped))
	}

	settings := fidelity.Settings{
		Simulator: simulator, BLEUTokens: ff.bleuTokens, BLEUSmoothing: smoothing.String(),
		Sample: ff.sample, Seed: ff.seed, Sources: sources,
	}
	cfg := fidelity.Config{Simulator: simHandler, Tools: envx.Registry, Concurrency: ff.concurrency, Logger: log,
		BLEU: &fidelity.BLEUOptions{Tokens: ff.bleuTokens, Smoothing: smoothing}}
	if ff.embedURL != "" {
		cfg.Embedder = embed.Remote{Client: newClient(ff.embedURL, ff.embedKeyEnv, ff.judgeTimeout), Model: ff.embedModel}
	} else {
		cfg.Embedder = embed.Hash{}
		settings.EmbedderOffline = true
	}
	settings.Embedder = cfg.Embedder.Name()
	if ff.judgeURL != "" {
		cfg.Judge = &fidelity.Judge{Model: newClient(ff.judgeURL, ff.judgeKeyEnv, ff.judgeTimeout), ModelName: ff.judgeModel, Seed: ff.seed}
		settings.Judge = ff.judgeModel
		settings.Prompts = fidelity.Prompts()
	}
	fmt.Fprintf(e.stderr, "toolenv: scoring %d real answer(s) of %d tool(s) against %s, %d at a time\n", len(pairs), countTools(pairs), simulator, ff.concurrency)
	bar := progress.New(e.stderr, len(pairs), "fidelity")
	cfg.Progress = func(done, total int, _ *fidelity.Scored) { bar.Add(1) }
	scored, runErr := fidelity.Run(ctx, cfg, pairs)
	bar.Finish()
	if runErr != nil && !errors.Is(runErr, context.Canceled) && !errors.Is(runErr, context.DeadlineExceeded) {
		return runErr
	}
	s := fidelity.Summarize(settings, scored, skipped)
	s.Provenance = buildinfo.Provenance(argv, envCfg.Redacted())
	if err := fidelity.Write(ff.out, s, scored); err != nil {
		return err
	}
	run := map[string]any{
		"command": argv, "version": buildinfo.Version(), "config": envCfg.Redacted(), "records": records.Path(), "replay": ff.replay,
		"started": started, "finished": time.Now().UTC(), "pairs": len(pairs), "scored": len(scored), "interrupted": runErr != nil,
	}
	if err := toolenv.WriteJSONFile(filepath.Join(ff.out, "run.json"), run); err != nil {
		return err
	}
	md := fidelity.Markdown(s)
	if i := strings.Index(md, "## Overall"); i >= 0 {
		rest := md[i:]
		if j := strings.Index(rest, "## Per tool"); j >= 0 {
			rest = rest[:j]
		}
		fmt.Fprintln(e.stdout, strings.TrimSpace(rest))
	}
	fmt.Fprintf(e.stdout, "\nreports: %s\n", strings.Join(prefixed(ff.out, fidelity.Files), ", "))
	if runErr != nil {
		fmt.Fprintf(e.stderr, "toolenv: interrupted; the %d pair(s) scored so far are in the reports\n", len(scored))
		return toolenv.Errorw(toolenv.StatusCanceled, "", "interrupted: %v", runErr)
	}
	return nil
}

func skippedHint(skipped []string) string {
	if len(skipped) == 0 {
		return ""
	}
	return "; skipped: " + strings.Join(skipped, "; ")
}

func countTools(pairs []*fidelity.Pair) int {
	seen := map[string]bool{}
	for _, p := range pairs {
		seen[p.Tool] = true
	}
	return len(seen)
}

func prefixed(dir string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(dir, n)
	}
	return out
}
