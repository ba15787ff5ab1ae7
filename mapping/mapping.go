package mapping

import (
	"fmt"
	"sort"
	"strings"
)

// Provenance says who proposed a mapping.
type Provenance string

// The provenances of a mapping.
const (
	// Structural mappings come from comparing schemas, descriptions and
	// values, with no model (package structural).
	Structural Provenance = "structural"
	// LLM mappings are a model's first answer (package probe).
	LLM Provenance = "llm"
	// Reflection mappings are a model's answer after it criticised and
	// revised its first one.
	Reflection Provenance = "reflection"
	// Human mappings were accepted or corrected by a person (package
	// review).
	Human Provenance = "human"
	// Manifest mappings are exact ground truth from a drift manifest.
	Manifest Provenance = "manifest"
)

// Valid reports whether p is one of the known provenances.
func (p Provenance) Valid() bool {
	switch p {
	case Structural, LLM, Reflection, Human, Manifest:
		return true
	}
	return false
}

// Mapping says tool To can stand in for tool From, and how their fields
// correspond. Field paths are dotted ("location.lat"); "[]" marks the
// items of an array ("results[].isbn").
type Mapping struct {
	// From and To are tool IDs ("collection/name").
	From string `json:"from"`
	To   string `json:"to"`
	// Score is the confidence in [0, 1].
	Score float64 `json:"score"`
	// Inputs pair arguments of From with arguments of To.
	Inputs []FieldPair `json:"inputs,omitempty"`
	// Outputs pair response fields of From with response fields of To.
	Outputs []FieldPair `json:"outputs,omitempty"`
	// Fixed are arguments To must be given for the mapping to hold (SEL's
	// select_data_equal_to stands in for SLOT's filter_data only with
	// condition "equal_to").
	Fixed map[string]any `json:"fixed,omitempty"`
	// When are the argument values a call to From must have for the
	// mapping to hold (the reverse of Fixed).
	When map[string]any `json:"when,omitempty"`
	// Provenance says who proposed the mapping; Reasoning why.
	Provenance Provenance `json:"provenance"`
	Reasoning  string     `json:"reasoning,omitempty"`
	// Signals are the structural evidence behind Score, by name
	// ("name", "description", "inputs", "outputs", "values", "graph").
	Signals map[string]float64 `json:"signals,omitempty"`
	// Query is the probe query the mapping was proposed for, if any.
	Query string `json:"query,omitempty"`
}

// FieldPair aligns a field of one tool with a field of another.
type FieldPair struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Score is the confidence in [0, 1]; 0 when not scored.
	Score float64 `json:"score,omitempty"`
	// Reason names the evidence ("same name", "synonym", "description",
	// "values", "position") or, from a model, its words.
	Reason string `json:"reason,omitempty"`
}

// Key identifies the unordered tool pair of m: the two IDs sorted and
// joined. A mapping and its reverse share it.
func (m *Mapping) Key() string { return PairKey(m.From, m.To) }

// PairKey is the unordered key of two tool IDs.
func PairKey(a, b string) string {
	if b < a {
		a, b = b, a
	}
	return a + " ⇄ " + b
}

// Reverse returns the mapping read from To to From: pairs swapped, Fixed
// and When exchanged.
func (m *Mapping) Reverse() *Mapping {
	r := *m
	r.From, r.To = m.To, m.From
	r.Inputs = reversePairs(m.Inputs)
	r.Outputs = reversePairs(m.Outputs)
	r.Fixed, r.When = m.When, m.Fixed
	return &r
}

func reversePairs(ps []FieldPair) []FieldPair {
	if ps == nil {
		return nil
	}
	out := make([]FieldPair, len(ps))
	for i, p := range ps {
		out[i] = FieldPair{From: p.To, To: p.From, Score: p.Score, Reason: p.Reason}
	}
	return out
}

// Clone returns a deep copy of m (Fixed and When values are shared: they
// are never mutated).
func (m *Mapping) Clone() *Mapping {
	c := *m
	c.Inputs = append([]FieldPair(nil), m.Inputs...)
	c.Outputs = append([]FieldPair(nil), m.Outputs...)
	c.Fixed = cloneMap(m.Fixed)
	c.When = cloneMap(m.When)
	if m.Signals != nil {
		c.Signals = make(map[string]float64, len(m.Signals))
		for k, v := range m.Signals {
			c.Signals[k] = v
		}
	}
	return &c
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Validate checks m is well-formed: two different tool IDs, a score in
// [0, 1], a known provenance, and no field mapped twice on either side.
func (m *Mapping) Validate() error {
	var problems []string
	if m.From == "" || m.To == "" {
		problems = append(problems, "from and to must both name a tool")
	} else if m.From == m.To {
		problems = append(problems, fmt.Sprintf("a tool cannot map to itself (%s)", m.From))
	}
	if m.Score < 0 || m.Score > 1 {
		problems = append(problems, fmt.Sprintf("score %.3f is outside [0, 1]", m.Score))
	}
	if !m.Provenance.Valid() {
		problems = append(problems, fmt.Sprintf("provenance %q is not one of structural, llm, reflection, human, manifest", m.Provenance))
	}
	for _, side := range []struct {
		name  string
		pairs []FieldPair
	}{{"inputs", m.Inputs}, {"outputs", m.Outputs}} {
		from, to := map[string]bool{}, map[string]bool{}
		for _, p := range side.pairs {
			if p.From == "" || p.To == "" {
				problems = append(problems, fmt.Sprintf("%s: a field pair has an empty side", side.name))
				continue
			}
			if from[p.From] {
				problems = append(problems, fmt.Sprintf("%s: %q is mapped twice", side.name, p.From))
			}
			if to[p.To] {
				problems = append(problems, fmt.Sprintf("%s: %q is the target of two fields", side.name, p.To))
			}
			from[p.From], to[p.To] = true, true
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("mapping %s → %s: %s", m.From, m.To, strings.Join(problems, "; "))
	}
	return nil
}

// SortPairs orders field pairs by From, for deterministic output.
func SortPairs(ps []FieldPair) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].From != ps[j].From {
			return ps[i].From < ps[j].From
		}
		return ps[i].To < ps[j].To
	})
}
