package main

import (
	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/mapping/probe"
)

// modelDefaults are the model flags' defaults: exchanges are recorded in
// the default store.
func modelDefaults() probe.ModelConfig {
	c := configDefaults[probe.ModelConfig]()
	c.Store = environment.Default().Store
	return c
}

func newMapProbeCmd(e *env) *cobra.Command {
	var (
		f      *options[probe.Config]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Map APIs with an LLM and self-reflection: per query, retrieve the top tools and ask which are equivalent",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := f.value()
			sum, err := probe.RunFile(cmd.Context(), cfg, probe.Env{Logger: e.logger(), Getenv: e.getenv, Progress: e.stderr})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, sum)
			}
			sum.Markdown(e.stdout, cfg.Out)
			return cmd.Context().Err()
		},
	}
	f = bindOptions(cmd.Flags(), func() probe.Config {
		c := configDefaults[probe.Config]()
		c.Model, c.Index = modelDefaults(), defaultIndexPath()
		return c
	}, false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON")
	return cmd
}
