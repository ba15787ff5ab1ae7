package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/internal/cli"
	"github.com/toolenv/toolenv/perturb"
)

func newPerturbCmd(e *env) *cobra.Command {
	var f *cli.Options[perturb.Config]
	cmd := &cobra.Command{
		Use:   "perturb",
		Short: "Perturb task queries (distractor, case_mix, punctuation, paraphrase), keeping their meaning and values",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("seed") {
				return usagef("--seed is required: the same seed gives the same perturbations")
			}
			return runPerturb(cmd.Context(), e, f.Value())
		},
	}
	f = cli.Bind(cmd.Flags(), perturb.Default, false)
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
