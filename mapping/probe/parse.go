package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/structural"
)

// answer is a model's mapping answer once read.
type answer struct {
	Critique string
	Mappings []rawMapping
}

type rawMapping struct {
	From, To  string
	Score     float64
	HasScore  bool
	Inputs    [][2]string
	Outputs   [][2]string
	Fixed     map[string]any
	Reasoning string
}

// ErrNoJSON is wrapped when a model's text holds no JSON value at all.
var ErrNoJSON = errors.New("the answer holds no JSON object")

// parseAnswer reads a mapping answer from model text: the first JSON
// object or array in it, after code fences and prose are set aside,
// repaired of trailing commas or read as a Python literal when it must
// be. repaired says a repair was needed.
func parseAnswer(text string) (a *answer, repaired bool, err error) {
	raw := extractJSON(text)
	if raw == "" {
		return nil, false, ErrNoJSON
	}
	// Python literals as toolbench.ParsePyLiteral reads them.
	v, repaired, err := pyfmt.DecodeRepaired(raw, pyfmt.ParseOptions{FloatValues: true})
	if err != nil {
		return nil, false, fmt.Errorf("the answer's JSON does not parse: %w", err)
	}
	if strings.TrimSpace(text) != raw {
		repaired = true
	}
	a, err = readAnswer(v)
	return a, repaired, err
}

// extractJSON returns the first balanced JSON object or array in text
// (string-aware), preferring the content of a ```json fence.
func extractJSON(text string) string {
	if i := strings.Index(text, "```"); i >= 0 {
		rest := text[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
		}
		if j := strings.Index(rest, "```"); j >= 0 {
			if s := balanced(rest[:j]); s != "" {
				return s
			}
		}
	}
	return balanced(text)
}

func balanced(text string) string {
	start := strings.IndexAny(text, "{[")
	for start >= 0 {
		depth, inStr, esc := 0, false, false
		var quote byte
		for i := start; i < len(text); i++ {
			c := text[i]
			if inStr {
				switch {
				case esc:
					esc = false
				case c == '\\':
					esc = true
				case c == quote:
					inStr = false
				}
				continue
			}
			switch c {
			case '"', '\'':
				inStr, quote = true, c
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return text[start : i+1]
				}
			}
		}
		next := strings.IndexAny(text[start+1:], "{[")
		if next < 0 {
			return ""
		}
		start += 1 + next
	}
	return ""
}

// readAnswer accepts {"mappings": [...], "critique": ...}, a bare list of
// mappings, or a single mapping object.
func readAnswer(v any) (*answer, error) {
	a := &answer{}
	var list []any
	switch x := v.(type) {
	case []any:
		list = x
	case map[string]any:
		a.Critique = str(x["critique"])
		if a.Critique == "" {
			a.Critique = str(x["reflection"])
		}
		switch m := x["mappings"].(type) {
		case []any:
			list = m
		case nil:
			if _, single := x["from"]; single {
				list = []any{x}
			} else {
				return nil, errors.New(`the answer has no "mappings" list`)
			}
		default:
			return nil, errors.New(`"mappings" is not a list`)
		}
	default:
		return nil, errors.New("the answer is not a JSON object or list")
	}
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		r := rawMapping{From: str(m["from"]), To: str(m["to"]), Reasoning: str(m["reasoning"]), Inputs: pairs(m["inputs"]), Outputs: pairs(m["outputs"])}
		if r.From == "" {
			r.From = str(m["api"])
		}
		if s, ok := number(m["score"]); ok {
			r.Score, r.HasScore = s, true
		}
		if f, ok := m["fixed"].(map[string]any); ok && len(f) > 0 {
			r.Fixed = f
		}
		a.Mappings = append(a.Mappings, r)
	}
	return a, nil
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case json.Number:
		return x.String()
	}
	return ""
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// pairs reads field pairs written as {"from","to"} objects, [a, b] lists
// or "a -> b" strings.
func pairs(v any) [][2]string {
	list, _ := v.([]any)
	var out [][2]string
	for _, e := range list {
		switch x := e.(type) {
		case map[string]any:
			out = append(out, [2]string{str(x["from"]), str(x["to"])})
		case []any:
			if len(x) == 2 {
				out = append(out, [2]string{str(x[0]), str(x[1])})
			}
		case string:
			for _, sep := range []string{"->", "→", "=>", "="} {
				if a, b, ok := strings.Cut(x, sep); ok {
					out = append(out, [2]string{strings.TrimSpace(a), strings.TrimSpace(b)})
					break
				}
			}
		}
	}
	return out
}

// candidates are the tools a query's prompt showed, with their fields.
type candidates struct {
	ids      []string
	byID     map[string]*toolenv.Tool
	byName   map[string][]string
	profiles map[string]*structural.Profile
}

func newCandidates(tools []*toolenv.Tool) *candidates {
	c := &candidates{byID: map[string]*toolenv.Tool{}, byName: map[string][]string{}, profiles: map[string]*structural.Profile{}}
	for _, t := range tools {
		if _, dup := c.byID[t.ID]; dup {
			continue
		}
		c.ids = append(c.ids, t.ID)
		c.byID[t.ID] = t
		c.profiles[t.ID] = structural.NewProfile(t, nil)
		for _, n := range []string{strings.ToLower(t.Name), strings.ToLower(t.Title)} {
			if n != "" {
				c.byName[n] = append(c.byName[n], t.ID)
			}
		}
	}
	return c
}

