package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval/bleu"
	"github.com/toolenv/toolenv/eval/fidelity"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/configfile"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/internal/redact"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mapping/embed"
)

// FidelityConfig is what toolenv eval fidelity scores and how: its flags
// (the environment's, with the simulator under test, are environment
// configuration).
type FidelityConfig struct {
	Pairs       []string `json:"pairs" flag:"pairs" path:"file" help:"a JSONL file of recorded real answers, one {\"tool\", \"args\", \"response\"} a line (\"error\", \"status\" optional; \"tool\" an ID or a unique name); repeatable"`
	NoStore     bool     `json:"no_store_pairs" flag:"no-store-pairs" help:"do not score the store's recorded real answers (origin upstream or import)"`
	DocExamples bool     `json:"doc_examples" flag:"doc-examples" help:"also score the loaded tools' documented examples as real answers"`
	Tools       []string `json:"tools" flag:"tool,comma" help:"score only these tools (IDs collection/name or names; comma-separated or repeated)"`
	Sample      int      `json:"sample" flag:"sample" help:"score at most N pairs per tool, chosen with --seed (0: all)"`
	Seed        int64    `json:"seed" flag:"seed" default:"1" help:"seed of the per-tool sample and of every judge request"`
	Out         string   `json:"out" flag:"out" path:"file" help:"output folder"`
	Concurrency int      `json:"concurrency" flag:"concurrency" default:"4" help:"pairs scored at once"`
	Replay      bool     `json:"replay" flag:"replay" help:"serve every simulator, embedding and judge request from the records, with no network"`
	Records     string   `json:"records" flag:"records" path:"file" help:"database of recorded requests (default DIR/records.db)"`
	Retries     int      `json:"retries" flag:"retries" default:"3" help:"retries of a simulator, embedding or judge request that failed with a timeout, 429 or 5xx"`

	EmbedURL     string        `json:"embed_url" flag:"embed-url" url:"http" help:"OpenAI-compatible embeddings endpoint for the cosine (the paper: text-embedding-3-small); empty: toolenv's offline embedder"`
	EmbedModel   string        `json:"embed_model" flag:"embed-model" help:"embedding model name"`
	EmbedKeyEnv  string        `json:"embed_key_env" flag:"embed-key-env" default:"OPENAI_API_KEY" help:"environment variable holding the embeddings endpoint's API key"`
	JudgeURL     string        `json:"judge_url" flag:"judge-url" url:"http" help:"OpenAI-compatible endpoint of the judge (the paper: gpt-4o); empty: no judging"`
	JudgeModel   string        `json:"judge_model" flag:"judge-model" help:"judge model name"`
	JudgeKeyEnv  string        `json:"judge_key_env" flag:"judge-key-env" default:"OPENAI_API_KEY" help:"environment variable holding the judge's API key"`
	JudgeTimeout time.Duration `json:"judge_timeout" flag:"judge-timeout" default:"2m" help:"timeout of one judge or embeddings request"`

	BLEUTokens    string `json:"bleu_tokens" flag:"bleu-tokens" default:"chars" enum:"chars,words" help:"BLEU tokens: chars (Python's list(text), the MirrorAPI pipeline's) or words (str.split())"`
	BLEUSmoothing string `json:"bleu_smoothing" flag:"bleu-smoothing" default:"method3" help:"NLTK smoothing: none, method1 ... method5, method7 (method3 is the MirrorAPI pipeline's)"`
}

// DefaultFidelity returns the configuration toolenv eval fidelity starts
// from.
func DefaultFidelity() FidelityConfig {
	return configfile.Default[FidelityConfig]()
}

// FidelityResult is what a fidelity run scored.
type FidelityResult struct {
	Summary *fidelity.Summary
	Scored  []*fidelity.Scored
	// Interrupted says ctx ended before every pair was scored; the
	// reports hold those scored.
	Interrupted bool
}

