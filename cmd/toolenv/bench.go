package main

import (
	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/bench"
)

func newBenchCmd(e *env) *cobra.Command {
	var (
		f       *options[bench.Options]
		jsonOut string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure /virtual cache hits against a bare net/http handler returning the same bytes",
		Long: `Start "toolenv serve" as a child process on loopback, with a fresh store holding a
recorded answer for one call of every tool, then drive POST /virtual with a
closed-loop load generator (--connections concurrent connections for --duration)
and report requests/s, latency percentiles and the server's CPU time per request.
With --baseline (default) it measures, in the same run and the same way, a minimal
net/http handler (another child process) that returns the same response bytes,
alternating the two over --rounds, and reports toolenv's share of its throughput.
With --toolbench it first reports how long loading the docs takes and the
resident memory afterwards.`,
		Example: `  toolenv bench
  toolenv bench --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction --connections 64 --duration 10s --json bench.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o := f.value()
			o.Log, o.Logger, o.Command = e.stderr, e.logger(), e.command
			rep, err := bench.Run(cmd.Context(), *o)
			if err != nil {
				return err
			}
			bench.Print(e.stdout, rep)
			if jsonOut != "" {
				return toolenv.WriteJSONFile(jsonOut, rep)
			}
			return nil
		},
	}
	f = bindOptions(cmd.Flags(), configDefaults[bench.Options], false)
	cmd.Flags().StringVar(&jsonOut, "json", "", "also write the report as JSON to this file")
	cmd.AddCommand(newBenchBareCmd(e), newBenchReadyCmd(e))
	return cmd
}

// newBenchBareCmd is the baseline server of toolenv bench.
func newBenchBareCmd(e *env) *cobra.Command {
	var answersFile, addr string
	cmd := &cobra.Command{
		Use:    "bare",
		Short:  "Serve the baseline for toolenv bench (a bare handler returning recorded bytes)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return bench.ServeBare(cmd.Context(), answersFile, addr, e.stdout)
		},
	}
	cmd.Flags().StringVar(&answersFile, "answers", "", "JSON array of response bodies")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "address to listen on")
	return cmd
}
