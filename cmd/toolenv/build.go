package main

import (
	"context"
	"os"
	"strconv"
	"strings"

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
	var (
		opt     nl2api.Options
		flavors string
		shrink  string
	)
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
			if opt.Data == "" || opt.Out == "" {
				return usagef("--data and --out are required (e.g. --data ../shared/data/bird --out out/bird)")
			}
			for _, f := range strings.Split(flavors, ",") {
				f = strings.TrimSpace(f)
				switch f {
				case nl2api.Slot, nl2api.Sel, nl2api.Rest:
					opt.Flavors = append(opt.Flavors, f)
				case "":
				default:
					return usagef("--flavors: unknown flavor %q (want slot, sel, rest)", f)
				}
			}
			if shrink != "" {
				for _, s := range strings.Split(shrink, ",") {
					p, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(s, "%")))
					if err != nil || p <= 0 || p > 100 {
						return usagef("--shrink: %q is not a percentage between 1 and 100", s)
					}
					opt.Shrink = append(opt.Shrink, p)
				}
			}
			return runBuildBird(cmd.Context(), e, opt)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opt.Data, "data", "", "BIRD folder: dev.json, dev_databases/<db>/<db>.sqlite and database_description/*.csv")
	fs.StringVar(&opt.Out, "out", "", "output folder (OUT/slot, OUT/sel, OUT/rest, OUT/report.json, OUT/report.md)")
	fs.StringArrayVar(&opt.DBs, "db", nil, "build only this database (repeatable; default: every database dev.json uses)")
	fs.StringVar(&flavors, "flavors", "slot,sel,rest", "flavors to build, comma-separated")
	fs.BoolVar(&opt.Obfuscate, "obfuscate", false, "also write <flavor>-obfuscated collections: tools FUNC_n, arguments ARG_n, names left out of descriptions, mapping in <flavor>-obfuscated.mapping.json beside the folder")
	fs.Int64Var(&opt.Seed, "seed", 1, "seed of the obfuscation and of candidate-set shrinking")
	fs.StringVar(&shrink, "shrink", "", "also write rest-shrink-<p> collections offering p% of a database's REST tools per task (the gold tool always kept), e.g. 10,25,50,75")
	fs.IntVar(&opt.Workers, "workers", 4, "tasks verified at once")
	fs.DurationVar(&opt.CallTimeout, "call-timeout", 0, "time limit of one verification call or gold query (default 10s)")
	return cmd
}

func runBuildBird(ctx context.Context, e *env, opt nl2api.Options) error {
	opt.Logger = e.logger()
	bars := progress.NewStages(e.stderr)
	opt.Progress = func(p nl2api.Progress) { bars.Update(p.Stage, p.Done, p.Total) }
	opt.Command = os.Args
	rep, err := nl2api.Build(ctx, opt)
	bars.Finish()
	if err != nil {
		return err
	}
	return rep.WriteText(e.stdout, opt.Out)
}
