package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/eval/mapeval"
	"github.com/toolenv/toolenv/internal/cli"
	"github.com/toolenv/toolenv/mapping/truth"
)

func newMapEvalCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure mappings against exact ground truth, and what they are worth at work",
	}
	cmd.AddCommand(newMapEvalDriftCmd(e), newMapEvalSELCmd(e), newMapEvalObfuscationCmd(e), newMapEvalRepairCmd(e), newMapEvalFailoverCmd(e))
	return cmd
}

func newMapEvalDriftCmd(e *env) *cobra.Command {
	return cli.ReportCmd(e.stdout, &cobra.Command{
		Use:   "drift",
		Short: "Map each drifted collection's base version onto its current one and score it against the drift manifest",
	}, cli.Defaults[mapeval.DriftConfig], "results", func(ctx context.Context, c *mapeval.DriftConfig) ([]*mapeval.DriftResult, error) {
		return c.Run(ctx, e.logger(), e.command)
	}, func(r []*mapeval.DriftResult, w io.Writer) { mapeval.DriftMarkdown(w, r) })
}

func newMapEvalSELCmd(e *env) *cobra.Command {
	return cli.ReportCmd(e.stdout, &cobra.Command{
		Use:   "sel",
		Short: "Map an NL2SQL build's SEL tools onto its SLOT tools and score them against the SEL tools' own metadata",
	}, cli.Defaults[mapeval.SELConfig], "scores", func(ctx context.Context, c *mapeval.SELConfig) (*truth.Scores, error) {
		return c.Run(ctx)
	}, func(s *truth.Scores, w io.Writer) { mapeval.SELMarkdown(w, s) })
}

func newMapEvalObfuscationCmd(e *env) *cobra.Command {
	var orig, obf string
	return cli.ReportCmd(e.stdout, &cobra.Command{
		Use:   "obfuscation",
		Short: "Map an NL2SQL collection onto its obfuscated variant (FUNC_n, ARG_n) and score it against its mapping file",
	}, cli.Defaults[mapeval.ObfuscationConfig], "scores", func(ctx context.Context, c *mapeval.ObfuscationConfig) (s *truth.Scores, err error) {
		s, orig, obf, err = c.Run(ctx)
		return s, err
	}, func(s *truth.Scores, w io.Writer) { mapeval.ObfuscationMarkdown(w, orig, obf, s) })
}

// workOptions are the options of the measurements at work: the
// environments they open log at warn level and above.
func workOptions(e *env) mapeval.WorkOptions {
	quiet := &env{stdin: e.stdin, stdout: e.stdout, stderr: e.stderr, getenv: e.getenv, logJSON: e.logJSON}
	quiet.logLevel.Set(max(e.logLevel.Level(), slog.LevelWarn))
	return mapeval.WorkOptions{Logger: e.logger(), EnvLogger: quiet.logger(), Getenv: e.getenv, Progress: e.stderr}
}

func newMapEvalRepairCmd(e *env) *cobra.Command {
	return cli.ReportCmd(e.stdout, &cobra.Command{
		Use:   "repair",
		Short: "Completion of calls written against old documentation on a drifted collection, without and with the repair adapter",
	}, cli.Defaults[mapeval.RepairConfig], "results", func(ctx context.Context, c *mapeval.RepairConfig) (*mapeval.Report, error) {
		return c.Run(ctx, workOptions(e))
	}, (*mapeval.Report).Markdown)
}

func newMapEvalFailoverCmd(e *env) *cobra.Command {
	return cli.ReportCmd(e.stdout, &cobra.Command{
		Use:   "failover",
		Short: "Completion of a collection's tasks when its backend is down, without and with failover to a structurally mapped alternative",
	}, cli.Defaults[mapeval.FailoverConfig], "results", func(ctx context.Context, c *mapeval.FailoverConfig) (*mapeval.Report, error) {
		return c.Run(ctx, workOptions(e))
	}, (*mapeval.Report).Markdown)
}
