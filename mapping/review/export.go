package review

import (
	"fmt"
	"sort"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping"
)

// ExportVersion is the version of the export format.
const ExportVersion = 1

// Export is the reviewed ground truth.
type Export struct {
	Version int       `json:"version"`
	Created time.Time `json:"created"`
	// Model is the model whose proposals were reviewed.
	Model       string `json:"model,omitempty"`
	Queries     int    `json:"queries"`
	Annotations int    `json:"annotations"`
	// Mappings are the mappings annotators accepted or corrected and
	// agree on (provenance human), one per query and tool pair.
	Mappings []*mapping.Mapping `json:"mappings"`
	// Rejected are the proposals annotators agree are not mappings.
	Rejected []Judgement `json:"rejected"`
	// Conflicts are the tool pairs annotators disagree on, with every
	// annotator's latest annotation: both kept, none chosen.
	Conflicts []Conflict `json:"conflicts"`
}

// Judgement is an agreed rejection.
type Judgement struct {
	Query      string   `json:"query"`
	From       string   `json:"from"`
	To         string   `json:"to"`
	Annotators []string `json:"annotators"`
}

// Conflict is a tool pair annotators disagree on.
type Conflict struct {
	Query       string        `json:"query"`
	Pair        string        `json:"pair"`
	Annotations []*Annotation `json:"annotations"`
}

// Export folds the journal into reviewed ground truth.
func (r *Reviewer) Export() *Export {
	s := r.state()
	e := &Export{Version: ExportVersion, Created: time.Now().UTC().Truncate(time.Second), Model: r.opts.Probe.Model,
		Queries: len(r.queries), Annotations: len(r.j.annotations()), Mappings: []*mapping.Mapping{}, Rejected: []Judgement{}, Conflicts: []Conflict{}}
	keys := make([]string, 0, len(s.byPair))
	for k := range s.byPair {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		byAnn := s.byPair[k]
		var names []string
		for n := range byAnn {
			names = append(names, n)
		}
		sort.Strings(names)
		first := byAnn[names[0]]
		if conflicting(byAnn) {
			c := Conflict{Query: first.Query, Pair: first.Mapping.Key()}
			for _, n := range names {
				c.Annotations = append(c.Annotations, byAnn[n])
			}
			e.Conflicts = append(e.Conflicts, c)
			continue
		}
		if first.Verdict == Reject {
			e.Rejected = append(e.Rejected, Judgement{Query: first.Query, From: first.Mapping.From, To: first.Mapping.To, Annotators: names})
			continue
		}
		m := first.Mapping.Clone()
		m.Provenance = mapping.Human
		e.Mappings = append(e.Mappings, m)
	}
	return e
}

// Set returns the agreed mappings as a mapping set (one per tool pair,
// the first query's), for failover or scoring. Conflicting pairs are left
// out until someone resolves them.
func (e *Export) Set() *mapping.Set {
	s := &mapping.Set{Version: mapping.SetVersion}
	seen := map[string]bool{}
	for _, m := range e.Mappings {
		if !seen[m.Key()] {
			seen[m.Key()] = true
			s.Add(m)
		}
	}
	s.Sort()
	return s
}

// Write writes the export as JSON to path and its agreed mappings as a
// mapping set (Set) to setPath; an empty path skips that file.
func (e *Export) Write(path, setPath string) error {
	if path != "" {
		if err := toolenv.WriteJSONFile(path, e); err != nil {
			return err
		}
	}
	if setPath != "" {
		return mapping.WriteSet(setPath, e.Set())
	}
	return nil
}

// String is the one-line count of the export: annotations, agreed
// mappings, rejections and conflicts.
func (e *Export) String() string {
	return fmt.Sprintf("%d annotations: %d agreed mappings, %d rejected, %d conflicts", e.Annotations, len(e.Mappings), len(e.Rejected), len(e.Conflicts))
}
