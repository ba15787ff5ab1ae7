package graph

import (
	"sort"
	"strings"

	"github.com/toolenv/toolenv/mapping/structural"
	"github.com/toolenv/toolenv/mapping/terms"
)

// Edge links two operations of one API.
type Edge struct {
	To string `json:"to"`
	// Shared are the normalised field names both operations have.
	Shared []string `json:"shared"`
	// Weight is the share of the smaller operation's fields that are
	// shared, in [0, 1].
	Weight float64 `json:"weight"`
}

// Graph is the operation graph.
type Graph struct {
	adj map[string][]Edge
}

// MinWeight is the least share of fields two operations must have in
// common to be neighbours.
const MinWeight = 0.3

// Operations builds the operation graph of the profiled tools: within each
// API (same collection and ToolBench tool), operations sharing at least
// MinWeight of the smaller one's field names are neighbours.
func Operations(profiles []*structural.Profile) *Graph {
	g := &Graph{adj: map[string][]Edge{}}
	apis := map[string][]*structural.Profile{}
	for _, p := range profiles {
		k := p.Tool.Collection + "\x00" + p.Tool.Group
		apis[k] = append(apis[k], p)
	}
	for _, ops := range apis {
		names := make([]map[string]bool, len(ops))
		for i, p := range ops {
			names[i] = fieldNames(p)
		}
		for i := range ops {
			for j := i + 1; j < len(ops); j++ {
				shared := intersect(names[i], names[j])
				small := min(len(names[i]), len(names[j]))
				if len(shared) == 0 || small == 0 {
					continue
				}
				w := float64(len(shared)) / float64(small)
				if w < MinWeight {
					continue
				}
				a, b := ops[i].Tool.ID, ops[j].Tool.ID
				g.adj[a] = append(g.adj[a], Edge{To: b, Shared: shared, Weight: w})
				g.adj[b] = append(g.adj[b], Edge{To: a, Shared: shared, Weight: w})
			}
		}
	}
	for id, es := range g.adj {
		sort.Slice(es, func(i, j int) bool {
			if es[i].Weight != es[j].Weight {
				return es[i].Weight > es[j].Weight
			}
			return es[i].To < es[j].To
		})
		g.adj[id] = es
	}
	return g
}

// fieldNames are the normalised names of a tool's argument and response
// fields ("user identifier").
func fieldNames(p *structural.Profile) map[string]bool {
	out := map[string]bool{}
	for _, fs := range [][]*structural.Field{p.Inputs, p.Outputs} {
		for _, f := range fs {
			path := strings.ReplaceAll(f.Path, "[]", "")
			if i := strings.LastIndexByte(path, '.'); i >= 0 {
				path = path[i+1:]
			}
			if w := terms.Name(path); len(w) > 0 {
				out[strings.Join(w, " ")] = true
			}
		}
	}
	return out
}

func intersect(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Neighbours returns the operations sharing fields with id, most shared
// first.
func (g *Graph) Neighbours(id string) []string {
	es := g.adj[id]
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.To
	}
	return out
}

// Edges returns id's edges, heaviest first.
func (g *Graph) Edges(id string) []Edge { return g.adj[id] }

// Len is the number of operations with at least one neighbour.
func (g *Graph) Len() int { return len(g.adj) }

// EdgeCount is the number of edges.
func (g *Graph) EdgeCount() int {
	n := 0
	for _, es := range g.adj {
		n += len(es)
	}
	return n / 2
}
