package graph

import (
	"sort"

	"github.com/toolenv/toolenv/mapping"
)

// Clusters groups tools linked by mappings scoring at least minScore into
// clusters of alternatives: connected components, each split again at a
// higher score (by 0.05 steps) while it has more than maxSize tools, so
// that a chain of weak links does not make one service of many. Clusters
// are sorted (members by ID; clusters largest first, then by first ID);
// single tools are left out.
func Clusters(ms []*mapping.Mapping, minScore float64, maxSize int) [][]string {
	if maxSize < 2 {
		maxSize = 12
	}
	var out [][]string
	var split func(edges []*mapping.Mapping, threshold float64)
	split = func(edges []*mapping.Mapping, threshold float64) {
		for _, comp := range components(edges, threshold) {
			if len(comp) <= maxSize || threshold >= 1 {
				if len(comp) > 1 {
					out = append(out, comp)
				}
				continue
			}
			in := map[string]bool{}
			for _, t := range comp {
				in[t] = true
			}
			var sub []*mapping.Mapping
			for _, m := range edges {
				if in[m.From] && in[m.To] {
					sub = append(sub, m)
				}
			}
			split(sub, threshold+0.05)
		}
	}
	split(ms, minScore)
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i][0] < out[j][0]
	})
	return out
}

// components returns the connected components of the mappings scoring at
// least threshold, members sorted.
func components(ms []*mapping.Mapping, threshold float64) [][]string {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if parent[x] == x {
			return x
		}
		r := find(parent[x])
		parent[x] = r
		return r
	}
	add := func(x string) {
		if _, ok := parent[x]; !ok {
			parent[x] = x
		}
	}
	for _, m := range ms {
		if m.Score < threshold {
			continue
		}
		add(m.From)
		add(m.To)
		ra, rb := find(m.From), find(m.To)
		if ra != rb {
			if ra < rb {
				parent[rb] = ra
			} else {
				parent[ra] = rb
			}
		}
	}
	groups := map[string][]string{}
	for x := range parent {
		r := find(x)
		groups[r] = append(groups[r], x)
	}
	out := make([][]string, 0, len(groups))
	for _, g := range groups {
		sort.Strings(g)
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}
