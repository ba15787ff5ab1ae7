package sequence

import (
	"context"
	"io"
	"log/slog"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/mapping/index"
	"github.com/toolenv/toolenv/mapping/probe"
)

// Config is a sequencing evaluation as "toolenv map sequence" takes it.
// Its tags are the command's flags (internal/configfile binds them).
type Config struct {
	// Model sequences the tasks; without a model name only the retrieval
	// baseline is scored.
	Model probe.ModelConfig `json:"model" help:"the model that writes sequences"`
	// Index is the tool index the candidates are retrieved from.
	Index   string   `json:"index" flag:"index" path:"file" help:"the tool index (from toolenv map index)"`
	Queries []string `json:"queries" flag:"queries" path:"file" help:"StableToolBench query files or folders, or tasks (.jsonl) (repeatable)"`
	// Out, when set, receives sequence.json and sequence.md (Write).
	Out          string `json:"out" flag:"out" path:"file" help:"write sequence.json and sequence.md into this folder"`
	Style        string `json:"style" flag:"style" default:"fewshot" enum:"fewshot,cot" help:"prompt style: fewshot or cot"`
	K            int    `json:"top" flag:"top" short:"k" default:"10" help:"candidate APIs retrieved per query"`
	Shots        int    `json:"shots" flag:"shots" default:"3" help:"solved examples in the prompt"`
	Limit        int    `json:"limit" flag:"limit" help:"sequence only the first N queries"`
	NoReflection bool   `json:"no_reflection" flag:"no-reflection" help:"skip the self-reflection pass"`
	SearchMode   string `json:"search_mode" flag:"search-mode" help:"retrieval: hybrid, lexical or vector (default: hybrid when the index has vectors)"`
}

// Env is what a configured evaluation runs with.
type Env struct {
	// Logger logs; nil discards.
	Logger *slog.Logger
	// Getenv reads the variable the model's KeyEnv names; nil means
	// os.Getenv.
	Getenv func(string) string
	// Progress receives a progress bar; nil shows none.
	Progress io.Writer
	// Command is recorded in the report's provenance.
	Command []string
}

// Run reads the tasks, retrieves their candidates from the index,
// scores the retrieval baseline and, with a model, the model's
// sequences (Evaluate), and writes the results into cfg.Out. Bad flags
// are invalid_arguments errors, a missing index not_found. A canceled
// ctx ends early and is no error: the report covers the tasks done.
func Run(ctx context.Context, cfg *Config, env Env) (Report, error) {
	if env.Logger == nil {
		env.Logger = slog.New(slog.DiscardHandler)
	}
	invalid := func(format string, args ...any) (Report, error) {
		return Report{}, toolenv.Errorw(toolenv.StatusInvalidArguments, "", format, args...)
	}
	if len(cfg.Queries) == 0 {
		return invalid("--queries is required: StableToolBench query files or a folder of them, or tasks (.jsonl)")
	}
	if cfg.Style != FewShot && cfg.Style != CoT {
		return invalid("--style %q: want fewshot or cot", cfg.Style)
	}
	tasks, err := ReadTasks(cfg.Queries)
	if err != nil {
		return Report{}, err
	}
	if cfg.Limit > 0 && len(tasks) > cfg.Limit {
		tasks = tasks[:cfg.Limit]
	}
	ix, err := index.Open(ctx, cfg.Index, index.OpenOptions{Logger: env.Logger})
	if err != nil {
		return Report{}, toolenv.Errorw(toolenv.StatusNotFound, "", "%v", err)
	}
	defer ix.Close()
	if err := index.CheckMode(cfg.SearchMode, "search-mode"); err != nil {
		return Report{}, err
	}
	retr := probe.IndexRetriever{Index: ix, Options: index.SearchOptions{Mode: index.Mode(cfg.SearchMode), MaxAlternatives: -1}}
	m := cfg.Model
	eo := EvalOptions{SearchMode: cfg.SearchMode, Options: Options{
		Model: m.Model, Style: cfg.Style, K: cfg.K, Shots: cfg.Shots, NoReflection: cfg.NoReflection, Mappings: ix.Mappings(),
		Temperature: m.Temperature, Seed: m.Seed, Logger: env.Logger,
	}}
	var bar *progress.Bar
	if m.Model != "" {
		client, closer, err := m.Open(ctx, env.Getenv, env.Logger)
		if err != nil {
			return Report{}, err
		}
		defer closer.Close()
		byName := map[string]*toolenv.Tool{}
		for _, t := range ix.Tools() {
			byName[t.Name] = t
		}
		bar = progress.New(env.Progress, len(tasks), "sequence")
		eo.Chat, eo.Tool = client, func(n string) *toolenv.Tool { return byName[n] }
		eo.Progress = func(done, total int) { bar.Add(1) }
	}
	rep, outs, base := Evaluate(ctx, retr, tasks, eo)
	if bar != nil {
		bar.Finish()
	}
	rep.Provenance = buildinfo.Provenance(env.Command, map[string]any{"index": cfg.Index, "queries": cfg.Queries, "style": cfg.Style, "k": cfg.K, "shots": cfg.Shots,
		"limit": cfg.Limit, "reflection": !cfg.NoReflection, "model": m.Model, "temperature": m.Temperature, "seed": m.Seed})
	if cfg.Out != "" {
		if err := Write(cfg.Out, rep, outs, base); err != nil {
			return Report{}, err
		}
	}
	return rep, nil
}
