package main

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/internal/cli"
	"github.com/toolenv/toolenv/mapping/sequence"
)

func newMapSequenceCmd(e *env) *cobra.Command {
	return cli.ReportCmd(e.stdout, &cobra.Command{
		Use:   "sequence",
		Short: "Generate API call sequences (retrieval, few-shot or CoT prompting, mapping-aware self-reflection) and score them",
	}, func() sequence.Config {
		c := cli.Defaults[sequence.Config]()
		c.Model, c.Index = modelDefaults(), defaultIndexPath()
		return c
	}, "report", func(ctx context.Context, c *sequence.Config) (sequence.Report, error) {
		return sequence.Run(ctx, c, sequence.Env{Logger: e.logger(), Getenv: e.getenv, Progress: e.stderr, Command: e.command})
	}, sequence.Report.Markdown)
}
