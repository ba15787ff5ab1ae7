package main

import (
	"os"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/devtools/bench"
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
closed-loop load generator (--connections concurrent connections) and report
requests/s, latency percentiles and the server's CPU time per request. With
--baseline (default) it measures, in the same run and the same way, a minimal
net/http handler (another child process) that returns the same response bytes,
alternating the two over --rounds, and reports toolenv's share of its throughput.

--duration is the measured time of each round, per target: a run takes
rounds × targets × (--warmup + --duration), and each target's figure is its
median round. The load comes from wrk, an external client written in C run as a
child process (--load-generator wrk; auto, the default, uses it when it is on the
PATH: scripts/install-wrk.sh installs Debian's), or from toolenv's own Go client in
this process (--load-generator go). The report gives the client's CPU time per
request and the cores it kept busy, so that a client that saturates first, and
narrows the gap between the servers, shows; and the load average at the start
and the end of the run. With --toolbench it first reports how long loading the
docs takes and the resident memory afterwards.`,
		Example: `  toolenv bench
  toolenv bench --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction --connections 64 --duration 8s --rounds 6 --json bench.json
  toolenv bench --load-generator go --duration 5s   # toolenv's own client instead of wrk`,
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
	cmd.AddCommand(newBenchBareCmd(e), newBenchReadyCmd(e), newBenchEpisodesCmd(e))
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

func newBenchEpisodesCmd(e *env) *cobra.Command {
	var (
		f       *options[bench.EpisodesOptions]
		jsonOut string
	)
	cmd := &cobra.Command{
		Use:   "episodes",
		Short: "Measure RL episodes: reset and step latency p50/p99, CPU and memory at 1, 100 and 10,000 open episodes",
		Long: `Start "toolenv serve" on a collection with tasks as a child process, and for each
--concurrency level open that many episodes at once (POST /openenv/reset), then
play every one to its end with the oracle (its task's gold calls, then the final
answer), the load generator's --workers connections taking turns among them.
Reports reset (to the first observation) and step latency p50/p99, steps/s, the
server's CPU per reset and per step, the load generator's CPU over the server's
(well below 1: the generator is not the bottleneck), the server's resident memory
per open idle episode, and how many episodes reached reward 1.`,
		Example: `  toolenv bench episodes --collection out/bird/slot
  toolenv bench episodes --collection out/bird/rest --concurrency 1,100 --json episodes.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o := f.value()
			o.Log, o.Command = e.stderr, os.Args
			rep, err := bench.Episodes(cmd.Context(), *o)
			if err != nil {
				return err
			}
			bench.PrintEpisodes(e.stdout, rep)
			if jsonOut != "" {
				return toolenv.WriteJSONFile(jsonOut, rep)
			}
			return nil
		},
	}
	f = bindOptions(cmd.Flags(), configDefaults[bench.EpisodesOptions], false)
	cmd.Flags().StringVar(&jsonOut, "json", "", "also write the report as JSON to this file")
	return cmd
}
