package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/embed"
	"github.com/toolenv/toolenv/mapping/graph"
	"github.com/toolenv/toolenv/mapping/index"
	"github.com/toolenv/toolenv/mapping/structural"
)

func newMapCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "map",
		Short: "Index tools, map equivalent endpoints and fields, and use the mappings",
		Long: `API mapping (docs/mapping.md): index every tool for retrieval, find tools that can
stand in for each other and how their fields correspond — structurally, with no
model, or with an LLM and self-reflection — measure the mappings against drift
ground truth, sequence APIs with them, and review them in a web page.`,
	}
	cmd.AddCommand(newMapIndexCmd(e), newMapSearchCmd(e), newMapMatchCmd(e), newMapProbeCmd(e), newMapSequenceCmd(e), newMapReviewCmd(e), newMapEvalCmd(e))
	return cmd
}

// embedFlags say which embedder makes the index's vectors.
type embedFlags struct {
	url, model, keyEnv string
	dims               int
	timeout            time.Duration
}

func (f *embedFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.url, "embed-url", "", "OpenAI-compatible embeddings endpoint, e.g. http://127.0.0.1:8000/v1; empty: the deterministic offline embedder")
	fs.StringVar(&f.model, "embed-model", "", "embedding model name at --embed-url")
	fs.StringVar(&f.keyEnv, "embed-key-env", "OPENAI_API_KEY", "environment variable holding the embeddings endpoint's API key")
	fs.IntVar(&f.dims, "embed-dims", 512, "dimensions of the offline embedder")
	fs.DurationVar(&f.timeout, "embed-timeout", 30*time.Second, "timeout of one embeddings request")
}

// embedder returns the configured embedder (embed.New).
func (f *embedFlags) embedder(e *env) (index.Embedder, error) {
	return embed.New(embed.Config{URL: f.url, Model: f.model, APIKey: e.getenv(f.keyEnv), Dims: f.dims, Timeout: f.timeout, Logger: e.logger()})
}

// defaultIndexPath is map.db beside the default store.
func defaultIndexPath() string {
	return filepath.Join(filepath.Dir(environment.Default().Store), "map.db")
}

// mapStructural maps tools with graph.MapStructural, with evidence from
// the store and a progress bar.
func mapStructural(ctx context.Context, env *environment.Environment, tools []*toolenv.Tool, opts structural.Options, e *env) (*graph.Mapped, error) {
	bar := progress.New(e.stderr, len(tools), "structural mapping")
	last := 0
	opts.Progress = func(done, total int) { bar.Add(done - last); last = done }
	defer bar.Finish()
	return graph.MapStructural(ctx, env.Store, tools, opts)
}

