package main

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/internal/progress"
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
	var f *options[nl2api.Config]
	cmd := &cobra.Command{
		Use:   "bird",
		Short: "Build verified SLOT, SEL and REST tool collections from BIRD questions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opt, err := f.value().Options()
			if err != nil {
				return err
			}
			return runBuildBird(cmd.Context(), e, opt)
		},
	}
	f = bindOptions(cmd.Flags(), nl2api.DefaultConfig, false)
	return cmd
}

func runBuildBird(ctx context.Context, e *env, opt nl2api.Options) error {
	opt.Logger = e.logger()
	bars := progress.NewStages(e.stderr)
	opt.Progress = func(p nl2api.Progress) { bars.Update(p.Stage, p.Done, p.Total) }
	opt.Command = e.command
	rep, err := nl2api.Build(ctx, opt)
	bars.Finish()
	if err != nil {
		return err
	}
	return rep.WriteText(e.stdout, opt.Out)
}
