package graph

import (
	"context"
	"fmt"
	"io"
	"slices"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/structural"
	"github.com/toolenv/toolenv/mapping/verify"
)

// MapStructuralShown is MapStructural showing a progress bar on w (nil:
// none).
func MapStructuralShown(ctx context.Context, src structural.ExampleSource, tools []*toolenv.Tool, opts structural.Options, w io.Writer) (*Mapped, error) {
	bar := progress.New(w, len(tools), "structural mapping")
	last := 0
	opts.Progress = func(done, total int) { bar.Add(done - last); last = done }
	defer bar.Finish()
	return MapStructural(ctx, src, tools, opts)
}

// MatchConfig is a structural mapping as "toolenv map match" takes it.
// Its tags are the command's flags (internal/configfile binds them).
type MatchConfig struct {
	// Out, when set, receives the mappings (mapping.WriteSet).
	Out string `json:"out" flag:"out" path:"file" help:"write the mappings to this JSON file"`
	// Between, two collection names, maps the first onto the second
	// one-to-one (MapBetween); empty maps every tool (MapStructural).
	Between  []string `json:"between" flag:"between" help:"map collection A onto collection B one-to-one (give twice)"`
	MinScore float64  `json:"min_score" flag:"min-score" default:"0.55" help:"lowest tool-pair score kept"`
	MinField float64  `json:"min_field" flag:"min-field" default:"0.35" help:"lowest field-pair score kept"`
	// Probe, with Between, calls the endpoints the documentation cannot
	// tell apart (package verify).
	Probe bool `json:"probe" flag:"probe" help:"with --between: call both sides with the same sampled arguments where the documentation cannot tell endpoints apart, and keep the stand-ins that answer the same"`
}

// Match maps the tools as cfg says, with evidence from src (a store's
// recorded answers; may be nil) and a progress bar on w, and writes the
// mappings to cfg.Out. Between naming other than two loaded collections
// is an invalid_arguments (not_found) error. With cfg.Probe, calls go
// through c (the loaded collections' pipeline), which must not be nil.
func Match(ctx context.Context, src structural.ExampleSource, tools []*toolenv.Tool, cfg *MatchConfig, w io.Writer, c verify.Caller) (*mapping.Set, error) {
	opts := structural.Options{MinScore: cfg.MinScore, MinField: cfg.MinField}
	if cfg.Probe && (len(cfg.Between) != 2 || c == nil) {
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--probe maps one collection onto another: give --between A --between B")
	}
	var set *mapping.Set
	switch len(cfg.Between) {
	case 0:
		run, err := MapStructuralShown(ctx, src, tools, opts, w)
		if err != nil {
			return nil, err
		}
		set = run.Set
	case 2:
		loaded := mapping.CollectionsOf(tools)
		for _, c := range cfg.Between {
			if !slices.Contains(loaded, c) {
				return nil, toolenv.Errorw(toolenv.StatusNotFound, "", "--between %s: no such collection loaded (loaded: %v)", c, loaded)
			}
		}
		var err error
		if cfg.Probe {
			m, _, err := matcher(ctx, src, tools, opts)
			if err != nil {
				return nil, err
			}
			res, err := verify.Between(ctx, c, m, cfg.Between[0], cfg.Between[1], verify.Options{MinScore: opts.MinScore})
			if err != nil {
				return nil, err
			}
			set = &mapping.Set{Version: mapping.SetVersion, Collections: []string{cfg.Between[0], cfg.Between[1]}, Mappings: res.Mappings}
			if w != nil {
				fmt.Fprintf(w, "%d mapped by structure, %d by probe (%d calls); %d unmapped\n", res.Count(verify.Structure), res.Count(verify.Probe), res.Calls, len(res.Unmapped))
				for _, u := range res.Unmapped {
					fmt.Fprintf(w, "  unmapped %s: %s\n", u.Tool, u.Reason)
				}
			}
		} else if set, err = MapBetween(ctx, src, tools, cfg.Between[0], cfg.Between[1], opts); err != nil {
			return nil, err
		}
	default:
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--between takes exactly two collection names (given %d)", len(cfg.Between))
	}
	if cfg.Out != "" {
		if err := mapping.WriteSet(cfg.Out, set); err != nil {
			return nil, err
		}
	}
	return set, nil
}
