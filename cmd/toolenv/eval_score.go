package main

import (
	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/eval/score"
	"github.com/toolenv/toolenv/internal/cli"
)

func newEvalScoreCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "score",
		Short: "Score a file of predictions against gold with NESTful's scorer or BFCL's checker, exactly",
	}
	cmd.AddCommand(newEvalScoreNestfulCmd(e), newEvalScoreBFCLCmd(e), newEvalScoreMirrorAPICmd(e))
	return cmd
}

func newEvalScoreNestfulCmd(e *env) *cobra.Command {
	var in, out, reference, parser, modelName string
	var opt metrics.NestfulOptions
	var corrected bool
	cmd := &cobra.Command{
		Use:   "nestful --in FILE [--out DIR]",
		Short: "NESTful's intent/slot P/R/F1 and partial/full sequence match, as its own scorer computes them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if in == "" {
				return usagef("--in FILE is required: the predictions and gold to score")
			}
			rep, err := score.ScoreNestfulFile(cmd.Context(), in, score.NestfulFileOptions{Options: opt, Parser: parser, Model: modelName, Corrected: corrected, Reference: reference}, e.stderr)
			if err != nil {
				return err
			}
			return score.Emit(e.stdout, out, score.NestfulMarkdown(rep), rep, rep.Overview())
		},
	}
	f := cmd.Flags()
	f.StringVar(&in, "in", "", "the file of samples (fixture JSON, JSON array or JSON Lines)")
	f.StringVar(&out, "out", "", "folder for score.md and score.json (default: the Markdown report on standard output)")
	f.StringVar(&reference, "reference", "", "NESTful's own output for the same file (the fixture's reference.json format), to compare with")
	f.BoolVar(&opt.SkipGrounding, "skip-grounding", false, "score the calls as written (the reference's skip_grounding): var_result kept, references left as labels")
	f.BoolVar(&opt.UnorderedObjects, "unordered-objects", false, "correction: ignore the key order of objects inside argument values")
	f.BoolVar(&opt.SingleLabelAsMultiLabel, "single-label-as-multi-label", false, "correction: score a set with one gold label as multi-label, not as scikit-learn's binary target")
	f.BoolVar(&opt.ScalarPredictionAsParseError, "scalar-prediction-as-parse-error", false, "correction: a prediction that is a JSON number, boolean or null is a parse error instead of stopping the scorer")
	f.BoolVar(&corrected, "corrected", false, "all three corrections")
	f.StringVar(&parser, "parser", "", "the reference's output parser that reads the predictions: granite (parse_granite_3_1_output), llama (parse_llama_3_output), hammer (parse_Hammer2_0_7b), agent (xLAM's parse_xLAM_1b_fc_r); default: as NESTful's scorer.py picks it for --model-name, else granite")
	f.StringVar(&modelName, "model-name", "", "the model whose outputs these are, as NESTful's scorer.py names it (e.g. Llama-3.1-8B-Instruct, Hammer2.0-7b, xLAM-7b-fc-r): picks the parser as the reference does")
	return cmd
}

func newEvalScoreBFCLCmd(e *env) *cobra.Command {
	var in, out, functions, answers, model, format string
	var underscore bool
	cmd := &cobra.Command{
		Use:   "bfcl --in FILE [--out DIR]",
		Short: "BFCL's AST checker verdicts (error_type), any order for parallel categories and call by call",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if in == "" {
				return usagef("--in FILE is required: the model outputs to check")
			}
			read := score.BFCLReadOptions{Functions: functions, Answers: answers, Model: model, Format: format}
			if cmd.Flags().Changed("underscore-names") {
				read.Underscore = &underscore
			}
			rep, err := score.ScoreBFCLFile(cmd.Context(), in, read, metrics.BFCLOptions{UnderscoreNames: underscore}, e.stderr)
			if err != nil {
				return err
			}
			return score.Emit(e.stdout, out, score.BFCLMarkdown(rep), rep, rep.Overview())
		},
	}
	f := cmd.Flags()
	f.StringVar(&in, "in", "", "the file of cases (JSON array or JSON Lines)")
	f.StringVar(&out, "out", "", "folder for score.md and score.json (default: the Markdown report on standard output)")
	f.StringVar(&functions, "functions", "", `BFCL's question file ({"id", "function"} per line), joined by id`)
	f.StringVar(&answers, "answers", "", `BFCL's possible_answer file ({"id", "ground_truth"} per line), joined by id`)
	f.BoolVar(&underscore, "underscore-names", false, "expect '.' in function names written '_' (BFCL's handling of OpenAI, Mistral and Google function-calling models; default for raw results: from the model's name)")
	f.StringVar(&model, "model", "", "the model's name as BFCL writes it, for raw result files (default: the result file's folder, as in BFCL's result/<model>/)")
	f.StringVar(&format, "format", "", "how raw results are decoded: python (prompting models) or fc (function-calling models; default: from the model's name, -FC)")
	return cmd
}

func newEvalScoreMirrorAPICmd(e *env) *cobra.Command {
	var pf *cli.Options[harness.PredictionsConfig]
	cmd := &cobra.Command{
		Use:   "mirrorapi --in generated_predictions.jsonl --out DIR",
		Short: "Score recorded simulator predictions against their labels with MirrorAPI's measures (BLEU-4 as NLTK computes it, cosine, judge)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := harness.ScorePredictions(cmd.Context(), pf.Value(), harness.Options{Logger: e.logger(), Getenv: e.getenv, Progress: e.stderr, Command: e.command}, e.stdout)
			return err
		},
	}
	pf = cli.Bind(cmd.Flags(), harness.DefaultPredictions, false)
	return cmd
}

func newEvalPreferenceCmd(e *env) *cobra.Command {
	var pf *cli.Options[harness.PreferenceConfig]
	cmd := &cobra.Command{
		Use:   "preference --reference DIR --candidate DIR --judge-url URL --judge-model M --out DIR",
		Short: "StableToolBench's Solvable Win Rate (SoWR) of one evaluation against another, as eval_preference.py computes it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := harness.Preference(cmd.Context(), pf.Value(), harness.Options{Logger: e.logger(), Getenv: e.getenv, Progress: e.stderr, Command: e.command}, e.stdout)
			return err
		},
	}
	pf = cli.Bind(cmd.Flags(), harness.DefaultPreference, false)
	return cmd
}
