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
		Long: `Build live tool collections from BIRD (NL2SQL) questions: OUT/slot, OUT/sel and
OUT/rest, each a collection folder (collection.json, tools.json, tasks.jsonl,
openapi.json, functions.json) served by "toolenv serve --collection OUT/<flavor>".
A question is kept for a flavor only when its gold tool sequence, run through the
backend that serves it, returns the gold SQL's answer. OUT/report.json and
OUT/report.md say what was kept and why the rest was not. See docs/nl2sql.md.`,
		Example: `  toolenv build bird --data ../shared/data/bird --out out/bird
  toolenv build bird --data ../shared/data/bird --out out/bird --db superhero --flavors rest
  toolenv build bird --data ../shared/data/bird --out out/bird --obfuscate --seed 7 --shrink 10,25,50,75`,
		Args: cobra.NoArgs,
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
