package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/toolenv/toolenv/cache"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/internal/cli"
)

func newCacheCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Import, export and inspect the response cache",
	}
	cmd.AddCommand(newCacheImportCmd(e), newCacheExportCmd(e), newCacheStatsCmd(e))
	return cmd
}

// bindStore registers --store (harness.StoreConfig).
func bindStore(fs *pflag.FlagSet) *cli.Options[harness.StoreConfig] {
	return cli.Bind(fs, cli.Defaults[harness.StoreConfig], false)
}

func newCacheImportCmd(e *env) *cobra.Command {
	var (
		sf     *cli.Options[harness.StoreConfig]
		f      *cli.Options[cache.ImportConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "import DIR|FILE.jsonl",
		Short: "Import a StableToolBench cache folder (<category>/<tool>_for_<category>/<api>.json), or toolenv's own JSON-lines export",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := sf.Value().Open(ctx, e.getenv, false, e.logger())
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := f.Value().Run(ctx, st, args[0], e.stderr)
			if err != nil {
				return err
			}
			return cli.Show(e.stdout, asJSON, rep, rep.WriteText)
		},
	}
	sf, f = bindStore(cmd.Flags()), cli.Bind(cmd.Flags(), cli.Defaults[cache.ImportConfig], false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func newCacheExportCmd(e *env) *cobra.Command {
	var (
		sf *cli.Options[harness.StoreConfig]
		f  *cli.Options[cache.ExportConfig]
	)
	cmd := &cobra.Command{
		Use:   "export [OUT]",
		Short: "Export the cache as JSON lines (default, to OUT or stdout) or in StableToolBench's layout (OUT is a folder)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := sf.Value().Open(ctx, e.getenv, true, e.logger())
			if err != nil {
				return err
			}
			defer st.Close()
			out := ""
			if len(args) == 1 {
				out = args[0]
			}
			cfg := f.Value()
			r, err := cache.Export(ctx, st, cfg.Options(out, e.stdout))
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stderr, cfg.Summary(r, out))
			return nil
		},
	}
	sf, f = bindStore(cmd.Flags()), cli.Bind(cmd.Flags(), cli.Defaults[cache.ExportConfig], false)
	return cmd
}

func newCacheStatsCmd(e *env) *cobra.Command {
	var (
		sf     *cli.Options[harness.StoreConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Count the cache's entries by origin, status and tool",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := sf.Value().Open(cmd.Context(), e.getenv, true, e.logger())
			if err != nil {
				return err
			}
			defer st.Close()
			s, err := st.Stats(cmd.Context())
			if err != nil {
				return err
			}
			return cli.Show(e.stdout, asJSON, s, func(w io.Writer) { cache.WriteStats(w, s) })
		},
	}
	sf = bindStore(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// importReport is what cache import --json prints.
type importReport = cache.ImportReport
