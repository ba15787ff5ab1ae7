package main

import (
	"os"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/mapping/index"
	"github.com/toolenv/toolenv/mapping/probe"
	"github.com/toolenv/toolenv/mapping/sequence"
)

func newMapSequenceCmd(e *env) *cobra.Command {
	var (
		mf        modelFlags
		indexPath string
		queries   []string
		out       string
		style     string
		k, shots  int
		limit     int
		noReflect bool
		mode      string
		asJSON    bool
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
			ctx := cmd.Context()
			if len(queries) == 0 {
				return usagef("--queries is required: StableToolBench query files or a folder of them, or tasks (.jsonl)")
			}
			if style != sequence.FewShot && style != sequence.CoT {
				return usagef("--style %q: want fewshot or cot", style)
			}
			tasks, err := sequence.ReadTasks(queries)
			if err != nil {
				return err
			}
			if limit > 0 && len(tasks) > limit {
				tasks = tasks[:limit]
			}
			ix, err := index.Open(ctx, indexPath, index.OpenOptions{Logger: e.logger()})
			if err != nil {
				return toolenv.Errorw(toolenv.StatusNotFound, "", "%v", err)
			}
			defer ix.Close()
			switch index.Mode(mode) {
			case "", index.Hybrid, index.Lexical, index.Vector:
			default:
				return usagef("--search-mode %q: want hybrid, lexical or vector", mode)
			}
			retr := probe.IndexRetriever{Index: ix, Options: index.SearchOptions{Mode: index.Mode(mode), MaxAlternatives: -1}}
			var bar *progress.Bar
			eo := sequence.EvalOptions{SearchMode: mode, Options: sequence.Options{
				Model: mf.model, Style: style, K: k, Shots: shots, NoReflection: noReflect, Mappings: ix.Mappings(),
				Temperature: mf.temperature, Seed: mf.seed, Logger: e.logger(),
			}}
			if mf.model != "" {
				client, closer, err := mf.client(cmd, e)
				if err != nil {
					return err
				}
				defer closer.Close()
				byName := map[string]*toolenv.Tool{}
				for _, t := range ix.Tools() {
					byName[t.Name] = t
				}
				bar = progress.New(e.stderr, len(tasks), "sequence")
				eo.Chat, eo.Tool = client, func(n string) *toolenv.Tool { return byName[n] }
				eo.Progress = func(done, total int) { bar.Add(1) }
			}
			rep, outs, base := sequence.Evaluate(ctx, retr, tasks, eo)
			if bar != nil {
				bar.Finish()
			}
			rep.Provenance = buildinfo.Provenance(os.Args, map[string]any{"index": indexPath, "queries": queries, "style": style, "k": k, "shots": shots,
				"limit": limit, "reflection": !noReflect, "model": mf.model, "temperature": mf.temperature, "seed": mf.seed})
			if out != "" {
				if err := sequence.Write(out, rep, outs, base); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(e.stdout, rep)
			}
			rep.Markdown(e.stdout)
			return ctx.Err()
		},
	}
	mf.register(cmd.Flags())
	cmd.Flags().StringVar(&indexPath, "index", defaultIndexPath(), "the tool index (from toolenv map index)")
	cmd.Flags().StringArrayVar(&queries, "queries", nil, "StableToolBench query files or folders, or tasks (.jsonl) (repeatable)")
	cmd.Flags().StringVar(&out, "out", "", "write sequence.json and sequence.md into this folder")
	cmd.Flags().StringVar(&style, "style", sequence.FewShot, "prompt style: fewshot or cot")
	cmd.Flags().IntVarP(&k, "top", "k", 10, "candidate APIs retrieved per query")
	cmd.Flags().IntVar(&shots, "shots", 3, "solved examples in the prompt")
	cmd.Flags().IntVar(&limit, "limit", 0, "sequence only the first N queries")
	cmd.Flags().BoolVar(&noReflect, "no-reflection", false, "skip the self-reflection pass")
	cmd.Flags().StringVar(&mode, "search-mode", "", "retrieval: hybrid, lexical or vector (default: hybrid when the index has vectors)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
