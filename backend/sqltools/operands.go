package sqltools

import (
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/validate"
)

// lookup returns the result stored under label.
func lookup(ss *session, label string) (*result, error) {
	r := ss.results[label]
	if r == nil {
		known := ss.labels()
		hint := "refer to a label returned by an earlier call of this session"
		if len(known) > 0 {
			hint = "labels in this session: " + strings.Join(known, ", ")
			if s := validate.Suggest(label, known); s != "" {
				hint = fmt.Sprintf("did you mean $%s$? %s", s, hint)
			}
		} else {
			hint = "this session has no results yet: call initialize_active_data first"
		}
		return nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: fmt.Sprintf("no result is labelled %q in this session", label), Hint: hint,
			Problems: []toolenv.Problem{{Code: "unknown_label", Message: fmt.Sprintf("unknown label %q", label), Expected: strings.Join(known, ", ")}}}
	}
	return r, nil
}

// source resolves a data-source argument to a stored result of one of
// the wanted kinds; problems go to a. It returns nil on failure.
func (b *Backend) source(ss *session, a *args, param string, want ...kind) *result {
	v, ok := a.raw(param)
	if !ok {
		a.fail(param, "missing_required", "\"$label$\"", "missing required argument `%s` (\"$label$\" of an earlier result)", param)
		return nil
	}
	label, ok := refLabel(v, true)
	if !ok {
		a.fail(param, "wrong_type", "\"$label$\"", "argument `%s` must be \"$label$\" of an earlier result, got %s", param, describe(v))
		return nil
	}
	r, err := lookup(ss, label)
	if err != nil {
		p := err.(*toolenv.Error).Problems[0]
		p.Param = param
		a.problems = append(a.problems, p)
		a.notFound = err
		return nil
	}
	for _, k := range want {
		// The rows retrieve_data returns are a table too: they can be
		// filtered, sorted, grouped and aggregated further (a query over a
		// FROM-subquery, a count over a set operation).
		if r.kind == k || (k == kindTable && r.kind == kindRows) {
			return r
		}
	}
	names := make([]string, len(want))
	for i, k := range want {
		names[i] = string(k)
	}
	a.fail(param, "wrong_kind", strings.Join(names, " or "), "$%s$ holds %s data; this tool takes %s", label, r.kind, strings.Join(names, " or "))
	return nil
}

// column returns the visible column name of q (whose result is r, for
// messages), or an error listing the columns that exist.
func column(q *query, r *result, name, param string) (*qcol, error) {
	if c := q.col(name); c != nil {
		return c, nil
	}
	cols := q.colNames()
	msg := fmt.Sprintf("column %q is not in $%s$", name, r.label)
	hint := "columns of $" + r.label + "$: " + strings.Join(cols, ", ")
	if s := validate.Suggest(name, cols); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: msg, Hint: hint,
		Problems: []toolenv.Problem{{Param: param, Code: "unknown_column", Message: msg, Expected: strings.Join(cols, ", ")}}}
}

// valueOperand turns a single value (a literal or "$label$" of a value or
// of a single-column list or rows) into an SQL operand. Literals are bound
// and coerced to kind; null is refused (use is_null).
func (b *Backend) valueOperand(ss *session, v any, kind, param string) (frag, error) {
	if label, ok := refLabel(v, false); ok {
		r, err := lookup(ss, label)
		if err != nil {
			return frag{}, err
		}
		return scalarSubquery(r, param)
	}
	s, ok := scalar(v)
	if !ok {
		return frag{}, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("argument `%s` must be a string, a number or \"$label$\", got %s", param, describe(v)),
			Problems: []toolenv.Problem{{Param: param, Code: "wrong_type", Message: "not a single value", Expected: "string, number or \"$label$\""}}}
	}
	if s == nil {
		return frag{}, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("argument `%s` is null; comparisons with null are never true", param),
			Problems: []toolenv.Problem{{Param: param, Code: "wrong_type", Message: "null value", Expected: "string or number"}}, Hint: "use the condition is_null or is_not_null"}
	}
	if str, ok := s.(string); ok && len(str) > maxValueLen {
		return frag{}, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("argument `%s` is %d characters long; at most %d are accepted", param, len(str), maxValueLen),
			Problems: []toolenv.Problem{{Param: param, Code: "out_of_range", Message: "value too long", Expected: fmt.Sprintf("at most %d characters", maxValueLen)}}}
	}
	return bound(coerce(s, kind)), nil
}

// scalarSubquery is the SQL of a stored single value: a value result, or
// the first value of a single-column list or rows result.
func scalarSubquery(r *result, param string) (frag, error) {
	switch r.kind {
	case kindValue:
	case kindList, kindRows:
		if len(r.q.cols) != 1 {
			return frag{}, toolenv.Errorw(toolenv.StatusInvalidArguments, "retrieve a single column for use as a value", "$%s$ has %d columns; `%s` needs a single value", r.label, len(r.q.cols), param)
		}
	default:
		return frag{}, toolenv.Errorw(toolenv.StatusInvalidArguments, "aggregate the data to a single value first (aggregate_data)", "$%s$ holds %s data; `%s` needs a single value", r.label, r.kind, param)
	}
	return fmtFrag("(%s)", r.q.sql(false)), nil
}

// setOperand turns a list value (a JSON list, or "$label$" of a list,
// single-column rows or a value) into the parenthesised operand of IN.
func (b *Backend) setOperand(ss *session, v any, kind string) (frag, error) {
	if label, ok := refLabel(v, false); ok {
		r, err := lookup(ss, label)
		if err != nil {
			return frag{}, err
		}
		return scalarSubquery(r, "value")
	}
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	if len(list) > maxListItems {
		return frag{}, toolenv.Errorw(toolenv.StatusInvalidArguments, "filter with fewer values", "`value` lists %d values; at most %d are accepted", len(list), maxListItems)
	}
	var b2 sqlb
	b2.text("(")
	for i, e := range list {
		if i > 0 {
			b2.text(", ")
		}
		s, ok := scalar(e)
		if !ok || s == nil {
			return frag{}, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("value[%d] must be a string or a number, got %s", i, describe(e)),
				Problems: []toolenv.Problem{{Param: fmt.Sprintf("value[%d]", i), Code: "wrong_type", Message: "not a string or number"}}}
		}
		if str, ok := s.(string); ok && len(str) > maxValueLen {
			return frag{}, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "value[%d] is longer than %d characters", i, maxValueLen)
		}
		b2.bind(coerce(s, kind))
	}
	b2.text(")")
	return b2.done(), nil
}
