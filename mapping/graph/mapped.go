package graph

import (
	"context"
	"fmt"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/structural"
)

// Mapped is the structural mapper's output over a set of tools: the
// matcher (its profiles), the operation graph, the mappings with their
// clusters of alternatives, and the time it took.
type Mapped struct {
	Matcher *structural.Matcher
	Graph   *Graph
	Set     *mapping.Set
	Elapsed time.Duration
}

// evidencePerTool is how many cached answers per tool the structural
// mapper reads for evidence of values.
const evidencePerTool = 5

// matcher builds the structural matcher of tools, with evidence from src
// (nil: none) and the operation graph's neighbours.
func matcher(ctx context.Context, src structural.ExampleSource, tools []*toolenv.Tool, opts structural.Options) (*structural.Matcher, *Graph, error) {
	var ev map[string]*structural.Evidence
	if src != nil {
		var err error
		if ev, err = structural.Gather(ctx, src, tools, evidencePerTool); err != nil {
			return nil, nil, err
		}
	}
	m := structural.New(tools, ev, opts)
	g := Operations(m.Profiles())
	m.SetNeighbours(g.Neighbours)
	return m, g, nil
}

// MapStructural maps every pair of tools with the structural mapper and
// its operation graph, with evidence from src (the store's cached
// answers; nil: none), and clusters the result into alternatives.
// opts.Progress, when set, is told how many tools have been compared.
func MapStructural(ctx context.Context, src structural.ExampleSource, tools []*toolenv.Tool, opts structural.Options) (*Mapped, error) {
	start := time.Now()
	m, g, err := matcher(ctx, src, tools, opts)
	if err != nil {
		return nil, err
	}
	ms, err := m.All(ctx)
	if err != nil {
		return nil, err
	}
	set := &mapping.Set{Version: mapping.SetVersion, Collections: mapping.CollectionsOf(tools), Mappings: ms}
	set.Clusters = Clusters(ms, clusterScore(opts), 12)
	set.Sort()
	return &Mapped{Matcher: m, Graph: g, Set: set, Elapsed: time.Since(start)}, nil
}

// MapBetween maps the tools of collection a onto those of collection b
// one-to-one (two versions of one API), with evidence from src.
func MapBetween(ctx context.Context, src structural.ExampleSource, tools []*toolenv.Tool, a, b string, opts structural.Options) (*mapping.Set, error) {
	m, _, err := matcher(ctx, src, tools, opts)
	if err != nil {
		return nil, err
	}
	ms, err := m.Between(ctx, a, b)
	if err != nil {
		return nil, err
	}
	return &mapping.Set{Version: mapping.SetVersion, Collections: []string{a, b}, Mappings: ms}, nil
}

// OfTools builds the operation graph of tools.
func OfTools(tools []*toolenv.Tool) *Graph {
	return Operations(structural.New(tools, nil, structural.Options{}).Profiles())
}

// clusterScore is the lowest score of a mapping that links two tools of
// one cluster: the mapper's own minimum, at least 0.6.
func clusterScore(o structural.Options) float64 {
	if o.MinScore > 0.6 {
		return o.MinScore
	}
	return 0.6
}

// OutputPaths returns a function giving a tool's response field paths as
// the structural profiles see them (nil for a tool not mapped).
func (r *Mapped) OutputPaths() func(*toolenv.Tool) []string {
	return func(t *toolenv.Tool) []string {
		p := r.Matcher.Profile(t.ID)
		if p == nil {
			return nil
		}
		out := make([]string, len(p.Outputs))
		for i, f := range p.Outputs {
			out[i] = f.Path
		}
		return out
	}
}

// Summary is one line saying what the structural mapping found: its
// mappings, clusters of alternatives, the operation graph's edges and
// how long it took.
func (m *Mapped) Summary() string {
	return fmt.Sprintf("structural mappings: %d, clusters of alternatives: %d, operation graph: %d edges (%s)",
		len(m.Set.Mappings), len(m.Set.Clusters), m.Graph.EdgeCount(), m.Elapsed.Round(time.Millisecond))
}
