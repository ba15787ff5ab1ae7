package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/bench"
)

func newBenchCmd(e *env) *cobra.Command {
	var (
		docs          []string
		connections   int
		duration      time.Duration
		warmup        time.Duration
		baseline      bool
		target        string
		jsonOut       string
		maxTools      int
		rounds        int
		canonicalOnly bool
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
			rep, err := bench.Run(cmd.Context(), bench.Options{Docs: docs, Connections: connections, Duration: duration, Warmup: warmup,
				Baseline: baseline, Target: target, MaxTools: maxTools, Rounds: rounds, CanonicalOnly: canonicalOnly, Log: e.stderr, Logger: e.logger(), Command: os.Args})
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
	fs := cmd.Flags()
	fs.StringArrayVar(&docs, "toolbench", nil, "ToolBench docs to serve (default: the demo collection)")
	fs.IntVar(&connections, "connections", 64, "concurrent connections")
	fs.DurationVar(&duration, "duration", 10*time.Second, "measured time per target, split over --rounds")
	fs.DurationVar(&warmup, "warmup", 2*time.Second, "unmeasured warm-up per target and round")
	fs.BoolVar(&baseline, "baseline", true, "also measure a bare net/http handler returning the same bytes")
	fs.StringVar(&target, "target", "", "benchmark a running toolenv at this base URL instead of starting one (its cache must already hold the answers)")
	fs.StringVar(&jsonOut, "json", "", "also write the report as JSON to this file")
	fs.IntVar(&maxTools, "max-tools", 2000, "use at most this many tools' calls")
	fs.BoolVar(&canonicalOnly, "canonical-only", false, "record the answers under their canonical arguments only (as MCP and REST calls record them), not under the /virtual client's exact key")
	fs.IntVar(&rounds, "rounds", 3, "alternate the targets over this many rounds (splitting --duration) and report each one's median round")
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
