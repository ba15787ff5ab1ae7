package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval/fidelity"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/internal/cli"
)

func newEvalFidelityCmd(e *env) *cobra.Command {
	var (
		cf *configFlags
		ff *cli.Options[harness.FidelityConfig]
	)
	cmd := &cobra.Command{
		Use:   "fidelity --out DIR",
		Short: "Measure how faithfully the simulator imitates real APIs (MirrorAPI's BLEU, cosine and judges)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := cf.resolve(e)
			if err != nil {
				return err
			}
			return runEvalFidelity(cmd.Context(), e, &cfg.Config, ff.Value())
		},
	}
	ff = cli.Bind(cmd.Flags(), harness.DefaultFidelity, false)
	cf = bindConfig(cmd.Flags(), bindEnv)
	return cmd
}

func runEvalFidelity(ctx context.Context, e *env, envCfg *environment.Config, fc *harness.FidelityConfig) error {
	res, err := harness.Fidelity(ctx, fc, envCfg, harness.Options{Logger: e.logger(), Getenv: e.getenv, Progress: e.stderr, Command: e.command})
	if res == nil {
		return err
	}
	if o := fidelity.Overview(res.Summary); o != "" {
		fmt.Fprintln(e.stdout, o)
	}
	var files []string
	for _, n := range fidelity.Files {
		files = append(files, filepath.Join(fc.Out, n))
	}
	fmt.Fprintf(e.stdout, "\nreports: %s\n", strings.Join(files, ", "))
	if res.Interrupted {
		fmt.Fprintf(e.stderr, "toolenv: interrupted; the %d pair(s) scored so far are in the reports\n", len(res.Scored))
	}
	return err
}