// Fidelity scores the simulator envCfg configures (the virtual backend
// serve builds, without upstream and cache, its recorded examples seen
// through a hold-out of the pair being scored) against recorded real
// answers, and writes summary.json, the reports, pairs.jsonl and run.json
// into ff.Out. After an interrupt it writes the reports of the pairs
// scored and returns them with a StatusCanceled error.
func Fidelity(ctx context.Context, ff *FidelityConfig, envCfg *environment.Config, opts Options) (*FidelityResult, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	argv := redactArgs(opts.Command)
	started := time.Now().UTC()
	if ff.Out == "" {
		return nil, invalid("--out is required: the folder for the scores and the reports")
	}
	if envCfg.Upstream.URL != "" || envCfg.Upstream.Direct {
		return nil, invalid("--upstream-url and --upstream-direct do not apply: the real answers are the recorded ones, and the simulator under test must answer alone")
	}
	if ff.Sample < 0 || ff.Concurrency < 1 {
		return nil, invalid("--sample must be at least 0 and --concurrency at least 1")
	}
	if (ff.JudgeURL == "") != (ff.JudgeModel == "") {
		return nil, invalid("--judge-url and --judge-model go together (the judge's endpoint and model)")
	}
	if (ff.EmbedURL == "") != (ff.EmbedModel == "") {
		return nil, invalid("--embed-url and --embed-model go together (the embeddings endpoint and model)")
	}
	if _, err := bleu.ParseTokenizer(ff.BLEUTokens); err != nil {
		return nil, invalid("--bleu-tokens: %v", err)
	}
	smoothing, err := bleu.ParseSmoothing(ff.BLEUSmoothing)
	if err != nil {
		return nil, invalid("--bleu-smoothing: %v", err)
	}
	// Every model named is asked once before anything is written or the
	// first pair is scored (a replay uses no network and checks nothing).
	if !ff.Replay {
		check := func(url, keyEnv string) *llm.Client {
			if url == "" {
				return nil
			}
			return llm.New(url, llm.Options{APIKey: getenv(keyEnv), Timeout: ff.JudgeTimeout})
		}
		if err := llm.Preflight(ctx,
			llm.Endpoint{Role: "simulator (--llm-url, --llm-model)", Client: check(envCfg.Simulator.URL, envCfg.Simulator.KeyEnv), Model: envCfg.Simulator.Model},
			llm.Endpoint{Role: "judge (--judge-url, --judge-model)", Client: check(ff.JudgeURL, ff.JudgeKeyEnv), Model: ff.JudgeModel},
			llm.Endpoint{Role: "embeddings (--embed-url, --embed-model)", Client: check(ff.EmbedURL, ff.EmbedKeyEnv), Model: ff.EmbedModel, Embeddings: true},
		); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(ff.Out, 0o755); err != nil {
		return nil, err
	}

	// Records of every simulator, embedding and judge exchange.
	records, err := OpenRecords(ctx, ff.Records, ff.Out, ff.Replay, log)
	if err != nil {
		return nil, err
	}
	defer records.Close()
	newClient := func(url, keyEnv string, timeout time.Duration) *llm.Client {
		key := ""
		if keyEnv != "" {
			key = getenv(keyEnv)
		}
		return llm.New(url, llm.Options{APIKey: key, Timeout: timeout, MaxRetries: Retries(ff.Retries), Recorder: records, Replay: ff.Replay, Logger: log})
	}

	envx, err := environment.Open(ctx, envCfg)
	if err != nil {
		return nil, err
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
		simulator = fmt.Sprintf("%s at %s, prompt %s", envCfg.Simulator.Model, redact.URL(envCfg.Simulator.URL), envCfg.Simulator.Prompt)
	}
	simReg := invoke.NewRegistry()
	for _, c := range colls {
		opts := virtual.Options{Model: envCfg.Simulator.Model, Prompt: envCfg.Simulator.Prompt, Examples: fidelity.HoldOut(envx.Store), Tools: c.Tools, Logger: log}
		if simLLM != nil {
			// The model under test answers, or the pair is not scored:
			// the synthesizer never stands in for it.
			opts.LLM, opts.OnSimulatorFailure = simLLM, virtual.FallbackError
		}
		b, err := virtual.Build(opts)
		if err != nil {
			return nil, invalid("%v", err)
		}
		if err := simReg.Add(c, b); err != nil {
			return nil, err
		}
	}
	simHandler := toolenv.Chain(simReg, invoke.Recover(log), invoke.Timeout(envCfg.Timeout), invoke.Limit(envCfg.MaxResultBytes))

	// The real answers.
	var (
		pairs   []*fidelity.Pair
		skipped []string
		sources []string
	)
	if !ff.NoStore {
		ps, err := fidelity.StorePairs(ctx, envx.Store)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, ps...)
		sources = append(sources, fmt.Sprintf("store %s (%d real answers)", envCfg.Store, len(ps)))
	}
	for _, path := range ff.Pairs {
		ps, problems, err := fidelity.ReadPairs(path)
		if err != nil {
			return nil, invalid("--pairs: %v", err)
		}
		for _, p := range problems {
			log.Warn("pair skipped", "problem", p)
			skipped = append(skipped, p.Error())
		}
		pairs = append(pairs, ps...)
		sources = append(sources, fmt.Sprintf("%s (%d pairs)", path, len(ps)))
	}
	if ff.DocExamples {
		var tools []*toolenv.Tool
		for _, c := range colls {
			tools = append(tools, c.Tools...)
		}
		ps := fidelity.DocPairs(tools)
		pairs = append(pairs, ps...)
		sources = append(sources, fmt.Sprintf("documented examples (%d)", len(ps)))
	}
	pairs, unknown := fidelity.Resolve(pairs, envx.Registry, colls, ff.Tools)
	for _, t := range slices.Sorted(maps.Keys(unknown)) {
		skipped = append(skipped, fmt.Sprintf("%d pair(s) of %s: not a tool of the loaded collections (load it with --toolbench, --collection or --openapi)", unknown[t], t))
	}
	pairs = fidelity.Sample(pairs, ff.Sample, ff.Seed)
	if len(pairs) == 0 {
		return nil, invalid("no real answers to score for the loaded collections: the store %s holds none of origin upstream or import (pass --pairs FILE, or --doc-examples)%s", envCfg.Store, skippedHint(skipped))
	}

	settings := fidelity.Settings{
		Simulator: simulator, BLEUTokens: ff.BLEUTokens, BLEUSmoothing: smoothing.String(),
		Sample: ff.Sample, Seed: ff.Seed, Sources: sources,
	}
	cfg := fidelity.Config{Simulator: simHandler, Tools: envx.Registry, Concurrency: ff.Concurrency, Logger: log,
		BLEU: &fidelity.BLEUOptions{Tokens: ff.BLEUTokens, Smoothing: smoothing}}
	if ff.EmbedURL != "" {
		cfg.Embedder = embed.Remote{Client: newClient(ff.EmbedURL, ff.EmbedKeyEnv, ff.JudgeTimeout), Model: ff.EmbedModel}
	} else {
		cfg.Embedder = embed.Hash{}
		settings.EmbedderOffline = true
	}
	settings.Embedder = cfg.Embedder.Name()
	if ff.JudgeURL != "" {
		cfg.Judge = &fidelity.Judge{Model: newClient(ff.JudgeURL, ff.JudgeKeyEnv, ff.JudgeTimeout), ModelName: ff.JudgeModel, Seed: ff.Seed}
		settings.Judge = ff.JudgeModel
		settings.Prompts = fidelity.Prompts()
	}
	if simLLM != nil {
		cfg.Failure = simulatorFailure
	}
	fmt.Fprintf(opts.Log(), "toolenv: scoring %d real answer(s) of %d tool(s) against %s, %d at a time\n", len(pairs), countTools(pairs), simulator, ff.Concurrency)
	bar := progress.New(opts.Log(), len(pairs), "fidelity")
	cfg.Progress = func(done, total int, _ *fidelity.Scored) { bar.Add(1) }
	scored, runErr := fidelity.Run(ctx, cfg, pairs)
	bar.Finish()
	stopped := errors.Is(runErr, fidelity.ErrStopped)
	if runErr != nil && !stopped && !errors.Is(runErr, context.Canceled) && !errors.Is(runErr, context.DeadlineExceeded) {
		return nil, runErr
	}
	s := fidelity.Summarize(settings, scored, skipped)
	why := ""
	if stopped {
		var te *toolenv.Error
		if errors.As(runErr, &te) {
			why = te.Message
		}
	}
	s.Status = fidelity.NewStatus(len(pairs), scored, runErr != nil && !stopped, why)
	s.Provenance = buildinfo.Provenance(argv, envCfg.Redacted())
	if err := fidelity.Write(ff.Out, s, scored); err != nil {
		return nil, err
	}
	run := map[string]any{
		"command": argv, "version": buildinfo.Version(), "config": envCfg.Redacted(), "records": records.Path(), "replay": ff.Replay,
		"started": started, "finished": time.Now().UTC(), "pairs": len(pairs), "scored": len(scored), "interrupted": runErr != nil,
	}
	if err := toolenv.WriteJSONFile(filepath.Join(ff.Out, "run.json"), run); err != nil {
		return nil, err
	}
	res := &FidelityResult{Summary: s, Scored: scored, Interrupted: runErr != nil && !stopped}
	switch {
	case stopped:
		return res, runErr
	case runErr != nil:
		return res, toolenv.Errorw(toolenv.StatusCanceled, "", "interrupted: %v", runErr)
	}
	return res, nil
}

// simulatorFailure says why a result of the virtual backend under test
// is no answer of its model (with OnSimulatorFailure error, a failure is
// returned, marked), and whether the endpoint itself failed.
func simulatorFailure(r *toolenv.Result) (string, bool) {
	kind := r.Meta[simulate.MetaFailure]
	if kind == "" {
		return "", false
	}
	return "the simulator did not answer (" + kind + "): " + r.Error, kind != "unparseable"
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
