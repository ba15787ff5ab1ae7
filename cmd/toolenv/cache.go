package main

import (
	"fmt"
	"github.com/spf13/pflag"
	"github.com/toolenv/toolenv/eval/harness"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/cache"
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
func bindStore(fs *pflag.FlagSet) *options[harness.StoreConfig] {
	return bindOptions(fs, configDefaults[harness.StoreConfig], false)
}

func newCacheImportCmd(e *env) *cobra.Command {
	var (
		sf     *options[harness.StoreConfig]
		f      *options[cache.ImportConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "import DIR|FILE.jsonl",
		Short: "Import a StableToolBench cache folder (<category>/<tool>_for_<category>/<api>.json), or toolenv's own JSON-lines export",
		Long: `Import a StableToolBench response cache. Each entry's key (the Python repr of the
arguments) is parsed and re-keyed canonically, so key order, whitespace and number
formatting no longer matter. With --toolbench, entries are matched to the documented
APIs and their arguments coerced exactly as the server coerces calls (so every
imported entry is found again); without it, tool IDs are derived from the path.

A FILE.jsonl is what toolenv cache export writes: every entry as it was recorded
(an MCP server's answers with their episode keys, its recorded tool list), each
line checked before anything is written.`,
		Example: `  toolenv cache import ./tool_response_cache --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction
  toolenv cache export > cache.jsonl && toolenv cache import cache.jsonl --store /tmp/other.db`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := sf.value().Open(ctx, e.getenv, false, e.logger())
			if err != nil {
				return err
			}
			defer st.Close()
			if strings.HasSuffix(strings.ToLower(args[0]), ".jsonl") {
				// An export of toolenv's own (cache export): any tool, MCP
				// recordings included.
				rep, err := cache.ImportJSONL(ctx, st, args[0], f.value().Overwrite)
				if err != nil {
					return err
				}
				return show(e, asJSON, rep, rep.WriteText)
			}
			opts, err := f.value().Options(e.stderr)
			if err != nil {
				return err
			}
			rep, err := cache.Import(ctx, st, args[0], opts)
			if err != nil {
				return err
			}
			return show(e, asJSON, rep, rep.WriteText)
		},
	}
	sf, f = bindStore(cmd.Flags()), bindOptions(cmd.Flags(), configDefaults[cache.ImportConfig], false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func newCacheExportCmd(e *env) *cobra.Command {
	var (
		sf *options[harness.StoreConfig]
		f  *options[cache.ExportConfig]
	)
	cmd := &cobra.Command{
		Use:   "export [OUT]",
		Short: "Export the cache as JSON lines (default, to OUT or stdout) or in StableToolBench's layout (OUT is a folder)",
		Example: `  toolenv cache export > cache.jsonl
  toolenv cache export --format stabletoolbench --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction ./stb_cache`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := sf.value().Open(ctx, e.getenv, true, e.logger())
			if err != nil {
				return err
			}
			defer st.Close()
			out := ""
			if len(args) == 1 {
				out = args[0]
			}
			cfg := f.value()
			r, err := cache.Export(ctx, st, cfg.Options(out, e.stdout))
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stderr, cfg.Summary(r, out))
			return nil
		},
	}
	sf, f = bindStore(cmd.Flags()), bindOptions(cmd.Flags(), configDefaults[cache.ExportConfig], false)
	return cmd
}

func newCacheStatsCmd(e *env) *cobra.Command {
	var (
		sf     *options[harness.StoreConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Count the cache's entries by origin, status and tool",
		Example: `  toolenv cache stats --store out/bird/store.db
  toolenv cache stats --store stb.db --json > stats.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := sf.value().Open(cmd.Context(), e.getenv, true, e.logger())
			if err != nil {
				return err
			}
			defer st.Close()
			s, err := st.Stats(cmd.Context())
			if err != nil {
				return err
			}
			return show(e, asJSON, s, func(w io.Writer) { cache.WriteStats(w, s) })
		},
	}
	sf = bindStore(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// importReport is what cache import --json prints.
type importReport = cache.ImportReport
