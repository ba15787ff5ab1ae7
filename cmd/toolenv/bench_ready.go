package main

import (
	"os"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/devtools/bench"
)

func newBenchReadyCmd(e *env) *cobra.Command {
	var (
		f       *options[bench.ReadyOptions]
		jsonOut string
	)
	cmd := &cobra.Command{
		Use:   "ready",
		Short: "Measure how fast toolenv serve is ready, and how much memory it holds, for a large ToolBench set",
		Long: `Start "toolenv serve" over a ToolBench-format set as a child process --runs times,
each with a fresh store, and report the wall time until it listens, its CPU time
until then, its resident memory when ready and --settle later, and its peak; then
a tools/list page and two search_tools calls through the go-sdk client (the
first waits for the search index if the server, which builds it in the
background from ready, has not finished it; --settle 0s searches right after
ready) and the memory after them. The median run is the
figure.

Without --toolbench the set is generated (devtools/toolbenchgen: --apis APIs
shaped on StableToolBench's documentation, deterministic for --seed) into
--data-dir once and reused. --exe measures another toolenv binary the same way
(an older build, for a before/after figure).`,
		Example: `  toolenv bench ready                      # 50,000 generated APIs
  toolenv bench ready --apis 10000 --runs 5 --json ready.json
  toolenv bench ready --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction
  toolenv bench ready --exe /tmp/toolenv-old`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o := f.value()
			if o.Runs < 1 || o.APIs < 1 {
				return usagef("--runs and --apis must be at least 1")
			}
			o.Log = e.stderr
			rep, err := bench.Ready(cmd.Context(), *o)
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
	f = bindOptions(cmd.Flags(), func() bench.ReadyOptions {
		o := configDefaults[bench.ReadyOptions]()
		o.DataDir = os.TempDir()
		return o
	}, false)
	cmd.Flags().StringVar(&jsonOut, "json", "", "also write the report as JSON to this file")
	return cmd
}
