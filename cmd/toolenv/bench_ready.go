package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/bench"
)

func newBenchReadyCmd(e *env) *cobra.Command {
	var (
		o       bench.ReadyOptions
		jsonOut string
	)
	cmd := &cobra.Command{
		Use:   "ready",
		Short: "Measure how fast toolenv serve is ready, and how much memory it holds, for a large ToolBench set",
		Long: `Start "toolenv serve" over a ToolBench-format set as a child process --runs times,
each with a fresh store, and report the wall time until it listens, its CPU time
until then, its resident memory when ready and --settle later, and its peak; then
a tools/list page and two search_tools calls through the go-sdk client (the
first builds the search index) and the memory after them. The median run is the
figure.

Without --toolbench the set is generated (internal/toolbenchgen: --apis APIs
shaped on StableToolBench's documentation, deterministic for --seed) into
--data-dir once and reused. --exe measures another toolenv binary the same way
(an older build, for a before/after figure).`,
		Example: `  toolenv bench ready                      # 50,000 generated APIs
  toolenv bench ready --apis 10000 --runs 5 --json ready.json
  toolenv bench ready --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction
  toolenv bench ready --exe /tmp/toolenv-old`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Runs < 1 || o.APIs < 1 {
				return usagef("--runs and --apis must be at least 1")
			}
			o.Log = e.stderr
			rep, err := bench.Ready(cmd.Context(), o)
			if err != nil {
				return err
			}
			bench.PrintReady(e.stdout, rep)
			if jsonOut != "" {
				return toolenv.WriteJSONFile(jsonOut, rep)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&o.APIs, "apis", 50000, "APIs in the generated set (ToolBench has 49,937)")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the generated set")
	fs.StringArrayVar(&o.Docs, "toolbench", nil, "serve these ToolBench docs instead of a generated set (repeatable)")
	fs.IntVar(&o.Runs, "runs", 3, "start the server this many times; the median run is reported")
	fs.DurationVar(&o.Settle, "settle", 5*time.Second, "read the memory again this long after ready")
	fs.StringVar(&o.Executable, "exe", "", "the toolenv binary to measure (default: this one)")
	fs.StringVar(&o.DataDir, "data-dir", os.TempDir(), "where generated sets are kept between runs")
	fs.StringVar(&jsonOut, "json", "", "also write the report as JSON to this file")
	return cmd
}
