package sqltools

import (
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// Conditions are filter_data's conditions.
var Conditions = []string{
	"equal_to", "not_equal_to", "greater_than", "less_than", "greater_than_equal_to", "less_than_equal_to",
	"contains", "like", "not_like", "in", "not_in", "between", "is_null", "is_not_null",
}

var compareOps = map[string]string{
	"equal_to": "=", "not_equal_to": "<>", "greater_than": ">", "less_than": "<",
	"greater_than_equal_to": ">=", "less_than_equal_to": "<=",
}

// filter keeps the rows of a table that satisfy one condition.
func (b *Backend) filter(ss *session, a *args) (*result, error) {
	src := b.source(ss, a, "data_source", kindTable)
	keyName := a.str("key_name", true)
	cond := a.str("condition", true)
	value, hasValue := a.raw("value")
	other := a.str("other_key_name", false)
	a.unknown("data_source", "key_name", "condition", "value", "other_key_name", "label")
	if err := a.err("filter_data"); err != nil {
		return nil, err
	}
	base, q := filterBase(ss, src)
	col, err := column(q, src, keyName, "key_name")
	if err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		return &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: "filter_data: " + msg,
			Problems: []toolenv.Problem{{Param: "value", Code: "wrong_type", Message: msg}}, Hint: conditionHint(cond)}
	}
	lhs := col.expr
	var pred frag
	switch {
	case compareOps[cond] != "":
		op := compareOps[cond]
		if other != "" {
			if hasValue {
				return nil, bad("give either `value` or `other_key_name`, not both")
			}
			oc, err := column(q, src, other, "other_key_name")
			if err != nil {
				return nil, err
			}
			pred = fmtFrag("%s "+op+" %s", lhs, oc.expr)
			break
		}
		if !hasValue {
			return nil, bad("condition %s needs a `value` (or `other_key_name`)", cond)
		}
		rhs, err := b.valueOperand(ss, value, col.kind, "value")
		if err != nil {
			return nil, err
		}
		pred = fmtFrag("%s "+op+" %s", lhs, rhs)
	case cond == "contains" || cond == "like" || cond == "not_like":
		if !hasValue {
			return nil, bad("condition %s needs a `value`", cond)
		}
		rhs, err := b.valueOperand(ss, value, "string", "value")
		if err != nil {
			return nil, err
		}
		switch cond {
		case "contains":
			pred = fmtFrag("instr(%s, %s) > 0", lhs, rhs)
		case "like":
			pred = fmtFrag("%s LIKE %s", lhs, rhs)
		default:
			pred = fmtFrag("%s NOT LIKE %s", lhs, rhs)
		}
	case cond == "in" || cond == "not_in":
		if !hasValue {
			return nil, bad("condition %s needs a `value`: a list of values or a $label$ of a list", cond)
		}
		set, err := b.setOperand(ss, value, col.kind)
		if err != nil {
			return nil, err
		}
		kw := "IN"
		if cond == "not_in" {
			kw = "NOT IN"
		}
		pred = fmtFrag("%s "+kw+" %s", lhs, set)
	case cond == "between":
		list, ok := value.([]any)
		if !hasValue || !ok || len(list) != 2 {
			return nil, bad("condition between needs `value` = [low, high], got %s", describe(value))
		}
		lo, err := b.valueOperand(ss, list[0], col.kind, "value[0]")
		if err != nil {
			return nil, err
		}
		hi, err := b.valueOperand(ss, list[1], col.kind, "value[1]")
		if err != nil {
			return nil, err
		}
		pred = fmtFrag("%s BETWEEN %s AND %s", lhs, lo, hi)
	case cond == "is_null" || cond == "is_not_null":
		if hasValue || other != "" {
			return nil, bad("condition %s takes no `value`", cond)
		}
		if cond == "is_null" {
			pred = fmtFrag("%s IS NULL", lhs)
		} else {
			pred = fmtFrag("%s IS NOT NULL", lhs)
		}
	default:
		return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments,
			Message:  fmt.Sprintf("filter_data: unknown condition %q", cond),
			Problems: []toolenv.Problem{{Param: "condition", Code: "not_in_enum", Message: fmt.Sprintf("unknown condition %q", cond), Expected: strings.Join(Conditions, ", ")}},
			Hint:     "use one of: " + strings.Join(Conditions, ", ")}
	}
	r := &result{kind: kindTable, db: ss.db, fbase: base}
	if src.fbase == base && src.fbase != nil {
		r.fpred = fmtFrag("(%s) AND (%s)", src.fpred, pred)
	} else {
		r.fpred = pred
	}
	r.q = base.openQuery(ss).clone()
	r.q.where = append(r.q.where, r.fpred)
	return r, nil
}

