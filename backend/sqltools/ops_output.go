package sqltools

import (
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
)

// retrieve returns the values of chosen columns: the answer step.
func (b *Backend) retrieve(ss *session, a *args) (*result, error) {
	src := b.source(ss, a, "data_source", kindTable)
	raw, _ := a.required("key_names", "a list of column names")
	distinct := a.boolean("distinct", false)
	limit := a.integer("limit", -1)
	a.unknown("data_source", "key_names", "distinct", "limit", "label")
	if err := a.err("retrieve_data"); err != nil {
		return nil, err
	}
	var keys []string
	switch x := raw.(type) {
	case string:
		keys = []string{x}
	case []any:
		for i, v := range x {
			s, ok := v.(string)
			if !ok {
				return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "retrieve_data: key_names[%d] must be a column name, got %s", i, describe(v))
			}
			keys = append(keys, s)
		}
	}
	if len(keys) == 0 {
		return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: "retrieve_data: `key_names` must list at least one column",
			Problems: []toolenv.Problem{{Param: "key_names", Code: "wrong_type", Message: "empty or not a list", Expected: "a list of column names"}}}
	}
	q := src.q.derive(src.q.distinct || (distinct && src.q.limit >= 0) || src.q.linked(), &ss.seq)
	cols := make([]qcol, len(keys))
	for i, k := range keys {
		c, err := column(q, src, k, fmt.Sprintf("key_names[%d]", i))
		if err != nil {
			return nil, err
		}
		cols[i] = *c
	}
	q.cols = cols
	if distinct {
		q.distinctRows()
	}
	if limit >= 0 && (q.limit < 0 || int(limit) < q.limit) {
		q.limit = int(limit)
	}
	return &result{kind: kindRows, q: q, db: ss.db}, nil
}

// unique returns the distinct values of a column (SLOT: of a table's
// column; SEL: of a list).
func (b *Backend) unique(ss *session, a *args) (*result, error) {
	src := b.source(ss, a, "data_source", kindTable, kindList)
	keyName := ""
	if src == nil || src.kind == kindTable || a.has("key_name") {
		keyName = a.str("key_name", src != nil && src.kind == kindTable)
	}
	a.unknown("data_source", "key_name", "label")
	if err := a.err("select_unique_values"); err != nil {
		return nil, err
	}
	if src.kind == kindList {
		if keyName != "" && keyName != src.listCol {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "leave out key_name for a list", "select_unique_values: $%s$ is a list of %s", src.label, src.listCol)
		}
		keyName = src.listCol
	}
	q := src.q.derive(src.q.limit >= 0 || src.q.distinct || src.q.linked(), &ss.seq)
	c, err := column(q, src, keyName, "key_name")
	if err != nil {
		return nil, err
	}
	q.cols = []qcol{*c}
	q.distinctRows()
	return &result{kind: kindList, q: q, db: ss.db, listCol: keyName}, nil
}

// get returns one column of a table as a list (the SEL getters).
func (b *Backend) get(ss *session, a *args) (*result, error) {
	src := b.source(ss, a, "data_source", kindTable)
	keyName := a.str("key_name", true)
	a.unknown("data_source", "key_name", "label")
	if err := a.err("get"); err != nil {
		return nil, err
	}
	q := src.q.derive(src.q.distinct || src.q.linked(), &ss.seq)
	c, err := column(q, src, keyName, "key_name")
	if err != nil {
		return nil, err
	}
	q.cols = []qcol{*c}
	return &result{kind: kindList, q: q, db: ss.db, listCol: keyName, getterOf: src}, nil
}

// limitRows keeps the first rows of a table or list.
func (b *Backend) limitRows(ss *session, a *args) (*result, error) {
	src := b.source(ss, a, "data_source", kindTable, kindList)
	n := a.integer("limit", -1)
	if !a.has("limit") {
		a.fail("limit", "missing_required", "integer >= 0", "missing required argument `limit`")
	} else if n < 0 {
		a.fail("limit", "out_of_range", "integer >= 0", "`limit` must be 0 or more, got %d", n)
	}
	a.unknown("data_source", "limit", "label")
	if err := a.err("limit_data"); err != nil {
		return nil, err
	}
	q := src.q.clone()
	if q.limit < 0 || int(n) < q.limit {
		q.limit = int(n)
	}
	return &result{kind: src.kind, q: q, db: ss.db, listCol: src.listCol}, nil
}

// CalculateOperations are calculate's operations.
var CalculateOperations = []string{"add", "subtract", "multiply", "divide", "integer_divide", "round"}

