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
		Long: `For each query: retrieve candidate APIs from the index, prompt the model few-shot
(the paper's Appendix A.1.1) or with chain of thought (A.1.2) for the API sequence
[["tool_name", "api_name"], ...], then ask it to reflect (A.1.3), telling it which
mappings exist between the APIs of its answer and the candidates. Sequences are
scored against the gold APIs (StableToolBench's relevant APIs, or the tools of an
NL2SQL task's gold calls) with set and order precision, recall and F1.

Without --model, only the retrieval baseline is scored: the top |gold| retrieved
APIs as the sequence, and the recall of the candidates.`,
		Example: `  toolenv map sequence --index map.db --queries ../shared/data/stabletoolbench/solvable_queries/test_instruction
  toolenv map sequence --index map.db --queries G1_instruction.json --llm-url http://127.0.0.1:8000/v1 --model mixtral-8x7b-instruct --style cot --out seq`,
		Args: cobra.NoArgs,
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
