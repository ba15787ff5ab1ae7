package main

import (
	"os"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/devtools/bench"
	"github.com/toolenv/toolenv/internal/cli"
)

func newBenchReadyCmd(e *env) *cobra.Command {
	var (
		f       *cli.Options[bench.ReadyOptions]
		jsonOut string
	)
	cmd := &cobra.Command{
		Use:   "ready",
		Short: "Measure how fast toolenv serve is ready, and how much memory it holds, for a large ToolBench set",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o := f.Value()
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
	f = cli.Bind(cmd.Flags(), func() bench.ReadyOptions {
		o := cli.Defaults[bench.ReadyOptions]()
		o.DataDir = os.TempDir()
		return o
	}, false)
	cmd.Flags().StringVar(&jsonOut, "json", "", "also write the report as JSON to this file")
	return cmd
}