func newMapIndexCmd(e *env) *cobra.Command {
	var (
		cf         *configFlags
		ef         embedFlags
		indexPath  string
		mappingsTo string
		noMappings bool
		opts       structural.Options
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Index every tool (BM25 + vectors) with its structural mappings and clusters",
		Long: `Index every tool of the loaded collections — name, description, parameters and
output fields — for lexical (SQLite FTS5, BM25) and vector search, and store the
structural mappings and clusters of alternatives with it, so that searching finds
a tool together with its alternatives.

Vectors come from --embed-url/--embed-model (any OpenAI-compatible endpoint) or,
by default, from the deterministic offline embedder. If the endpoint is down the
index is built for lexical search only, and says so.`,
		Example: `  toolenv map index --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction --index map.db
  toolenv map index --collection out/bird/rest --collection out/bird/sel --index bird-map.db --mappings-out bird-mappings.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			emb, err := ef.embedder(e)
			if err != nil {
				return err
			}
			env, err := cf.open(ctx, e)
			if err != nil {
				return err
			}
			defer env.Close()
			tools := env.ListedTools()
			var set *mapping.Set
			var outputs func(*toolenv.Tool) []string
			var run *graph.Mapped
			if !noMappings {
				run, err = mapStructural(ctx, env, tools, opts, e)
				if err != nil {
					return err
				}
				set, outputs = run.Set, run.OutputPaths()
			}
			bar := progress.New(e.stderr, len(tools), "embedding")
			last := 0
			rep, err := index.Build(ctx, indexPath, tools, index.BuildOptions{
				Embedder: emb, Mappings: set, Outputs: outputs, Logger: e.logger(),
				Progress: func(done, total int) { bar.Add(done - last); last = done },
			})
			bar.Finish()
			if err != nil {
				return err
			}
			if mappingsTo != "" && set != nil {
				if err := mapping.WriteSet(mappingsTo, set); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(e.stdout, rep)
			}
			writeIndexReport(e.stdout, rep, run, mappingsTo)
			return nil
		},
	}
	cf = bindConfig(cmd.Flags(), bindEnv)
	ef.register(cmd.Flags())
	cmd.Flags().StringVar(&indexPath, "index", defaultIndexPath(), "the index file to write (SQLite)")
	cmd.Flags().StringVar(&mappingsTo, "mappings-out", "", "also write the structural mappings and clusters to this JSON file")
	cmd.Flags().BoolVar(&noMappings, "no-mappings", false, "index the tools only, without structural mappings")
	cmd.Flags().Float64Var(&opts.MinScore, "min-score", 0.55, "lowest tool-pair score kept as a mapping")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func writeIndexReport(w io.Writer, rep *index.Report, run *graph.Mapped, mappingsTo string) {
	var more []string
	if run != nil {
		more = append(more, run.Summary())
		if mappingsTo != "" {
			more = append(more, "mappings written to "+mappingsTo)
		}
	}
	rep.WriteMarkdown(w, more...)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newMapSearchCmd(e *env) *cobra.Command {
	var (
		ef        embedFlags
		indexPath string
		k         int
		mode      string
		in        []string
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search the tool index; each hit comes with its alternatives",
		Example: `  toolenv map search "convert an amount between currencies" -k 10
  toolenv map search "weather forecast" --mode lexical --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var emb index.Embedder
			if ef.url != "" {
				var err error
				if emb, err = ef.embedder(e); err != nil {
					return err
				}
			}
			switch index.Mode(mode) {
			case "", index.Hybrid, index.Lexical, index.Vector:
			default:
				return usagef("--mode %q: want hybrid, lexical or vector", mode)
			}
			ix, err := index.Open(ctx, indexPath, index.OpenOptions{Embedder: emb, Logger: e.logger()})
			if err != nil {
				return toolenv.Errorw(toolenv.StatusNotFound, "", "%v", err)
			}
			defer ix.Close()
			res, err := ix.Search(ctx, args[0], k, index.SearchOptions{Mode: index.Mode(mode), Collections: in})
			if err != nil {
				return toolenv.Errorw(toolenv.StatusInvalidArguments, "", "%v", err)
			}
			if asJSON {
				return writeJSON(e.stdout, res)
			}
			for _, n := range res.Notes {
				fmt.Fprintf(e.stderr, "note: %s\n", n)
			}
			res.WriteTable(e.stdout, ix.Meta().Tools)
			return nil
		},
	}
	ef.register(cmd.Flags())
	cmd.Flags().StringVar(&indexPath, "index", defaultIndexPath(), "the index file (from toolenv map index)")
	cmd.Flags().IntVarP(&k, "top", "k", 10, "number of tools to return")
	cmd.Flags().StringVar(&mode, "mode", "", "hybrid, lexical or vector (default: hybrid when the index has vectors from an embedding model, else lexical)")
	cmd.Flags().StringArrayVar(&in, "in", nil, "only tools of this collection (repeatable)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

func newMapMatchCmd(e *env) *cobra.Command {
	var (
		cf      *configFlags
		out     string
		between []string
		opts    structural.Options
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "match",
		Short: "Map equivalent tools and fields structurally (no model) and write the mappings",
		Long: `Compare the loaded tools by their parameters and output fields (normalised names,
synonyms, types, descriptions, values from examples and the cache) and write the
proposed equivalent endpoints, their field alignments, scores and clusters.
With --between A --between B, map collection A onto collection B one-to-one (two
versions of one API).`,
		Example: `  toolenv map match --demo --out demo-mappings.json
  toolenv map match --collection v1 --collection v2 --between bird-rest --between bird-rest@v2 --out v1v2.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if len(between) != 0 && len(between) != 2 {
				return usagef("--between takes exactly two collection names (given %d)", len(between))
			}
			env, err := cf.open(ctx, e)
			if err != nil {
				return err
			}
			defer env.Close()
			tools := env.ListedTools()
			var set *mapping.Set
			if len(between) == 2 {
				for _, c := range between {
					if env.Registry.Collection(c) == nil {
						return toolenv.Errorw(toolenv.StatusNotFound, "", "--between %s: no such collection loaded (loaded: %v)", c, mapping.CollectionsOf(tools))
					}
				}
				if set, err = graph.MapBetween(ctx, env.Store, tools, between[0], between[1], opts); err != nil {
					return err
				}
			} else {
				run, err := mapStructural(ctx, env, tools, opts, e)
				if err != nil {
					return err
				}
				set = run.Set
			}
			if out != "" {
				if err := mapping.WriteSet(out, set); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(e.stdout, set)
			}
			fmt.Fprintf(e.stdout, "%d tools, %d mappings (%d field pairs), %d clusters", len(tools), len(set.Mappings), set.FieldPairs(), len(set.Clusters))
			if out != "" {
				fmt.Fprintf(e.stdout, ", written to %s", out)
			}
			fmt.Fprintln(e.stdout)
			return nil
		},
	}
	cf = bindConfig(cmd.Flags(), bindEnv)
	cmd.Flags().StringVar(&out, "out", "", "write the mappings to this JSON file")
	cmd.Flags().StringArrayVar(&between, "between", nil, "map collection A onto collection B one-to-one (give twice)")
	cmd.Flags().Float64Var(&opts.MinScore, "min-score", 0.55, "lowest tool-pair score kept")
	cmd.Flags().Float64Var(&opts.MinField, "min-field", 0.35, "lowest field-pair score kept")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the mappings as JSON")
	return cmd
}
