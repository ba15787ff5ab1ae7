package drift

import toolenv "github.com/toolenv/toolenv"

// planDefault flips documented defaults by the flip table (asc↔desc,
// true↔false, 10↔20 as a page size, …), when the flipped value is a valid
// value of the parameter. An old call that left the parameter out meant
// the old default: translation makes it explicit.
func planDefault(p *planner, t *toolenv.Tool) []Change {
	var out []Change
	for _, name := range t.Input.Names() {
		s := t.Input.Properties[name]
		if s == nil || s.Default == nil || p.protected(name) || t.Input.IsRequired(name) {
			continue
		}
		key, err := toolenv.Canonical(s.Default)
		if err != nil {
			continue
		}
		to, ok := p.rules.Flips[string(key)]
		if !ok || !p.validDefault(name, s, value(to)) {
			continue
		}
		if p.hit() {
			out = append(out, Change{Op: OpFlipDefault, Rule: "flip", Param: name, OldValue: key, NewValue: to})
		}
	}
	return out
}
