package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"

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
				return writeJSONTo(e.stdout, rep)
			}
			fmt.Fprintf(e.stdout, "read %d files, %d entries: %d imported, %d already cached (kept; --overwrite replaces them), %d entries skipped, %d problems\n",
				rep.Files, rep.Entries, rep.Imported, rep.Kept, rep.Skipped, len(rep.Problems))
			if rep.NonFiniteAsNull > 0 {
				fmt.Fprintf(e.stdout, "%d answers held NaN or Infinity (Python's json.dump writes them, JSON cannot hold them): imported with those values as null\n", rep.NonFiniteAsNull)
			}
			if len(rep.Unresolved) > 0 {
				fmt.Fprintf(e.stdout, "%d APIs are not in the --toolbench docs; their entries were keyed by path:\n", len(rep.Unresolved))
				printTop(e.stdout, rep.Unresolved, 10)
			}
			for i, p := range rep.Problems {
				if i == 10 {
					fmt.Fprintf(e.stdout, "  … %d more (use --json for all)\n", len(rep.Problems)-10)
					break
				}
				fmt.Fprintf(e.stdout, "  %s %s: %s\n", p.File, trimKey(p.Key), p.Err)
			}
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

func trimKey(k string) string {
	if len(k) > 60 {
		return k[:57] + "…"
	}
	return k
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
			switch format {
			case "jsonl":
				w := e.stdout
				if len(args) == 1 && args[0] != "-" {
					f, err := os.Create(args[0])
					if err != nil {
						return fmt.Errorf("export: %w", err)
					}
					defer f.Close()
					w = f
				}
				n, err := cache.ExportJSONL(ctx, st, w, tool)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "exported %d entries\n", n)
				return nil
			case "stabletoolbench":
				if len(args) != 1 {
					return usagef("--format stabletoolbench writes a folder: give it as OUT")
				}
				if len(docs) == 0 {
					return usagef("--format stabletoolbench needs --toolbench DOCS to name each API's category, tool and file")
				}
				src, err := toolbench.Load(docs...)
				if err != nil {
					return err
				}
				coll := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{Name: collection})
				r, err := cache.ExportStableToolBench(ctx, st, args[0], coll, tool)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "exported %d entries into %d files under %s (%d entries of other tools skipped)\n", r.Entries, r.Files, args[0], r.Skipped)
				return nil
			}
			return usagef("--format %q: want jsonl or stabletoolbench", format)
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
				return writeJSONTo(e.stdout, s)
			}
			fmt.Fprintf(e.stdout, "store:    %s (%.1f MiB)\nentries:  %d over %d tools\nrecords:  %d LLM exchanges\n", s.Path, float64(s.Bytes)/(1<<20), s.Entries, s.Tools, s.Records)
			fmt.Fprintln(e.stdout, "by origin:")
			printTop(e.stdout, s.ByOrigin, 0)
			fmt.Fprintln(e.stdout, "by status:")
			printTop(e.stdout, s.ByStatus, 0)
			if len(s.TopTools) > 0 {
				fmt.Fprintln(e.stdout, "most cached tools:")
				for _, tc := range s.TopTools {
					fmt.Fprintf(e.stdout, "  %8d  %s\n", tc.Entries, tc.Tool)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&storePath, "store", "", storeFlagUsage)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func printTop(w io.Writer, m map[string]int, max int) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	for i, k := range keys {
		if max > 0 && i == max {
			fmt.Fprintf(w, "  … %d more\n", len(keys)-max)
			break
		}
		label := strings.TrimSpace(k)
		if label == "" {
			label = "(none)"
		}
		fmt.Fprintf(w, "  %8d  %s\n", m[k], label)
	}
}

func writeJSONTo(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// importReport is what cache import --json prints.
type importReport = cache.ImportReport