// filterBase returns the result a filter on src derives from (src's own
// base when src is itself a filter result) and the query whose scope
// column expressions must use.
func filterBase(ss *session, src *result) (*result, *query) {
	if src.fbase != nil {
		return src.fbase, src.fbase.openQuery(ss)
	}
	return src, src.openQuery(ss)
}

// openQuery returns the result's query opened for further filtering (a
// wrapped copy when it is sealed), the same one every time so that
// filters on one source share a scope.
func (r *result) openQuery(ss *session) *query {
	if r.opened == nil {
		r.opened = r.q.open(&ss.seq)
	}
	return r.opened
}

func conditionHint(cond string) string {
	switch cond {
	case "in", "not_in":
		return "`value` is a list like [\"a\", \"b\"] or \"$label$\" of a list (select_unique_values) or single-column rows"
	case "between":
		return "`value` is [low, high], both inclusive"
	case "is_null", "is_not_null":
		return "leave out `value`"
	case "equal_to", "not_equal_to":
		return "`value` is a string or number (use is_null / is_not_null to test for null), or \"$label$\" of a single value"
	}
	return "`value` is a string or number, or \"$label$\" of a single value"
}

// combine returns the rows kept by any (or) or every (and) of several
// filter results over the same data source.
func (b *Backend) combine(ss *session, a *args) (*result, error) {
	raw, _ := a.required("data_sources", "a list of at least two \"$label$\" of filter_data results")
	op := a.str("operation", true)
	a.unknown("data_sources", "operation", "label")
	if err := a.err("combine_filters"); err != nil {
		return nil, err
	}
	joiner := map[string]string{"or": " OR ", "and": " AND "}[strings.ToLower(op)]
	if joiner == "" {
		return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("combine_filters: unknown operation %q", op),
			Problems: []toolenv.Problem{{Param: "operation", Code: "not_in_enum", Message: fmt.Sprintf("unknown operation %q", op), Expected: "or, and"}}}
	}
	list, ok := raw.([]any)
	if !ok || len(list) < 2 {
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "pass [\"$A$\", \"$B$\"] with two or more results of filter_data on the same data source", "combine_filters: `data_sources` must list at least two results, got %s", describe(raw))
	}
	var base *result
	var preds sqlb
	for i, v := range list {
		label, ok := refLabel(v, true)
		if !ok {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "refer to results as \"$label$\"", "combine_filters: data_sources[%d] is %s, not a $label$", i, describe(v))
		}
		r, err := lookup(ss, label)
		if err != nil {
			return nil, err
		}
		if r.fbase == nil {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "combine results of filter_data that start from the same data source", "combine_filters: $%s$ is not a result of filter_data", label)
		}
		if base == nil {
			base = r.fbase
		} else if r.fbase != base {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "filter the same data source in each branch, then combine", "combine_filters: $%s$ filters $%s$ but $%s$ filters $%s$; they must filter the same data source", label, r.fbase.label, listLabel(list[0]), base.label)
		}
		if i > 0 {
			preds.text(joiner)
		}
		preds.text("(").frag(r.fpred).text(")")
	}
	out := &result{kind: kindTable, db: ss.db, fbase: base, fpred: preds.done()}
	out.q = base.openQuery(ss).clone()
	out.q.where = append(out.q.where, out.fpred)
	return out, nil
}

func listLabel(v any) string {
	l, _ := refLabel(v, true)
	return l
}
