package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/cache"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/toolbench"
)

func newCacheCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Import, export and inspect the response cache",
	}
	cmd.AddCommand(newCacheImportCmd(e), newCacheExportCmd(e), newCacheStatsCmd(e))
	return cmd
}

// openStore opens the store at path; with mustExist (commands that only
// read it) a path with no file is an error rather than a new empty store.
func openStore(ctx context.Context, path string, mustExist bool, e *env) (store.Store, error) {
	path = e.storeLocation(path)
	if mustExist && path != ":memory:" && !store.IsPostgres(path) {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, toolenv.Errorw(toolenv.StatusNotFound, "pass --store PATH: the one serve and cache import used", "no store at %s", path)
		}
	}
	st, err := store.Open(ctx, path, store.Options{Logger: e.logger()})
	if err != nil {
		return nil, storeOpenError(err)
	}
	return st, nil
}

func newCacheImportCmd(e *env) *cobra.Command {
	var (
		storePath  string
		docs       []string
		collection string
		overwrite  bool
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "import DIR",
		Short: "Import a StableToolBench cache folder (<category>/<tool>_for_<category>/<api>.json)",
		Long: `Import a StableToolBench response cache. Each entry's key (the Python repr of the
arguments) is parsed and re-keyed canonically, so key order, whitespace and number
formatting no longer matter. With --toolbench, entries are matched to the documented
APIs and their arguments coerced exactly as the server coerces calls (so every
imported entry is found again); without it, tool IDs are derived from the path.`,
		Example: `  toolenv cache import ./tool_response_cache --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := openStore(ctx, storePath, false, e)
			if err != nil {
				return err
			}
			defer st.Close()
			opts := cache.ImportOptions{Collection: collection, Overwrite: overwrite, Progress: e.stderr}
			if len(docs) > 0 {
				src, err := toolbench.Load(docs...)
				if err != nil {
					return err
				}
				opts.Docs = toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{Name: collection})
			}
			rep, err := cache.Import(ctx, st, args[0], opts)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, rep)
			}
			rep.WriteText(e.stdout)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&storePath, "store", "", storeFlagUsage)
	fs.StringArrayVar(&docs, "toolbench", nil, "ToolBench docs the cache belongs to (as for serve); recommended")
	fs.StringVar(&collection, "collection", "toolbench", "collection name the entries belong to")
	fs.BoolVar(&overwrite, "overwrite", false, "replace entries already in the store")
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func newCacheExportCmd(e *env) *cobra.Command {
	var (
		storePath  string
		format     string
		docs       []string
		tool       string
		collection string
	)
	cmd := &cobra.Command{
		Use:   "export [OUT]",
		Short: "Export the cache as JSON lines (default, to OUT or stdout) or in StableToolBench's layout (OUT is a folder)",
		Example: `  toolenv cache export > cache.jsonl
  toolenv cache export --format stabletoolbench --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction ./stb_cache`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := openStore(ctx, storePath, true, e)
			if err != nil {
				return err
			}
			defer st.Close()
			out := ""
			if len(args) == 1 {
				out = args[0]
			}
			r, err := cache.Export(ctx, st, cache.ExportOptions{Format: format, Out: out, Stdout: e.stdout, Docs: docs, Collection: collection, Tool: tool})
			if err != nil {
				return err
			}
			if format == cache.FormatStableToolBench {
				fmt.Fprintf(e.stderr, "exported %d entries into %d files under %s (%d entries of other tools skipped)\n", r.Entries, r.Files, out, r.Skipped)
			} else {
				fmt.Fprintf(e.stderr, "exported %d entries\n", r.Entries)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&storePath, "store", "", storeFlagUsage)
	fs.StringVar(&format, "format", "jsonl", "jsonl or stabletoolbench")
	fs.StringArrayVar(&docs, "toolbench", nil, "ToolBench docs (needed for --format stabletoolbench)")
	fs.StringVar(&tool, "tool", "", "export only this tool ID")
	fs.StringVar(&collection, "collection", "toolbench", "with --format stabletoolbench: the collection name the entries were imported under")
	return cmd
}

func newCacheStatsCmd(e *env) *cobra.Command {
	var (
		storePath string
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Count the cache's entries by origin, status and tool",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openStore(cmd.Context(), storePath, true, e)
			if err != nil {
				return err
			}
			defer st.Close()
			s, err := st.Stats(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, s)
			}
			cache.WriteStats(e.stdout, s)
			return nil
		},
	}
	cmd.Flags().StringVar(&storePath, "store", "", storeFlagUsage)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// importReport is what cache import --json prints.
type importReport = cache.ImportReport
