package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/internal/cli"
)

func newDriftCmd(e *env) *cobra.Command {
	var f *cli.Options[drift.Config]
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
			cfg := f.Value()
			job, err := cfg.Job(e.logger())
			if err != nil {
				return err
			}
			ran, err := drift.RunCached(cmd.Context(), job, drift.CacheAt(cfg.BuildCache, e.logger()))
			if err != nil {
				return err
			}
			fmt.Fprint(e.stdout, ran.Summary)
			return nil
		},
	}
	f = cli.Bind(cmd.Flags(), drift.DefaultConfig, false)
	return cmd
}
