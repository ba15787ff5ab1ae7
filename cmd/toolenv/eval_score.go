package main

import (
	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/eval/score"
)

func newEvalScoreCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "score",
		Short: "Score a file of predictions against gold with NESTful's scorer or BFCL's checker, exactly",
		Long: `Score outputs that did not come from toolenv's harness with the reference
metrics toolenv reproduces exactly: NESTful's calculate_scores (nestful) and
BFCL's AST checker (bfcl). The input is the reference fixtures' format or JSON
Lines of the same records. With --out DIR the report is written as
DIR/score.md and DIR/score.json; without it the Markdown report goes to
standard output.`,
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
		Long: `Score (gold, prediction) call sequences with NESTful's calculate_scores,
exactly: its parser's grounding (var_result dropped, "$varN.x$" rewritten to
the API's name), Python's str of values, scikit-learn 1.2.1's macro averaging.
Each set is scored as a whole and each sample alone.

FILE is {"sets": [{"name", "samples": [{"id", "gold", "pred"}]}]} (the
fixture's format), or a JSON array or JSON Lines of {"id", "gold", "pred"}
records (NESTful's "output" and "generated_text" accepted too; an optional
"set" field groups them). gold and pred are the JSON text of a list of
{"name", "arguments", "label"} calls, or the list itself.

The reference's quirks are kept unless a flag corrects them: --unordered-objects
(key order inside argument objects ignored), --single-label-as-multi-label (no
binary target for a set with one gold label), --scalar-prediction-as-parse-error
(a prediction that is a number, boolean or null is a parse error instead of
stopping), or --corrected for the three. --skip-grounding is the reference's
own skip_grounding. --reference compares the scores with NESTful's own output
for the same file.`,
		Example: `  toolenv eval score nestful --in ../shared/fixtures/reference-metrics/nestful/cases.json \
      --reference ../shared/fixtures/reference-metrics/nestful/reference.json --out out/score-nestful
  toolenv eval score nestful --in predictions.jsonl --corrected`,
		Args: cobra.NoArgs,
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
		Long: `Check decoded model outputs with BFCL's AST checker, verdict for verdict, in
two modes: as the leaderboard runs it (parallel categories in any order) and
call by call in output order.

FILE is a JSON array or JSON Lines of records {"id", "category", "tools",
"gold", "model_output"} (the fixture's format): tools are
[{"name", "properties", "required"}], gold the expected calls
[{"name", "arguments"}], model_output the calls as BFCL's decoder gives them
([{name: {param: value}}], null when it could not be decoded). A record may
carry BFCL's own "function" descriptions and "ground_truth" possible answers
instead; --functions and --answers join BFCL's question and possible_answer
files by id. With only the gold call, each value is the only one accepted and
types are read from it: BFCL's possible answers, which list every accepted
value, are needed for an exact verdict where a model gives another one.
Records that carry "bfcl_ast" and "bfcl_ordered" are compared with them.`,
		Example: `  toolenv eval score bfcl --in ../shared/fixtures/reference-metrics/bfcl/cases.json --out out/score-bfcl
  toolenv eval score bfcl --in outputs.jsonl --functions BFCL_v4_multiple.json --answers possible_answer/BFCL_v4_multiple.json`,
		Args: cobra.NoArgs,
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
	var pf *options[harness.PredictionsConfig]
	cmd := &cobra.Command{
		Use:   "mirrorapi --in generated_predictions.jsonl --out DIR",
		Short: "Score recorded simulator predictions against their labels with MirrorAPI's measures (BLEU-4 as NLTK computes it, cosine, judge)",
		Long: `Score a file of recorded simulator predictions — LLaMA-Factory's
generated_predictions.jsonl, {"prompt", "predict", "label"} per line, the form
MirrorAPI-Bench's predictions are released in — with the MirrorAPI paper's
measures: BLEU-4 exactly as NLTK computes it (sentence_bleu per prediction,
averaged × 100, and corpus_bleu; characters and smoothing method3 by default),
with --embed-url and --embed-model the cosine of the two texts' embeddings, and
with --judge-url and --judge-model the paper's LLM-as-a-judge rating (1-10), the
prediction's prompt being the question. Every model named is checked before
anything is written; its exchanges are recorded in DIR/records.db (--replay
scores again from them). The reports are DIR/predictions.md and
DIR/predictions.json.`,
		Example: `  toolenv eval score mirrorapi --in saves/mirrorapi/predict/generated_predictions.jsonl --out out/mirror-bench
  toolenv eval score mirrorapi --in generated_predictions.jsonl --out out/m \
      --embed-url https://api.openai.com/v1 --embed-model text-embedding-3-small --judge-url https://api.openai.com/v1 --judge-model gpt-4o`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := harness.ScorePredictions(cmd.Context(), pf.value(), harness.Options{Logger: e.logger(), Getenv: e.getenv, Progress: e.stderr, Command: e.command}, e.stdout)
			return err
		},
	}
	pf = bindOptions(cmd.Flags(), harness.DefaultPredictions, false)
	return cmd
}

func newEvalPreferenceCmd(e *env) *cobra.Command {
	var pf *options[harness.PreferenceConfig]
	cmd := &cobra.Command{
		Use:   "preference --reference DIR --candidate DIR --judge-url URL --judge-model M --out DIR",
		Short: "StableToolBench's Solvable Win Rate (SoWR) of one evaluation against another, as eval_preference.py computes it",
		Long: `Compare a candidate evaluation with a reference one query by query, over
--rounds judging rounds, as StableToolBench's eval_preference.py does: each
round the judge's preference evaluator judges both answers' status (as for
SoPR) and, unless exactly one is solved (or, none solved, exactly one unsure),
asks the judge which is better (select_better_answer); the candidate wins a
query when more rounds preferred it, and SoWR is its share of the queries. A
query one run lacks counts for the other. The results are eval_preference.py's
save files (DIR/<split>_<reference>_<candidate>.json, which "toolenv eval stb
winrate" reads), DIR/preference.json with every verdict, and DIR/records.db
(--replay judges again from it).`,
		Example: `  toolenv eval preference --reference runs/gpt4-dfs --candidate runs/qwen-react --judge-url https://api.openai.com/v1 --judge-model gpt-4o --out runs/sowr`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := harness.Preference(cmd.Context(), pf.value(), harness.Options{Logger: e.logger(), Getenv: e.getenv, Progress: e.stderr, Command: e.command}, e.stdout)
			return err
		},
	}
	pf = bindOptions(cmd.Flags(), harness.DefaultPreference, false)
	return cmd
}
