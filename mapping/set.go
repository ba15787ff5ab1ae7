package mapping

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"sync/atomic"

	toolenv "github.com/toolenv/toolenv"
)

// SetVersion is the version of the mappings file format.
const SetVersion = 1

// Set is the mappings of a world of tools and the clusters of
// alternatives they form. Several mappings of the same pair may coexist
// when they come from different provenances; Alternatives prefers the
// most trusted.
type Set struct {
	Version int `json:"version"`
	// Collections names the collections the mappings were made over.
	Collections []string `json:"collections,omitempty"`
	// Mappings are in a stable order (see Sort).
	Mappings []*Mapping `json:"mappings"`
	// Clusters are groups of mutually substitutable tools, each sorted,
	// largest first.
	Clusters [][]string `json:"clusters,omitempty"`

	// byTool indexes Mappings by the tools they join, built on the first
	// lookup. Lookups may run at once (a server's requests share one
	// Set); Add and Sort may not run beside them.
	byTool atomic.Pointer[map[string][]*Mapping]
}

// CollectionsOf returns the collections tools belong to, each once and
// sorted: what Collections names for mappings made over them.
func CollectionsOf(tools []*toolenv.Tool) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tools {
		if !seen[t.Collection] {
			seen[t.Collection] = true
			out = append(out, t.Collection)
		}
	}
	sort.Strings(out)
	return out
}

// Add appends mappings and invalidates the lookup index.
func (s *Set) Add(ms ...*Mapping) {
	s.Mappings = append(s.Mappings, ms...)
	s.byTool.Store(nil)
}

// Sort orders mappings by From, To and provenance.
func (s *Set) Sort() {
	sort.SliceStable(s.Mappings, func(i, j int) bool {
		a, b := s.Mappings[i], s.Mappings[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.To != b.To {
			return a.To < b.To
		}
		return trust(a.Provenance) > trust(b.Provenance)
	})
	s.byTool.Store(nil)
}

// trust ranks provenances: a person's word over exact manifests over a
// reflected answer over a first answer over structure.
func trust(p Provenance) int {
	switch p {
	case Human:
		return 5
	case Manifest:
		return 4
	case Reflection:
		return 3
	case LLM:
		return 2
	case Structural:
		return 1
	}
	return 0
}

// Alternatives returns the mappings that start at tool, oriented from it
// (a mapping stored in the other direction is reversed), one per
// alternative tool — the most trusted provenance, then the highest score
// — sorted by descending score. Mappings a human rejected are not in a
// Set; callers filter by Score themselves.
func (s *Set) Alternatives(tool string) []*Mapping {
	if s == nil {
		return nil
	}
	best := map[string]*Mapping{}
	for _, m := range s.index()[tool] {
		o := m
		if m.From != tool {
			o = m.Reverse()
		}
		if cur, ok := best[o.To]; !ok || better(o, cur) {
			best[o.To] = o
		}
	}
	out := make([]*Mapping, 0, len(best))
	for _, m := range best {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].To < out[j].To
	})
	return out
}

func better(a, b *Mapping) bool {
	if ta, tb := trust(a.Provenance), trust(b.Provenance); ta != tb {
		return ta > tb
	}
	return a.Score > b.Score
}

// Between returns the best mapping from tool a to tool b, oriented from a,
// or nil.
func (s *Set) Between(a, b string) *Mapping {
	for _, m := range s.Alternatives(a) {
		if m.To == b {
			return m
		}
	}
	return nil
}

// Cluster returns the cluster holding tool, or nil.
func (s *Set) Cluster(tool string) []string {
	for _, c := range s.Clusters {
		for _, t := range c {
			if t == tool {
				return c
			}
		}
	}
	return nil
}

// index returns the lookup index, building it if it is not built. Two
// lookups that find none both build one, alike; the last stored stands.
func (s *Set) index() map[string][]*Mapping {
	if ix := s.byTool.Load(); ix != nil {
		return *ix
	}
	ix := map[string][]*Mapping{}
	for _, m := range s.Mappings {
		ix[m.From] = append(ix[m.From], m)
		ix[m.To] = append(ix[m.To], m)
	}
	s.byTool.Store(&ix)
	return ix
}

// Validate checks every mapping and the format version.
func (s *Set) Validate() error {
	if s.Version != SetVersion {
		return fmt.Errorf("mappings format version %d is not supported (want %d); re-create the file with this toolenv", s.Version, SetVersion)
	}
	var errs []error
	for i, m := range s.Mappings {
		if m == nil {
			errs = append(errs, fmt.Errorf("mapping %d is null", i))
			continue
		}
		if err := m.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("mapping %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// ReadSet reads a mappings file written by WriteSet.
func ReadSet(path string) (*Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read mappings: %w", err)
	}
	var s Set
	if err := toolenv.DecodeJSON(data, &s); err != nil {
		return nil, fmt.Errorf("read mappings %s: not a mappings file: %w", path, err)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("read mappings %s: %w", path, err)
	}
	return &s, nil
}

// WriteSet writes s as indented JSON, atomically.
func WriteSet(path string, s *Set) error {
	if s.Version == 0 {
		s.Version = SetVersion
	}
	if s.Mappings == nil {
		s.Mappings = []*Mapping{}
	}
	if err := toolenv.WriteJSONFile(path, s); err != nil {
		return fmt.Errorf("write mappings: %w", err)
	}
	return nil
}

// FieldPairs counts the field alignments of every mapping: input and
// output pairs.
func (s *Set) FieldPairs() int {
	n := 0
	for _, m := range s.Mappings {
		n += len(m.Inputs) + len(m.Outputs)
	}
	return n
}
