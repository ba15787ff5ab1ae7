package index

import (
	"context"
	"io"
	"log/slog"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/embed"
	"github.com/toolenv/toolenv/mapping/graph"
	"github.com/toolenv/toolenv/mapping/structural"
)

// Config is an index build as "toolenv map index" takes it: the index
// file, the structural mappings stored with it and the embedder of its
// vectors. Its tags are the command's flags (internal/configfile binds
// them).
type Config struct {
	// Path is the index file to write.
	Path string `json:"index" flag:"index" path:"file" help:"the index file to write (SQLite)"`
	// MappingsOut, when set, also receives the mappings (mapping.WriteSet).
	MappingsOut string `json:"mappings_out" flag:"mappings-out" path:"file" help:"also write the structural mappings and clusters to this JSON file"`
	// NoMappings indexes the tools without structural mappings.
	NoMappings bool `json:"no_mappings" flag:"no-mappings" help:"index the tools only, without structural mappings"`
	// MinScore is the lowest tool-pair score kept as a mapping.
	MinScore float64 `json:"min_score" flag:"min-score" default:"0.55" help:"lowest tool-pair score kept as a mapping"`
	// Embed makes the vectors.
	Embed embed.Config `json:"embed" help:"the embedder of the index's vectors"`
}

// Env is what a configured build or search runs with.
type Env struct {
	// Logger logs; nil discards.
	Logger *slog.Logger
	// Getenv reads the variables the *KeyEnv fields name; nil means
	// os.Getenv.
	Getenv func(string) string
	// Progress receives progress bars; nil shows none.
	Progress io.Writer
}

// BuildMapped maps the tools structurally (unless NoMappings), with
// evidence from src (a store's recorded answers; may be nil), and builds
// the index at cfg.Path with the mappings and clusters stored in it. It
// returns the index's report and the structural run (nil without
// mappings).
func BuildMapped(ctx context.Context, src structural.ExampleSource, tools []*toolenv.Tool, cfg *Config, env Env) (*Report, *graph.Mapped, error) {
	ec := cfg.Embed
	ec.Logger, ec.Getenv = env.Logger, env.Getenv
	emb, err := embed.New(ec)
	if err != nil {
		return nil, nil, err
	}
	if err := embed.Check(ctx, emb); err != nil {
		return nil, nil, err
	}
	var set *mapping.Set
	var outputs func(*toolenv.Tool) []string
	var run *graph.Mapped
	if !cfg.NoMappings {
		if run, err = graph.MapStructuralShown(ctx, src, tools, structural.Options{MinScore: cfg.MinScore}, env.Progress); err != nil {
			return nil, nil, err
		}
		set, outputs = run.Set, run.OutputPaths()
	}
	bar := progress.New(env.Progress, len(tools), "embedding")
	last := 0
	rep, err := Build(ctx, cfg.Path, tools, BuildOptions{
		Embedder: emb, Mappings: set, Outputs: outputs, Logger: env.Logger,
		Progress: func(done, total int) { bar.Add(done - last); last = done },
	})
	bar.Finish()
	if err != nil {
		return nil, nil, err
	}
	if cfg.MappingsOut != "" && set != nil {
		if err := mapping.WriteSet(cfg.MappingsOut, set); err != nil {
			return nil, nil, err
		}
	}
	return rep, run, nil
}

// Notes are the lines a build's Markdown report ends with
// (Report.WriteMarkdown): the structural mapping's summary (run may be
// nil) and where the mappings were written.
func (c *Config) Notes(run *graph.Mapped) []string {
	if run == nil {
		return nil
	}
	notes := []string{run.Summary()}
	if c.MappingsOut != "" {
		notes = append(notes, "mappings written to "+c.MappingsOut)
	}
	return notes
}

// SearchConfig is a search as "toolenv map search" takes it. Its tags are
// the command's flags.
type SearchConfig struct {
	// Path is the index file (from BuildMapped).
	Path string `json:"index" flag:"index" path:"file" help:"the index file (from toolenv map index)"`
	// K is the number of tools returned.
	K int `json:"top" flag:"top" short:"k" default:"10" help:"number of tools to return"`
	// Mode is hybrid, lexical or vector; "" picks (SearchOptions.Mode).
	Mode string `json:"mode" flag:"mode" enum:",hybrid,lexical,vector" help:"hybrid, lexical or vector (default: hybrid when the index has vectors from an embedding model, else lexical)"`
	// In restricts the results to these collections.
	In []string `json:"in" flag:"in" help:"only tools of this collection (repeatable)"`
	// Embed embeds the query; without a URL, the index's own offline
	// embedder (if it has one) is used.
	Embed embed.Config `json:"embed" help:"the embedder of queries: the model the index was built with"`
}

// CheckMode returns an invalid_arguments error naming flag unless mode
// is a search mode or "".
func CheckMode(mode, flag string) error {
	switch Mode(mode) {
	case "", Hybrid, Lexical, Vector:
		return nil
	}
	return toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--%s %q: want hybrid, lexical or vector", flag, mode)
}

// SearchFile opens the index cfg names, searches it for query and
// returns the results and the index's description. A missing index is a
// not_found error; a query the index cannot answer, invalid_arguments.
func SearchFile(ctx context.Context, query string, cfg *SearchConfig, env Env) (*Results, Meta, error) {
	var emb Embedder
	if cfg.Embed.URL != "" {
		ec := cfg.Embed
		ec.Logger, ec.Getenv = env.Logger, env.Getenv
		var err error
		if emb, err = embed.New(ec); err != nil {
			return nil, Meta{}, err
		}
		if err := embed.Check(ctx, emb); err != nil {
			return nil, Meta{}, err
		}
	}
	if err := CheckMode(cfg.Mode, "mode"); err != nil {
		return nil, Meta{}, err
	}
	ix, err := Open(ctx, cfg.Path, OpenOptions{Embedder: emb, Logger: env.Logger})
	if err != nil {
		return nil, Meta{}, toolenv.Errorw(toolenv.StatusNotFound, "", "%v", err)
	}
	defer ix.Close()
	res, err := ix.Search(ctx, query, cfg.K, SearchOptions{Mode: Mode(cfg.Mode), Collections: cfg.In})
	if err != nil {
		return nil, Meta{}, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "%v", err)
	}
	return res, ix.Meta(), nil
}
