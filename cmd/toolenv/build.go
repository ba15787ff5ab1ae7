package main

import (
	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/internal/cli"
	"github.com/toolenv/toolenv/nl2api"
)

func newBuildCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build tool collections from datasets",
	}
	cmd.AddCommand(newBuildBirdCmd(e))
	return cmd
}

func newBuildBirdCmd(e *env) *cobra.Command {
	var f *cli.Options[nl2api.Config]
	cmd := &cobra.Command{
		Use:   "bird",
		Short: "Build verified SLOT, SEL and REST tool collections from BIRD questions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := f.Value()
			rep, err := cfg.Run(cmd.Context(), e.logger(), e.stderr, e.command)
			if err != nil {
				return err
			}
			return rep.WriteText(e.stdout, cfg.Out)
		},
	}
	f = cli.Bind(cmd.Flags(), nl2api.DefaultConfig, false)
	return cmd
}
