package main

import (
	"os"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/devtools/bench"
	"github.com/toolenv/toolenv/internal/cli"
)

func newBenchCmd(e *env) *cobra.Command {
	var (
		f       *cli.Options[bench.Options]
		jsonOut string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure /virtual cache hits against a bare net/http handler returning the same bytes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o := f.Value()
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
	f = cli.Bind(cmd.Flags(), cli.Defaults[bench.Options], false)
	cmd.Flags().StringVar(&jsonOut, "json", "", "also write the report as JSON to this file")
	cmd.AddCommand(newBenchBareCmd(e), newBenchReadyCmd(e), newBenchEpisodesCmd(e))
	return cmd
}

// newBenchBareCmd is the baseline server of toolenv bench.
func newBenchBareCmd(e *env) *cobra.Command {
	var answersFile, headersFile, addr string
	cmd := &cobra.Command{
		Use:    "bare",
		Short:  "Serve the baseline for toolenv bench (a bare handler returning recorded bytes)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return bench.ServeBare(cmd.Context(), answersFile, headersFile, addr, e.stdout)
		},
	}
	cmd.Flags().StringVar(&answersFile, "answers", "", "JSON array of response bodies")
	cmd.Flags().StringVar(&headersFile, "headers", "", "JSON array of header maps, one per response body, sent with it")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "address to listen on")
	return cmd
}

func newBenchEpisodesCmd(e *env) *cobra.Command {
	var (
		f       *cli.Options[bench.EpisodesOptions]
		jsonOut string
	)
	cmd := &cobra.Command{
		Use:   "episodes",
		Short: "Measure RL episodes: reset and step latency p50/p99, CPU and memory at 1, 100 and 10,000 open episodes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o := f.Value()
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
	f = cli.Bind(cmd.Flags(), cli.Defaults[bench.EpisodesOptions], false)
	cmd.Flags().StringVar(&jsonOut, "json", "", "also write the report as JSON to this file")
	return cmd
}
