package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/internal/redact"
	"github.com/toolenv/toolenv/perturb"
)

type perturbFlags struct {
	tasks     string
	mode      string
	seed      uint64
	out       string
	report    string
	llmURL    string
	llmModel  string
	llmKeyEnv string
	records   string
	replay    bool
	attempts  int
}

func newPerturbCmd(e *env) *cobra.Command {
	var f perturbFlags
	cmd := &cobra.Command{
		Use:   "perturb",
		Short: "Perturb task queries (distractor, case_mix, punctuation, paraphrase), keeping their meaning and values",
		Long: `Perturb rewrites the query of every task and writes the tasks as JSONL: a distractor
story prepended, case mixing, punctuation noise, or an LLM paraphrase. Each task keeps
its original query in meta.original_query. A paraphrase that loses any entity, number
or quoted value of the original is rejected and asked for again (--attempts); when all
attempts fail the query stays as it was, marked meta.perturbation_failed. The same seed
gives the same output (paraphrases: replay them with --records and --replay).`,
		Example: `  toolenv perturb --tasks out/bird/rest/tasks.jsonl --mode case_mix --seed 1 --out rest-casemix.jsonl
  toolenv perturb --tasks out/bird/rest --mode paraphrase --seed 1 --llm-url http://127.0.0.1:8000/v1 --llm-model qwen --out p.jsonl --report p`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("seed") {
				return usagef("--seed is required: the same seed gives the same perturbations")
			}
			return runPerturb(cmd.Context(), e, &f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.tasks, "tasks", "", "tasks to perturb: a JSONL file or a collection folder (its tasks.jsonl)")
	fs.StringVar(&f.mode, "mode", "", "perturbation: "+strings.Join(perturb.Modes, ", "))
	fs.Uint64Var(&f.seed, "seed", 0, "seed of every random choice (required)")
	fs.StringVar(&f.out, "out", "", "write the perturbed tasks here (default: stdout)")
	fs.StringVar(&f.report, "report", "", "write the report to PREFIX.md and PREFIX.json")
	fs.StringVar(&f.llmURL, "llm-url", "", "OpenAI-compatible endpoint for paraphrases")
	fs.StringVar(&f.llmModel, "llm-model", "", "model name for paraphrases")
	fs.StringVar(&f.llmKeyEnv, "llm-key-env", "OPENAI_API_KEY", "environment variable holding the LLM's API key")
	fs.StringVar(&f.records, "records", "", "SQLite file recording every LLM exchange (reused when the same request comes again)")
	fs.BoolVar(&f.replay, "replay", false, "answer LLM requests only from --records (no network)")
	fs.IntVar(&f.attempts, "attempts", 3, "paraphrases asked per query before keeping the original")
	return cmd
}

func runPerturb(ctx context.Context, e *env, f *perturbFlags) error {
	if f.tasks == "" || f.mode == "" {
		return usagef("--tasks and --mode are required")
	}
	opts := perturb.Options{Mode: f.mode, Seed: f.seed, Attempts: f.attempts}
	if f.mode == perturb.Paraphrase {
		if f.llmURL == "" || f.llmModel == "" {
			return usagef("--mode paraphrase needs --llm-url and --llm-model")
		}
		m, closer, err := perturb.OpenModel(ctx, perturb.ModelConfig{URL: f.llmURL, APIKey: e.getenv(f.llmKeyEnv), Records: f.records, Replay: f.replay, Logger: e.logger()})
		if err != nil {
			return err
		}
		defer closer.Close()
		opts.Model, opts.ModelName = m, f.llmModel
	}
	var bar *progress.Bar
	last := 0
	opts.Progress = func(done, total int) {
		if bar == nil {
			bar = progress.New(e.stderr, total, "perturb "+f.mode)
		}
		bar.Add(done - last)
		last = done
	}
	rep, err := perturb.Run(ctx, perturb.Job{Tasks: f.tasks, Out: f.out, Stdout: e.stdout, Report: f.report, Logger: e.logger(), Options: opts,
		Provenance: buildinfo.Provenance(os.Args, map[string]any{"tasks": f.tasks, "mode": f.mode, "seed": f.seed, "attempts": f.attempts,
			"llm_url": redact.URL(f.llmURL), "llm_model": f.llmModel, "records": f.records, "replay": f.replay})})
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		if strings.HasPrefix(err.Error(), "perturb: unknown mode") {
			return usageError{err}
		}
		return err
	}
	fmt.Fprintf(e.stderr, "perturb %s: %d of %d queries changed", f.mode, rep.Changed, rep.Tasks)
	if f.mode == perturb.Paraphrase {
		fmt.Fprintf(e.stderr, "; %d LLM answers, %d rejected for losing a value or saying nothing new, %d queries kept as they were", rep.Attempts, rep.Rejected, rep.Failed)
	}
	fmt.Fprintln(e.stderr)
	return nil
}
