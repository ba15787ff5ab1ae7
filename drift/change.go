package drift

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// check verifies that a change has the fields its kind needs.
func (c *Change) check() error {
	need := func(ok bool, what string) error {
		if !ok {
			return fmt.Errorf("%s change lacks %s", c.Op, what)
		}
		return nil
	}
	switch c.Op {
	case OpRenameTool:
		return need(c.From != "" && c.To != "" && c.From != c.To, "distinct from and to names")
	case OpEndpoint:
		return need(c.OldEndpoint != nil && c.NewEndpoint != nil && *c.OldEndpoint != *c.NewEndpoint, "distinct old_endpoint and new_endpoint")
	case OpRenameParam:
		return need(c.Param != "" && c.To != "" && c.Param != c.To, "param and a distinct to")
	case OpRetype:
		if err := need(c.Param != "" && c.FromType != "" && c.ToType != "", "param, from_type and to_type"); err != nil {
			return err
		}
		if !convertible(c.FromType, c.ToType) {
			return fmt.Errorf("retype %s → %s is not a lossless conversion", c.FromType, c.ToType)
		}
	case OpEnumCase:
		if err := need(c.Param != "" && len(c.Values) > 0, "param and values"); err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, v := range c.Values {
			k, err := toolenv.CanonicalizeJSON(v.To)
			if err != nil {
				return fmt.Errorf("enum_case value %s: %w", v.To, err)
			}
			if seen[string(k)] {
				return fmt.Errorf("enum_case maps two values to %s", v.To)
			}
			seen[string(k)] = true
		}
	case OpMakeOptional:
		return need(c.Param != "" && len(c.NewValue) > 0, "param and new_value (the documented default)")
	case OpMakeRequired:
		return need(c.Param != "" && len(c.OldValue) > 0, "param and old_value (the default an absent argument meant)")
	case OpFlipDefault:
		return need(c.Param != "" && len(c.OldValue) > 0 && len(c.NewValue) > 0, "param, old_value and new_value")
	case OpNest:
		if err := need(c.Param != "" && len(c.Members) >= 2, "param and at least two members"); err != nil {
			return err
		}
		keys := map[string]bool{}
		for _, m := range c.Members {
			if m.Param == "" || m.Key == "" || keys[m.Key] {
				return errors.New("nest members need a param and a unique key each")
			}
			keys[m.Key] = true
		}
	case OpRenameField:
		return need(c.From != "" && c.To != "" && c.From != c.To, "distinct from and to field names")
	case OpErrorFormat:
		if err := need(c.Style != nil, "style"); err != nil {
			return err
		}
		return c.Style.check()
	case OpDeprecate:
		return need(c.To != "", "to (the successor)")
	default:
		return fmt.Errorf("unknown change kind %q", c.Op)
	}
	return nil
}

// value returns the JSON value a raw change field holds.
func value(raw json.RawMessage) any {
	var v any
	if err := toolenv.DecodeJSON(raw, &v); err != nil {
		return nil
	}
	return v
}

// rawValue encodes v as canonical JSON.
func rawValue(v any) json.RawMessage {
	b, err := toolenv.Canonical(v)
	if err != nil {
		return nil
	}
	return b
}

// sameValue reports whether v equals the JSON value raw holds.
func sameValue(v any, raw json.RawMessage) bool {
	a, err := toolenv.Canonical(v)
	if err != nil {
		return false
	}
	b, err := toolenv.CanonicalizeJSON(raw)
	return err == nil && string(a) == string(b)
}

// showValue renders a raw value for messages: strings quoted, others as
// JSON.
func showValue(raw json.RawMessage) string {
	return strings.TrimSpace(string(raw))
}

// convertible reports whether retype from → to is lossless: integers,
// numbers and booleans to strings and back.
func convertible(from, to string) bool {
	scalar := func(t string) bool { return t == "integer" || t == "number" || t == "boolean" }
	return (scalar(from) && to == "string") || (from == "string" && scalar(to))
}

// decoded holds a change's JSON values decoded once, with their
// canonical forms, so translating a call decodes nothing.
type decoded struct {
	old, new       any
	oldKey, newKey string
	from, to       []any
	fromKey, toKey []string
}

func decode(c *Change) *decoded {
	key := func(raw json.RawMessage) string {
		if len(raw) == 0 {
			return ""
		}
		k, err := toolenv.CanonicalizeJSON(raw)
		if err != nil {
			return ""
		}
		return string(k)
	}
	d := &decoded{oldKey: key(c.OldValue), newKey: key(c.NewValue)}
	if len(c.OldValue) > 0 {
		d.old = value(c.OldValue)
	}
	if len(c.NewValue) > 0 {
		d.new = value(c.NewValue)
	}
	for _, p := range c.Values {
		d.from, d.to = append(d.from, value(p.From)), append(d.to, value(p.To))
		d.fromKey, d.toKey = append(d.fromKey, key(p.From)), append(d.toKey, key(p.To))
	}
	return d
}

// values returns the change's decoded values: prepared by Check, or
// decoded now for a change that was never checked.
func (c *Change) values() *decoded {
	if c.dec != nil {
		return c.dec
	}
	return decode(c)
}

// canonKey is the canonical JSON of v, or "" when it has none.
func canonKey(v any) string {
	b, err := toolenv.Canonical(v)
	if err != nil {
		return ""
	}
	return string(b)
}
