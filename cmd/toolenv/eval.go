package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/eval/queue"
	"github.com/toolenv/toolenv/eval/report"
	"github.com/toolenv/toolenv/eval/stb"
	"github.com/toolenv/toolenv/internal/cli"
)

func newEvalCmd(e *env) *cobra.Command {
	var cf *configFlags
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Evaluate an agent and a model on tasks, with the papers' metrics",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := cf.resolve(e)
			if err != nil {
				return err
			}
			return runEval(cmd.Context(), e, cfg, e.command)
		},
	}
	cf = bindConfig(cmd.Flags(), bindEval)
	cmd.AddCommand(newEvalMergeCmd(e), newEvalCompareCmd(e), newEvalReportCmd(e), newEvalSTBCmd(e))
	cmd.AddCommand(newEvalFidelityCmd(e), newEvalScoreCmd(e), newEvalPreferenceCmd(e))
	return cmd
}

func runEval(ctx context.Context, e *env, cfg *harness.File, argv []string) error {
	ev, err := harness.Prepare(ctx, &cfg.Eval, &cfg.Config, harness.Options{Logger: e.logger(), Getenv: e.getenv, Progress: e.stderr, Command: argv})
	if err != nil {
		return err
	}
	defer ev.Close()
	ec := &cfg.Eval
	fmt.Fprintf(e.stderr, "toolenv: evaluating %s on %d task(s) × %d run(s), %d at a time, episodes in %s\n", ev.Agent().Name(), len(ev.Tasks), ec.Runs, ec.Concurrency, ev.Journal)
	res, err := ev.Run(ctx)
	if res == nil {
		return err
	}
	fmt.Fprint(e.stdout, report.Ending(ec.Out, ev.Info, res.Summary))
	return err
}

func newEvalMergeCmd(e *env) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge --out DIR SHARD_DIR...",
		Short: "Join the shards of an evaluation (or several evaluations) and write the reports",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("--out is required")
			}
			info, s, n, err := report.Merge(out, args)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "toolenv: merged %d episode(s) from %d folder(s)\n", n, len(args))
			fmt.Fprint(e.stdout, report.Ending(out, info, s))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "folder for the merged episodes and reports")
	return cmd
}

func newEvalReportCmd(e *env) *cobra.Command {
	var queueURL, runName string
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Write the reports of an evaluation folder again from its episodes (or of a queued run, from its store)",
		Args:  cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if queueURL != "" {
				return queueReport(cmd.Context(), e, queueURL, runName, args)
			}
			if len(args) != 1 {
				return usagef("report needs the evaluation folder (or --queue and --run-name)")
			}
			info, s, err := report.Rewrite(args[0])
			if err != nil {
				return err
			}
			fmt.Fprint(e.stdout, report.Ending(args[0], info, s))
			return nil
		},
	}
	cmd.Flags().StringVar(&queueURL, "queue", "", "read a run from this queue's store (postgres://… or an SQLite file), as toolenv eval --queue wrote it")
	cmd.Flags().StringVar(&runName, "run-name", "", "with --queue: the run's name (toolenv eval printed it; without it, the runs are listed)")
	return cmd
}

// queueReport writes the reports of a run in a queue, or lists the runs.
func queueReport(ctx context.Context, e *env, url, name string, args []string) error {
	if name != "" && len(args) != 1 {
		return usagef("report --queue --run-name %s needs the folder to write the reports into", name)
	}
	dir := ""
	if len(args) == 1 {
		dir = args[0]
	}
	q, runs, err := harness.QueueReport(ctx, url, name, dir, e.logger())
	if err != nil {
		return err
	}
	if q == nil {
		queue.WriteList(e.stdout, runs)
		return nil
	}
	if q.Remaining > 0 {
		fmt.Fprintf(e.stderr, "toolenv: run %s is not finished: %d episode(s) to go; these reports hold the %d finished\n", name, q.Remaining, q.Episodes)
	}
	fmt.Fprint(e.stdout, report.Ending(dir, q.Info, q.Summary))
	return nil
}

func newEvalCompareCmd(e *env) *cobra.Command {
	var htmlOut string
	cmd := &cobra.Command{
		Use:   "compare DIR DIR...",
		Short: "Put several evaluations side by side (Markdown on stdout, optionally HTML)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			evs, err := report.ReadEvaluations(args)
			if err != nil {
				return err
			}
			fmt.Fprint(e.stdout, report.CompareMarkdown(evs))
			if htmlOut != "" {
				if err := report.CompareHTMLFile(htmlOut, evs); err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "toolenv: wrote %s\n", htmlOut)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&htmlOut, "html", "", "also write the comparison as a self-contained HTML page")
	return cmd
}

func newEvalSTBCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stb",
		Short: "StableToolBench formats: convert raw answers, compute SoPR from recorded labels",
	}
	var cf *cli.Options[stb.ConvertConfig]
	convert := &cobra.Command{
		Use:   "convert ANSWER_DIR",
		Short: "Convert raw answers (answer/<model>/<group>/) to the converted format, as convert_to_answer_format.py",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := cf.Value().Convert(args[0], e.logger())
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Converted %d answers\n", n)
			return nil
		},
	}
	cf = cli.Bind(convert.Flags(), cli.Defaults[stb.ConvertConfig], false)
	var times int
	passrate := &cobra.Command{
		Use:   "passrate RESULTS.json...",
		Short: "Compute the Solvable Pass Rate from pass_rate_results files, as eval_pass_rate.py prints it",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, p := range args {
				r, err := stb.PassRate(p, times, e.logger())
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s: %d queries. %s\n", filepath.Base(p), r.Tasks, stb.FormatSolveRate(r))
			}
			return nil
		},
	}
	passrate.Flags().IntVar(&times, "evaluate-times", 0, "eval_pass_rate.py's --evaluate_times (0: the rounds recorded)")
	var refModel, outModel string
	winrate := &cobra.Command{
		Use:   "winrate PREFERENCE.json... --reference-model A --output-model B",
		Short: "Compute the Solvable Win Rate (SoWR) from eval_preference.py's save files, as it prints it",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, p := range args {
				line, err := stb.WinRateFile(p, refModel, outModel)
				if err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, line)
			}
			return nil
		},
	}
	winrate.Flags().StringVar(&refModel, "reference-model", "", "the reference model's name, as the file's entries name it (eval_preference.py's --reference_model)")
	winrate.Flags().StringVar(&outModel, "output-model", "", "the candidate model's name, as the file's entries name it (--output_model)")
	cmd.AddCommand(convert, passrate, winrate)
	return cmd
}
