package main

import (
	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/mapping/sequence"
)

func newMapSequenceCmd(e *env) *cobra.Command {
	var (
		f      *options[sequence.Config]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "sequence",
		Short: "Generate API call sequences (retrieval, few-shot or CoT prompting, mapping-aware self-reflection) and score them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := sequence.Run(cmd.Context(), f.value(), sequence.Env{Logger: e.logger(), Getenv: e.getenv, Progress: e.stderr, Command: e.command})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, rep)
			}
			rep.Markdown(e.stdout)
			return cmd.Context().Err()
		},
	}
	f = bindOptions(cmd.Flags(), func() sequence.Config {
		c := configDefaults[sequence.Config]()
		c.Model, c.Index = modelDefaults(), defaultIndexPath()
		return c
	}, false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
