package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/perturb"
)

func newPerturbCmd(e *env) *cobra.Command {
	var f *options[perturb.Config]
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
			return runPerturb(cmd.Context(), e, f.value())
		},
	}
	f = bindOptions(cmd.Flags(), perturb.Default, false)
	return cmd
}

func runPerturb(ctx context.Context, e *env, cfg *perturb.Config) error {
	job, done, err := cfg.Job(ctx, perturb.Env{Logger: e.logger(), Getenv: e.getenv, Stdout: e.stdout, Progress: e.stderr, Command: e.command})
	if err != nil {
		return err
	}
	rep, err := perturb.Run(ctx, job)
	done()
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stderr, rep)
	return nil
}
