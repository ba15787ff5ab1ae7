package drift

import (
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// planType drifts parameter types where the conversion is lossless:
// integers, numbers and booleans become strings (with a pattern or enum
// that keeps them convertible), such strings become their type again, and
// enums of strings change case (upper, lower or title) when that keeps
// every value distinct. Parameters that take "$label$" references are left
// alone: their values are only known at run time.
func planType(p *planner, t *toolenv.Tool) []Change {
	var out []Change
	for _, name := range t.Input.Names() {
		s := t.Input.Properties[name]
		if s == nil || p.protected(name) || p.refs[name] {
			continue
		}
		var c *Change
		switch s.Type {
		case "integer", "number", "boolean":
			if len(s.Enum) == 0 {
				c = &Change{Op: OpRetype, Rule: s.Type + "_to_string", Param: name, FromType: s.Type, ToType: "string"}
			}
		case "string":
			switch {
			case s.Pattern == integerPattern:
				c = &Change{Op: OpRetype, Rule: "string_to_integer", Param: name, FromType: "string", ToType: "integer"}
			case s.Pattern == numberPattern:
				c = &Change{Op: OpRetype, Rule: "string_to_number", Param: name, FromType: "string", ToType: "number"}
			case isTrueFalse(s.Enum):
				c = &Change{Op: OpRetype, Rule: "string_to_boolean", Param: name, FromType: "string", ToType: "boolean"}
			case len(s.Enum) > 0 && len(s.Enum) <= maxEnumCase:
				c = p.enumCase(name, s.Enum)
			}
		}
		if c != nil && p.hit() {
			out = append(out, *c)
		}
	}
	return out
}

// maxEnumCase is the largest enum whose case drifts: enums of options
// (sort orders, units, modes), not lists of data values such as the
// column names of an NL2SQL table.
const maxEnumCase = 12

// caseRules are the enum case changes, tried in a seeded order.
var caseRules = []string{"upper", "lower", "title"}

// enumCase plans a case change of an enum of strings that changes at
// least one value and keeps them all distinct.
func (p *planner) enumCase(name string, enum []any) *Change {
	for _, rule := range p.shuffled(caseRules) {
		var pairs []ValuePair
		seen := map[string]bool{}
		changed, ok := false, true
		for _, v := range enum {
			s, isStr := v.(string)
			if !isStr {
				ok = false
				break
			}
			n := recase(s, rule)
			if seen[n] {
				ok = false
				break
			}
			seen[n] = true
			changed = changed || n != s
			pairs = append(pairs, ValuePair{From: rawValue(s), To: rawValue(n)})
		}
		if ok && changed {
			return &Change{Op: OpEnumCase, Rule: rule, Param: name, Values: pairs}
		}
	}
	return nil
}

func recase(s, rule string) string {
	switch rule {
	case "upper":
		return strings.ToUpper(s)
	case "lower":
		return strings.ToLower(s)
	}
	return capitalize(strings.ToLower(s))
}
