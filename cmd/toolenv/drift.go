package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/drift"
)

type driftFlags struct {
	in         string
	toolbench  []string
	openapi    string
	demo       bool
	tasks      string
	out        string
	seed       uint64
	ops        []string
	rates      string
	version    string
	validation string
	mode       string
	feedback   string
	rules      string
	force      bool
}

func newDriftCmd(e *env) *cobra.Command {
	var f driftFlags
	cmd := &cobra.Command{
		Use:   "drift",
		Short: "Write the next version of a collection: seeded, semantics-preserving schema drift with a manifest, changelog and breaking-change report",
		Long: `Drift reads a collection (a folder, possibly itself drifted, or ToolBench docs, an
OpenAPI document, or the demo) and writes its next version into --out: the new
collection.json, tools.json and tasks.jsonl, manifest.json (every change, exact and
invertible), CHANGELOG.md, breaking.md/breaking.json (oasdiff), openapi.json and base/
(the original collection, whose backend keeps executing every call). Serve the result
with "toolenv serve --collection OUT". The same input, seed and options give
byte-identical output; chains work (drift a drifted folder again for v3).

Operators (--ops, in the order they run): ` + strings.Join(drift.OperatorNames(), ", ") + `.`,
		Example: `  toolenv drift --demo --out out/demo-v2 --seed 7
  toolenv drift --in out/demo-v2 --out out/demo-v3 --seed 8
  toolenv drift --in out/bird/slot --out out/bird/slot-v2 --seed 1 --ops rename,type,nest --rate rename=0.5
  toolenv drift --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction --out out/stb-v2 --seed 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("seed") {
				return usagef("--seed is required: the same seed gives the same drift")
			}
			return runDrift(cmd.Context(), e, &f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.in, "in", "", "collection folder to drift (a built collection, or a drifted one for the next version)")
	fs.StringArrayVar(&f.toolbench, "toolbench", nil, "drift ToolBench docs instead: a StableToolBench query file or folder (repeatable)")
	fs.StringVar(&f.openapi, "openapi", "", "drift an OpenAPI 3 document instead")
	fs.BoolVar(&f.demo, "demo", false, "drift the embedded demo collection")
	fs.StringVar(&f.tasks, "tasks", "", "tasks (JSONL) to translate to the new version (default: the source's own tasks)")
	fs.StringVar(&f.out, "out", "", "folder to write the new version into (required)")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of every random choice (required)")
	fs.StringSliceVar(&f.ops, "ops", nil, "operators to run, comma separated (default: all)")
	fs.StringVar(&f.rates, "rate", "", "per-operator rates, e.g. rename=0.5,type=0.2 (probability each eligible tool/parameter/field is changed)")
	fs.StringVar(&f.version, "version", "", "name of the new version (default: the next, v1 → v2)")
	fs.StringVar(&f.validation, "validation", "", "validation policy of the new version: strict (default) or lenient")
	fs.StringVar(&f.mode, "mode", "", "mode of the new version: strict (default; old calls are rejected) or compat (old calls are translated with a warning)")
	fs.StringVar(&f.feedback, "feedback", "", "feedback level of the new version: none, terse or helpful (default: the source's)")
	fs.StringVar(&f.rules, "rules", "", "folder of drift rules replacing the built-in ones (synonyms.tsv, abbreviations.tsv, actions.tsv, default_flips.tsv, nest_groups.json, error_styles.json, paths.json)")
	fs.BoolVar(&f.force, "force", false, "replace --out whatever it holds")
	return cmd
}

func runDrift(ctx context.Context, e *env, f *driftFlags) error {
	rates, err := drift.ParseRates(f.rates)
	if err != nil {
		return err
	}
	d, err := drift.Run(ctx, drift.Job{
		Source: drift.Source{In: f.in, ToolBench: f.toolbench, OpenAPI: f.openapi, Demo: f.demo},
		Tasks:  f.tasks, Rules: f.rules, Out: f.out, Force: f.force, Logger: e.logger(),
		Options: drift.Options{Seed: f.seed, Operators: f.ops, Rates: rates, Version: f.version, Validation: f.validation, Mode: f.mode, Feedback: f.feedback},
	})
	if err != nil {
		return err
	}
	fmt.Fprint(e.stdout, d.Summary(f.out))
	return nil
}
