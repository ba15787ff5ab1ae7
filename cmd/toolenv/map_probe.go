package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/internal/cli"
	"github.com/toolenv/toolenv/mapping/probe"
)

// modelDefaults are the model flags' defaults: exchanges are recorded in
// the default store.
func modelDefaults() probe.ModelConfig {
	c := cli.Defaults[probe.ModelConfig]()
	c.Store = environment.Default().Store
	return c
}

func newMapProbeCmd(e *env) *cobra.Command {
	var out string
	return cli.ReportCmd(e.stdout, &cobra.Command{
		Use:   "probe",
		Short: "Map APIs with an LLM and self-reflection: per query, retrieve the top tools and ask which are equivalent",
	}, func() probe.Config {
		c := cli.Defaults[probe.Config]()
		c.Model, c.Index = modelDefaults(), defaultIndexPath()
		return c
	}, "summary", func(ctx context.Context, c *probe.Config) (probe.Summary, error) {
		out = c.Out
		return probe.RunFile(ctx, c, probe.Env{Logger: e.logger(), Getenv: e.getenv, Progress: e.stderr})
	}, func(s probe.Summary, w io.Writer) { s.Markdown(w, out) })
}