// resolve finds the candidate a model named: its ID, or its name or title
// when that is unique among the candidates.
func (c *candidates) resolve(s string) string {
	if _, ok := c.byID[s]; ok {
		return s
	}
	s = strings.TrimSpace(strings.Trim(s, "[]`'\""))
	if _, ok := c.byID[s]; ok {
		return s
	}
	if _, name, ok := toolenv.SplitToolID(s); ok {
		s = name
	}
	if ids := c.byName[strings.ToLower(s)]; len(ids) == 1 {
		return ids[0]
	}
	return ""
}

// field finds the field a model named on one side of a tool: its path, or
// the path that matches ignoring case.
func field(fs []*structural.Field, s string) string {
	s = strings.TrimSpace(strings.Trim(s, "`'\""))
	for _, f := range fs {
		if f.Path == s {
			return f.Path
		}
	}
	for _, f := range fs {
		if strings.EqualFold(f.Path, s) {
			return f.Path
		}
	}
	return ""
}

// mappings turns an answer into mappings over the candidates, dropping
// (and noting) what names unknown tools or fields.
func (c *candidates) mappings(a *answer, prov mapping.Provenance, query string) ([]*mapping.Mapping, []string) {
	var out []*mapping.Mapping
	var notes []string
	seen := map[string]bool{}
	for _, r := range a.Mappings {
		from, to := c.resolve(r.From), c.resolve(r.To)
		switch {
		case from == "" || to == "":
			notes = append(notes, fmt.Sprintf("dropped %s → %s: not among the candidates", r.From, r.To))
			continue
		case from == to:
			notes = append(notes, fmt.Sprintf("dropped %s → itself", r.From))
			continue
		case seen[from+"\x00"+to]:
			continue
		}
		seen[from+"\x00"+to] = true
		m := &mapping.Mapping{From: from, To: to, Provenance: prov, Reasoning: r.Reasoning, Query: query, Score: 0.5}
		if r.HasScore {
			m.Score = min(1, max(0, r.Score))
		}
		pf, pt := c.profiles[from], c.profiles[to]
		m.Inputs, notes = fieldPairs(r.Inputs, pf.Inputs, pt.Inputs, "parameter", from, to, notes)
		m.Outputs, notes = fieldPairs(r.Outputs, pf.Outputs, pt.Outputs, "response field", from, to, notes)
		if len(r.Fixed) > 0 {
			m.Fixed = map[string]any{}
			for k, v := range r.Fixed {
				if p := field(pt.Inputs, k); p != "" {
					m.Fixed[p] = v
				} else {
					notes = append(notes, fmt.Sprintf("%s → %s: dropped fixed %s: %s has no such parameter", from, to, k, to))
				}
			}
			if len(m.Fixed) == 0 {
				m.Fixed = nil
			}
		}
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out, notes
}

func fieldPairs(raw [][2]string, fromFields, toFields []*structural.Field, what, from, to string, notes []string) ([]mapping.FieldPair, []string) {
	var out []mapping.FieldPair
	usedFrom, usedTo := map[string]bool{}, map[string]bool{}
	for _, p := range raw {
		a, b := field(fromFields, p[0]), field(toFields, p[1])
		if a == "" || b == "" {
			notes = append(notes, fmt.Sprintf("%s → %s: dropped %s pair %s → %s: not in the documentation", from, to, what, p[0], p[1]))
			continue
		}
		if usedFrom[a] || usedTo[b] {
			notes = append(notes, fmt.Sprintf("%s → %s: dropped %s pair %s → %s: a field is paired twice", from, to, what, p[0], p[1]))
			continue
		}
		usedFrom[a], usedTo[b] = true, true
		out = append(out, mapping.FieldPair{From: a, To: b})
	}
	return out, notes
}

// renderMappings writes mappings as the JSON the prompts ask for, for the
// reflection prompt.
func renderMappings(ms []*mapping.Mapping) string {
	type pair struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
	type m struct {
		From      string         `json:"from"`
		To        string         `json:"to"`
		Score     float64        `json:"score"`
		Inputs    []pair         `json:"inputs"`
		Outputs   []pair         `json:"outputs"`
		Fixed     map[string]any `json:"fixed,omitempty"`
		Reasoning string         `json:"reasoning"`
	}
	list := make([]m, 0, len(ms))
	for _, x := range ms {
		e := m{From: x.From, To: x.To, Score: x.Score, Fixed: x.Fixed, Reasoning: x.Reasoning, Inputs: []pair{}, Outputs: []pair{}}
		for _, p := range x.Inputs {
			e.Inputs = append(e.Inputs, pair{p.From, p.To})
		}
		for _, p := range x.Outputs {
			e.Outputs = append(e.Outputs, pair{p.From, p.To})
		}
		list = append(list, e)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(map[string]any{"mappings": list})
	return strings.TrimSpace(b.String())
}
