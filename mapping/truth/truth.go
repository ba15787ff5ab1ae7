package truth

import (
	"fmt"
	"sort"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/mapping"
)

// Truth is exact ground truth of a mapping from one set of tools to
// another.
type Truth struct {
	// Name says where the truth comes from ("drift toolbench v1→v2").
	Name string `json:"name"`
	// Tools maps each source tool ID to its counterpart's.
	Tools map[string]string `json:"tools"`
	// Fixed are the arguments the counterpart must be given, by source
	// tool (SEL → SLOT); nil when the truth says nothing of them.
	Fixed map[string]map[string]any `json:"fixed,omitempty"`
	// Inputs and Outputs map, by source tool, each field path to its
	// counterpart's.
	Inputs  map[string]map[string]string `json:"inputs"`
	Outputs map[string]map[string]string `json:"outputs"`
	// ChangedTools are the source tools whose name changed; a field pair
	// whose names differ is a changed field.
	ChangedTools map[string]bool `json:"changed_tools"`
}

// New returns an empty truth.
func New(name string) *Truth {
	return &Truth{Name: name, Tools: map[string]string{}, Inputs: map[string]map[string]string{},
		Outputs: map[string]map[string]string{}, ChangedTools: map[string]bool{}}
}

func (t *Truth) addField(side map[string]map[string]string, tool, from, to string) {
	if side[tool] == nil {
		side[tool] = map[string]string{}
	}
	side[tool][from] = to
}

// Scores are a mapping's agreement with a truth.
type Scores struct {
	Truth string `json:"truth"`
	// Tools scores the tool pairs; ToolsChanged only those whose source
	// tool was renamed (predictions from those tools).
	Tools        metrics.PRF `json:"tools"`
	ToolsChanged metrics.PRF `json:"tools_changed"`
	// Fields scores argument and response field pairs together; Inputs
	// and Outputs each side; FieldsChanged the pairs whose names differ.
	Fields        metrics.PRF `json:"fields"`
	Inputs        metrics.PRF `json:"inputs"`
	Outputs       metrics.PRF `json:"outputs"`
	FieldsChanged metrics.PRF `json:"fields_changed"`
	// Fixed is the share of correct tool pairs whose fixed arguments are
	// exactly the truth's (when the truth has any).
	Fixed *float64 `json:"fixed,omitempty"`
	// Counts of gold and predicted items.
	GoldTools, PredTools, GoldFields, PredFields int            `json:"-"`
	Counts                                       map[string]int `json:"counts"`
	// Misses are examples of what went wrong, for reading.
	Misses []string `json:"misses,omitempty"`
}

// maxMisses bounds the examples kept.
const maxMisses = 25

// Score compares the mappings ms (from source tools to target tools) with
// t. A mapping from a tool the truth does not know is a false positive;
// field pairs under a wrong tool pair are false positives too.
func Score(t *Truth, ms []*mapping.Mapping) *Scores {
	s := &Scores{Truth: t.Name, Counts: map[string]int{}}
	var toolTP, toolPred, chTP, chPred int
	var in, out, ch counter
	var fixedOK, fixedN int
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.From] {
			continue // one counterpart per source tool: the first
		}
		seen[m.From] = true
		toolPred++
		want, known := t.Tools[m.From]
		ok := known && want == m.To
		if t.ChangedTools[m.From] {
			chPred++
			if ok {
				chTP++
			}
		}
		if ok {
			toolTP++
			if t.Fixed != nil {
				fixedN++
				if sameArgs(t.Fixed[m.From], m.Fixed) {
					fixedOK++
				} else {
					s.miss("fixed %s → %s: %v, want %v", m.From, m.To, m.Fixed, t.Fixed[m.From])
				}
			}
		} else {
			s.miss("tool %s → %s, want %s", m.From, m.To, orNone(want))
		}
		in.add(s, "input", m.From, m.Inputs, t.Inputs[m.From], ok)
		out.add(s, "output", m.From, m.Outputs, t.Outputs[m.From], ok)
		ch.addChanged(m.Inputs, t.Inputs[m.From], ok)
		ch.addChanged(m.Outputs, t.Outputs[m.From], ok)
	}
	for from, to := range t.Tools {
		if !seen[from] {
			s.miss("tool %s: no mapping, want %s", from, to)
		}
	}
	goldIn, goldOut, goldCh := count(t.Inputs, false), count(t.Outputs, false), count(t.Inputs, true)+count(t.Outputs, true)
	s.Tools = metrics.NewPRF(toolTP, toolPred, len(t.Tools))
	s.ToolsChanged = metrics.NewPRF(chTP, chPred, len(t.ChangedTools))
	s.Inputs = metrics.NewPRF(in.tp, in.pred, goldIn)
	s.Outputs = metrics.NewPRF(out.tp, out.pred, goldOut)
	s.Fields = metrics.NewPRF(in.tp+out.tp, in.pred+out.pred, goldIn+goldOut)
	s.FieldsChanged = metrics.NewPRF(ch.tp, ch.pred, goldCh)
	if t.Fixed != nil && fixedN > 0 {
		f := float64(fixedOK) / float64(fixedN)
		s.Fixed = &f
	}
	s.Counts = map[string]int{
		"gold_tools": len(t.Tools), "pred_tools": toolPred, "gold_tools_changed": len(t.ChangedTools),
		"gold_inputs": goldIn, "pred_inputs": in.pred, "gold_outputs": goldOut, "pred_outputs": out.pred,
		"gold_fields_changed": goldCh, "pred_fields_changed": ch.pred,
	}
	sort.Strings(s.Misses)
	return s
}

type counter struct{ tp, pred int }

// add counts predicted field pairs against the gold pairs of their
// source tool (only when the tool pair is right).
func (c *counter) add(s *Scores, side, tool string, pred []mapping.FieldPair, gold map[string]string, toolOK bool) {
	for _, p := range pred {
		c.pred++
		if toolOK && gold[p.From] == p.To {
			c.tp++
		} else if toolOK {
			s.miss("%s %s: %s → %s, want %s", side, tool, p.From, p.To, orNone(gold[p.From]))
		}
	}
	if !toolOK {
		return
	}
	got := map[string]bool{}
	for _, p := range pred {
		got[p.From] = true
	}
	for from, to := range gold {
		if !got[from] {
			s.miss("%s %s: %s not aligned, want %s", side, tool, from, to)
		}
	}
}

// addChanged counts the pairs whose names differ.
func (c *counter) addChanged(pred []mapping.FieldPair, gold map[string]string, toolOK bool) {
	for _, p := range pred {
		want, known := gold[p.From]
		if !known || want == p.From {
			if p.From != p.To {
				c.pred++ // predicted a change where none happened
			}
			continue
		}
		c.pred++
		if toolOK && want == p.To {
			c.tp++
		}
	}
}

func count(side map[string]map[string]string, changedOnly bool) int {
	n := 0
	for _, m := range side {
		for from, to := range m {
			if !changedOnly || from != to {
				n++
			}
		}
	}
	return n
}

func (s *Scores) miss(format string, args ...any) {
	if len(s.Misses) < maxMisses {
		s.Misses = append(s.Misses, fmt.Sprintf(format, args...))
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func sameArgs(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok {
			return false
		}
		ca, err1 := toolenv.Canonical(v)
		cb, err2 := toolenv.Canonical(w)
		if err1 != nil || err2 != nil || string(ca) != string(cb) {
			return false
		}
	}
	return true
}
