package drift

import (
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// planRequired swaps required and optional parameters. A required
// parameter made optional gets a documented default (its declared default,
// example, ToolBench example value or first enum value, whichever is a
// valid value); absent, the call means that default. An optional parameter
// with a documented default becomes required; an old call that left it out
// meant the default, which translation makes explicit. Path parameters
// stay required.
func planRequired(p *planner, t *toolenv.Tool) []Change {
	var out []Change
	in := t.Input
	for _, name := range in.Names() {
		s := in.Properties[name]
		if s == nil || p.protected(name) || (t.Binding != nil && strings.Contains(t.Binding.Path, "{"+name+"}")) {
			continue
		}
		if in.IsRequired(name) {
			d, ok := p.documentedDefault(name, s)
			if ok && p.hit() {
				out = append(out, Change{Op: OpMakeOptional, Rule: "required_to_optional", Param: name, NewValue: rawValue(d)})
			}
			continue
		}
		if s.Default != nil && p.hit() {
			out = append(out, Change{Op: OpMakeRequired, Rule: "optional_to_required", Param: name, OldValue: rawValue(s.Default)})
		}
	}
	return out
}

// documentedDefault finds a value a parameter made optional can default
// to: its default, first example, ToolBench example value or first enum
// value — the first that is valid for its schema.
func (p *planner) documentedDefault(name string, s *toolenv.Schema) (any, bool) {
	var cands []any
	if s.Default != nil {
		cands = append(cands, s.Default)
	}
	if len(s.Examples) > 0 {
		cands = append(cands, s.Examples[0])
	}
	if raw, ok := s.Extra["example_value"]; ok {
		if v := value(raw); v != nil {
			cands = append(cands, v, convertValue(v, "string", s.Type))
		}
	}
	if len(s.Enum) > 0 {
		cands = append(cands, s.Enum[0])
	}
	for _, v := range cands {
		if p.validDefault(name, s, v) {
			return v, true
		}
	}
	return nil, false
}
