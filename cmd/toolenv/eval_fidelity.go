package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval/fidelity"
	"github.com/toolenv/toolenv/eval/harness"
)

func newEvalFidelityCmd(e *env) *cobra.Command {
	var (
		cf *configFlags
		ff *options[harness.FidelityConfig]
	)
	cmd := &cobra.Command{
		Use:   "fidelity --out DIR",
		Short: "Measure how faithfully the simulator imitates real APIs (MirrorAPI's BLEU, cosine and judges)",
		Long: `Answer every recorded real request again with the simulator under test — the
virtual backend "toolenv serve" builds from the same flags: the LLM simulator
(--llm-url/--llm-model/--sim-prompt sft|cot|stb) or, without one, the offline
synthesizer — bypassing the cache, and score each simulated response against the
real one as the MirrorAPI paper does (section 3.1): BLEU-4 exactly as NLTK computes
it, the cosine of the two responses' embeddings, and, with --judge-url and
--judge-model, the paper's LLM-as-a-judge rating (1-10) and documentation
following verdict.

Real answers are the store's entries of origin upstream or import (--store), the
lines of --pairs files ({"tool", "args", "response"}) and, with --doc-examples, the
tools' documented examples; only tools of the loaded collections (--toolbench,
--collection, --openapi, --demo) are scored, and --tool narrows them further. The
pair being scored is held out: it is never one of the simulator's few-shot
examples, nor an answer the synthesizer could copy.

Every simulator, embedding and judge request is recorded in DIR/records.db;
--replay scores again from the records with no network. The results are
DIR/summary.json, DIR/report.md, DIR/report.html and DIR/pairs.jsonl.`,
		Example: `  toolenv eval fidelity --demo --doc-examples --out runs/fidelity-synth     # the offline synthesizer against the demo's documented answers
  toolenv eval fidelity --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction --store cache.db \
      --llm-url http://127.0.0.1:8000/v1 --llm-model stabletoolbench/MirrorAPI --sim-prompt sft \
      --judge-url https://api.openai.com/v1 --judge-model gpt-4o --embed-url https://api.openai.com/v1 --embed-model text-embedding-3-small \
      --sample 20 --seed 1 --out runs/fidelity-mirrorapi
  toolenv eval fidelity --pairs recorded.jsonl --collection out/bird/rest --llm-url URL --llm-model M --out runs/f --replay`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := cf.resolve(e)
			if err != nil {
				return err
			}
			return runEvalFidelity(cmd.Context(), e, &cfg.Config, ff.value())
		},
	}
	ff = bindOptions(cmd.Flags(), harness.DefaultFidelity, false)
	cf = bindConfig(cmd.Flags(), bindEnv)
	return cmd
}

func runEvalFidelity(ctx context.Context, e *env, envCfg *environment.Config, fc *harness.FidelityConfig) error {
	res, err := harness.Fidelity(ctx, fc, envCfg, harness.Options{Logger: e.logger(), Getenv: e.getenv, Progress: e.stderr, Command: e.command})
	if res == nil {
		return err
	}
	if o := fidelity.Overview(res.Summary); o != "" {
		fmt.Fprintln(e.stdout, o)
	}
	var files []string
	for _, n := range fidelity.Files {
		files = append(files, filepath.Join(fc.Out, n))
	}
	fmt.Fprintf(e.stdout, "\nreports: %s\n", strings.Join(files, ", "))
	if res.Interrupted {
		fmt.Fprintf(e.stderr, "toolenv: interrupted; the %d pair(s) scored so far are in the reports\n", len(res.Scored))
	}
	return err
}
