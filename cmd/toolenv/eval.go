package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/eval/queue"
	"github.com/toolenv/toolenv/eval/report"
	"github.com/toolenv/toolenv/eval/stb"
)

func newEvalCmd(e *env) *cobra.Command {
	var cf *configFlags
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Evaluate an agent and a model on tasks, with the papers' metrics",
		Long: `Run an agent (direct, react, cot, dfsdt or oracle) with a model behind any
OpenAI-compatible endpoint over tasks, in toolenv (in-process by default, or a
running server with --env-url), and measure it: completion rate, intent and slot
P/R/F1 (NESTful scorer and position-aware), sequence match, set/order P/R/F1, BFCL
error categories, ReAct loop statistics, StableToolBench's SoPR and MirrorAPI's FAC.

--tasks is a toolenv collection folder (e.g. one flavor built by "toolenv build
bird") or StableToolBench query files (a file or a folder of them); repeat it to
evaluate several. Every finished episode is appended to DIR/episodes.jsonl at
once; Ctrl-C keeps them and --resume continues. Every model and judge request is
recorded in DIR/records.db: --replay re-runs the evaluation from the records with
no network. The reports are DIR/summary.json, DIR/report.md and DIR/report.html.`,
		Example: `  toolenv eval --tasks out/bird/slot --agent oracle --out runs/oracle-slot
  toolenv eval --tasks out/bird/rest --agent direct --model http://127.0.0.1:8000/v1 --model-name Qwen/Qwen2.5-7B-Instruct --out runs/qwen-rest
  toolenv eval --tasks out/bird/sel --agent react --model http://127.0.0.1:11434/v1 --model-name qwen2.5:7b --runs 3 --concurrency 8 --out runs/react-sel
  OPENAI_API_KEY=... toolenv eval --tasks ../shared/data/stabletoolbench/solvable_queries/test_instruction/G1_instruction.json \
      --agent dfsdt --model https://api.openai.com/v1 --model-name gpt-4o-mini --judge-model gpt-4o --fac --out runs/dfs-g1
  toolenv eval --tasks out/bird/rest --agent direct --model URL --model-name M --out runs/x --replay
  toolenv eval --tasks out/bird/slot --agent react --model URL --model-name M --shard 0/4 --out runs/r   # then: toolenv eval merge --out runs/r runs/r`,
		Args: cobra.NoArgs,
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
	printOverview(e, ec.Out, ev.Info, res.Summary)
	return err
}

// printOverview prints the overview table and where the reports are.
func printOverview(e *env, dir string, info *eval.RunInfo, s *eval.Summary) {
	if o := report.Overview(info, s); o != "" {
		fmt.Fprintln(e.stdout, o)
	}
	fmt.Fprintf(e.stdout, "\nreports: %s, %s, %s\n", filepath.Join(dir, "summary.json"), filepath.Join(dir, "report.md"), filepath.Join(dir, "report.html"))
}

func newEvalMergeCmd(e *env) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge --out DIR SHARD_DIR...",
		Short: "Join the shards of an evaluation (or several evaluations) and write the reports",
		Example: `  toolenv eval merge --out runs/all runs/shard0 runs/shard1
  toolenv eval merge --out runs/r runs/r   # shards written into the same folder`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("--out is required")
			}
			info, s, n, err := report.Merge(out, args)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "toolenv: merged %d episode(s) from %d folder(s)\n", n, len(args))
			printOverview(e, out, info, s)
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
		Long: `Write DIR/summary.json, DIR/report.md and DIR/report.html from the episodes in DIR.
With --queue, read the run named by --run-name from the queue's store instead (every
episode its workers finished, on any machine) and write its run.json and episodes.jsonl
into DIR too; without --run-name it lists the store's runs.`,
		Example: `  toolenv eval report runs/react-sel
  toolenv eval report --queue postgres://toolenv@db/toolenv --run-name sweep-1 runs/sweep-1`,
		Args: cobra.RangeArgs(0, 1),
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
			printOverview(e, args[0], info, s)
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
	printOverview(e, dir, q.Info, q.Summary)
	return nil
}

func newEvalCompareCmd(e *env) *cobra.Command {
	var htmlOut string
	cmd := &cobra.Command{
		Use:     "compare DIR DIR...",
		Short:   "Put several evaluations side by side (Markdown on stdout, optionally HTML)",
		Example: `  toolenv eval compare runs/qwen-rest runs/llama-rest --html compare.html`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			evs, err := report.ReadEvaluations(args)
			if err != nil {
				return err
			}
			fmt.Fprint(e.stdout, report.CompareMarkdown(evs))
			if htmlOut != "" {
				fh, err := os.Create(htmlOut)
				if err != nil {
					return err
				}
				defer fh.Close()
				if err := report.CompareHTML(fh, evs); err != nil {
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
	var cf *options[stb.ConvertConfig]
	convert := &cobra.Command{
		Use:     "convert ANSWER_DIR",
		Short:   "Convert raw answers (answer/<model>/<group>/) to the converted format, as convert_to_answer_format.py",
		Example: `  toolenv eval stb convert ../shared/data/stabletoolbench/data_example/answer/virtual_chatgpt_dfs/G1_instruction --method DFS_woFilter_w2 --out G1_instruction.json`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := cf.value().Convert(args[0], e.logger())
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Converted %d answers\n", n)
			return nil
		},
	}
	cf = bindOptions(convert.Flags(), configDefaults[stb.ConvertConfig], false)
	var times int
	passrate := &cobra.Command{
		Use:     "passrate RESULTS.json...",
		Short:   "Compute the Solvable Pass Rate from pass_rate_results files, as eval_pass_rate.py prints it",
		Example: `  toolenv eval stb passrate ../shared/data/stabletoolbench/data_example/pass_rate_results/virtual_chatgpt_cot/G1_instruction_virtual_chatgpt_cot.json --evaluate-times 3`,
		Args:    cobra.MinimumNArgs(1),
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
		Use:     "winrate PREFERENCE.json... --reference-model A --output-model B",
		Short:   "Compute the Solvable Win Rate (SoWR) from eval_preference.py's save files, as it prints it",
		Example: `  toolenv eval stb winrate preference_results/G1_instruction_gpt-4-0613_dfs_toolllama.json --reference-model gpt-4-0613_dfs --output-model toolllama`,
		Args:    cobra.MinimumNArgs(1),
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