// calculate does arithmetic on two values.
func (b *Backend) calculate(ss *session, a *args) (*result, error) {
	op := strings.ToLower(a.str("operation", true))
	l, _ := a.required("left", "a number or \"$label$\" of a value")
	r, _ := a.required("right", "a number or \"$label$\" of a value")
	a.unknown("operation", "left", "right", "label")
	if err := a.err("calculate"); err != nil {
		return nil, err
	}
	sym, ok := arithmeticOps[op]
	ok = ok || op == "round"
	if !ok {
		return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("calculate: unknown operation %q", op),
			Problems: []toolenv.Problem{{Param: "operation", Code: "not_in_enum", Message: "unknown operation", Expected: strings.Join(CalculateOperations, ", ")}}}
	}
	var ops [2]frag
	for i, v := range []any{l, r} {
		param := []string{"left", "right"}[i]
		if _, isStr := v.(string); isStr {
			if _, isRef := refLabel(v, false); !isRef {
				return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("calculate: `%s` must be a number or \"$label$\", got %s", param, describe(v)),
					Problems: []toolenv.Problem{{Param: param, Code: "wrong_type", Message: "not a number or reference", Expected: "number or \"$label$\""}}}
			}
		}
		f, err := b.valueOperand(ss, v, "number", param)
		if err != nil {
			return nil, err
		}
		ops[i] = f
	}
	var expr frag
	switch op {
	case "divide":
		expr = fmtFrag("CAST(%s AS REAL) / %s", ops[0], ops[1])
	case "integer_divide":
		expr = fmtFrag("CAST(%s AS INTEGER) / CAST(%s AS INTEGER)", ops[0], ops[1])
	case "round":
		expr = fmtFrag("round(%s, CAST(%s AS INTEGER))", ops[0], ops[1])
	default:
		expr = fmtFrag("%s "+sym+" %s", ops[0], ops[1])
	}
	q := &query{cols: []qcol{{name: "value", expr: expr, kind: "number"}}, limit: -1}
	return &result{kind: kindValue, q: q, db: ss.db}, nil
}

// SetOperations are set_operation's operations, as SQL's compound
// operators: union and intersect and except give distinct rows, union_all
// keeps every row of both.
var SetOperations = []string{"union", "union_all", "intersect", "except"}

var setSQL = map[string]string{"union": "UNION", "union_all": "UNION ALL", "intersect": "INTERSECT", "except": "EXCEPT"}

// setOp combines two results row by row with a set operation and returns
// the rows as a table named after the left side's columns.
func (b *Backend) setOp(ss *session, a *args) (*result, error) {
	op := strings.ToLower(a.str("operation", true))
	lraw, _ := a.required("left", "\"$label$\" of rows, a list or a table, or a list of \"$label$\" of lists of one table")
	rraw, _ := a.required("right", "\"$label$\" of rows, a list or a table, or a list of \"$label$\" of lists of one table")
	a.unknown("operation", "left", "right", "label")
	if err := a.err("set_operation"); err != nil {
		return nil, err
	}
	kw, ok := setSQL[op]
	if !ok {
		return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("set_operation: unknown operation %q", op),
			Problems: []toolenv.Problem{{Param: "operation", Code: "not_in_enum", Message: "unknown operation", Expected: strings.Join(SetOperations, ", ")}}}
	}
	left, err := b.relation(ss, lraw, "left")
	if err != nil {
		return nil, err
	}
	right, err := b.relation(ss, rraw, "right")
	if err != nil {
		return nil, err
	}
	if len(left.cols) != len(right.cols) {
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "retrieve as many columns on both sides", "set_operation: the left side has %d columns, the right side %d", len(left.cols), len(right.cols))
	}
	ss.seq++
	alias := rodb.Quote(fmt.Sprintf("s%d", ss.seq))
	compound := fmtFrag("SELECT * FROM (%s) "+kw+" SELECT * FROM (%s)", left.sql(false), right.sql(false))
	q := &query{from: fmtFrag("(%s) AS "+alias, compound), limit: -1}
	for _, c := range left.cols {
		e := frag{sql: alias + "." + rodb.Quote(c.name)}
		q.cols = append(q.cols, qcol{name: c.name, expr: e, kind: c.kind})
		q.tie = append(q.tie, okey{expr: e}) // rows are identified by their values
	}
	return &result{kind: kindTable, q: q, db: ss.db}, nil
}

// relation reads one side of a set operation: "$label$" of rows, a list
// or a table, or a list of "$label$" of lists a getter read from one
// table, put side by side.
func (b *Backend) relation(ss *session, v any, param string) (*query, error) {
	bad := func(format string, args ...any) error {
		return &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: "set_operation: " + fmt.Sprintf(format, args...),
			Problems: []toolenv.Problem{{Param: param, Code: "wrong_type", Message: fmt.Sprintf(format, args...), Expected: "\"$label$\" or [\"$label$\", ...]"}}}
	}
	if label, ok := refLabel(v, true); ok {
		r, err := lookup(ss, label)
		if err != nil {
			return nil, err
		}
		switch r.kind {
		case kindRows, kindList, kindTable:
			return r.q, nil
		}
		return nil, bad("$%s$ holds %s data; give rows, a list or a table", label, r.kind)
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, bad("`%s` must be \"$label$\" or a list of them, got %s", param, describe(v))
	}
	var src *result
	var names []string
	for i, e := range list {
		label, ok := refLabel(e, true)
		if !ok {
			return nil, bad("%s[%d] is %s, not a $label$", param, i, describe(e))
		}
		r, err := lookup(ss, label)
		if err != nil {
			return nil, err
		}
		if r.kind != kindList || r.getterOf == nil {
			return nil, bad("%s[%d] ($%s$) is not a list a get_ tool read from a table; lists are put side by side only when they come from one table", param, i, label)
		}
		if src == nil {
			src = r.getterOf
		} else if r.getterOf != src {
			return nil, bad("%s[%d] ($%s$) was read from $%s$, not $%s$: the rows of lists of different tables do not belong together", param, i, label, r.getterOf.label, src.label)
		}
		names = append(names, r.listCol)
	}
	q := src.q.derive(src.q.distinct || src.q.linked(), &ss.seq)
	cols := make([]qcol, len(names))
	for i, n := range names {
		c, err := column(q, src, n, fmt.Sprintf("%s[%d]", param, i))
		if err != nil {
			return nil, err
		}
		cols[i] = *c
	}
	q.cols = cols
	return q, nil
}
