package main

import (
	"io"
	"log/slog"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/eval/mapeval"
)

func newMapEvalCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure mappings against exact ground truth, and what they are worth at work",
	}
	cmd.AddCommand(newMapEvalDriftCmd(e), newMapEvalSELCmd(e), newMapEvalObfuscationCmd(e), newMapEvalRepairCmd(e), newMapEvalFailoverCmd(e))
	return cmd
}

func newMapEvalDriftCmd(e *env) *cobra.Command {
	var (
		f      *options[mapeval.DriftConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "drift",
		Short: "Map each drifted collection's base version onto its current one and score it against the drift manifest",
		Long: `For each drifted collection folder (written by toolenv drift), map the tools of its
base version onto those of its current version with the structural mapper alone
(no model), and score the result against the manifest: precision, recall and F1
of the tool pairs and of the field alignments (arguments and response fields),
over everything and over what the drift changed.`,
		Example: `  toolenv drift --in out/bird/rest --out out/drift/rest-v2 --seed 1
  toolenv map eval drift --collection out/drift/rest-v2 --collection out/drift/stb-v2 --out out/map-eval`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			results, err := f.value().Run(cmd.Context(), e.logger(), e.command)
			if err != nil {
				return err
			}
			return show(e, asJSON, results, func(w io.Writer) { mapeval.DriftMarkdown(w, results) })
		},
	}
	f = bindOptions(cmd.Flags(), configDefaults[mapeval.DriftConfig], false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

func newMapEvalSELCmd(e *env) *cobra.Command {
	var (
		f      *options[mapeval.SELConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "sel",
		Short: "Map an NL2SQL build's SEL tools onto its SLOT tools and score them against the SEL tools' own metadata",
		Long: `Every SEL tool of an NL2SQL build names the SLOT operation it specialises and the
arguments it fixes (select_data_equal_to is filter_data with condition equal_to).
This maps SEL onto SLOT with the structural mapper and scores the tool pairs, the
argument alignments and the fixed arguments against that exact truth.`,
		Example: `  toolenv map eval sel --sel out/bird/sel --slot out/bird/slot`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.value().Run(cmd.Context())
			if err != nil {
				return err
			}
			return show(e, asJSON, s, func(w io.Writer) { mapeval.SELMarkdown(w, s) })
		},
	}
	f = bindOptions(cmd.Flags(), configDefaults[mapeval.SELConfig], false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the scores as JSON")
	return cmd
}

func newMapEvalObfuscationCmd(e *env) *cobra.Command {
	var (
		f      *options[mapeval.ObfuscationConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "obfuscation",
		Short: "Map an NL2SQL collection onto its obfuscated variant (FUNC_n, ARG_n) and score it against its mapping file",
		Long: `toolenv build bird --obfuscate writes variants whose endpoints are named FUNC_n and
whose arguments are named ARG_n, descriptions kept, with the mapping in
its mapping file (<folder>.mapping.json beside the folder). Names carry nothing there: the structural mapper has only
descriptions, types and response structure to go on.`,
		Example: `  toolenv map eval obfuscation --original out/bird/rest --obfuscated out/bird/rest-obfuscated`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, orig, obf, err := f.value().Run(cmd.Context())
			if err != nil {
				return err
			}
			return show(e, asJSON, s, func(w io.Writer) { mapeval.ObfuscationMarkdown(w, orig, obf, s) })
		},
	}
	f = bindOptions(cmd.Flags(), configDefaults[mapeval.ObfuscationConfig], false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the scores as JSON")
	return cmd
}

// workOptions are the options of the measurements at work: the
// environments they open log at warn level and above.
func workOptions(e *env) mapeval.WorkOptions {
	quiet := &env{stdin: e.stdin, stdout: e.stdout, stderr: e.stderr, getenv: e.getenv, logJSON: e.logJSON}
	quiet.logLevel.Set(max(e.logLevel.Level(), slog.LevelWarn))
	return mapeval.WorkOptions{Logger: e.logger(), EnvLogger: quiet.logger(), Getenv: e.getenv, Progress: e.stderr}
}

func newMapEvalRepairCmd(e *env) *cobra.Command {
	var (
		f      *options[mapeval.RepairConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "repair",
		Short: "Completion of calls written against old documentation on a drifted collection, without and with the repair adapter",
		Long: `Run the tasks of a collection's old version against its drifted version (strict
mode), once as it is and once with --repair (the adapter maps the old
documentation onto the current tools structurally, without the manifest), and
report the completion: every call succeeded, and for NL2SQL tasks the answer
equals the gold answer.

Agents: "oracle" executes the old gold calls; "direct-replay" is the direct agent
with a model that replays what a model shown the old documentation writes (the old
gold calls, in its answer format) from a loopback OpenAI-compatible server, so the
calls pass through the agent's parser and executor. Without --tasks, each API of
the old version with documented example values is called once (StableToolBench
has no gold call sequences).`,
		Example: `  toolenv drift --in out/bird/rest --out out/drift/rest-v2 --seed 1
  toolenv map eval repair --collection out/drift/rest-v2 --tasks out/bird/rest/tasks.jsonl
  toolenv map eval repair --collection out/drift/stb-v2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := f.value().Run(cmd.Context(), workOptions(e))
			if rep == nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, rep)
			}
			rep.Markdown(e.stdout)
			return cmd.Context().Err()
		},
	}
	f = bindOptions(cmd.Flags(), configDefaults[mapeval.RepairConfig], false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

func newMapEvalFailoverCmd(e *env) *cobra.Command {
	var (
		f      *options[mapeval.FailoverConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "failover",
		Short: "Completion of a collection's tasks when its backend is down, without and with failover to a structurally mapped alternative",
		Long: `Serve a primary collection and an alternative one, take every endpoint of the
primary down (faults: 503 on every call), and run the primary's tasks with the
oracle: once as it is, once with failover through the structural mapping from the
primary onto the alternative (computed here from their documentation alone).
Reports how many tasks still complete and reach the gold answer.

The NL2SQL build's obfuscated REST variant is a ready alternative provider: the
same queries behind endpoints named FUNC_n with arguments ARG_n, so the mapping
has only descriptions, types and values to go on.`,
		Example: `  toolenv build bird --data ../shared/data/bird --out out/bird --obfuscate
  toolenv map eval failover --primary out/bird/rest --alternative out/bird/rest-obfuscated`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := f.value().Run(cmd.Context(), workOptions(e))
			if rep == nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, rep)
			}
			rep.Markdown(e.stdout)
			return cmd.Context().Err()
		},
	}
	f = bindOptions(cmd.Flags(), configDefaults[mapeval.FailoverConfig], false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}
