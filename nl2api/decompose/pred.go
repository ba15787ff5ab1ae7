package decompose

import (
	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

var compareConditions = map[string]string{
	"=": "equal_to", "==": "equal_to", "<>": "not_equal_to", "!=": "not_equal_to",
	">": "greater_than", "<": "less_than", ">=": "greater_than_equal_to", "<=": "less_than_equal_to",
}

var flipped = map[string]string{"=": "=", "<>": "<>", "!=": "!=", ">": "<", "<": ">", ">=": "<=", "<=": ">="}

var negated = map[string]string{"=": "<>", "<>": "=", "!=": "=", ">": "<=", "<": ">=", ">=": "<", "<=": ">"}

// whereTransforms applies, before any filter, the transforms the
// predicate's columns need.
func (c *compiler) whereTransforms(sc *scope, e sqlplan.Expr, cur string) (string, error) {
	var err error
	sqlplan.Walk(e, func(x sqlplan.Expr) bool {
		if err != nil {
			return false
		}
		var operands []sqlplan.Expr
		switch p := x.(type) {
		case *sqlplan.Binary:
			if compareConditions[p.Op] != "" {
				operands = []sqlplan.Expr{p.L, p.R}
			}
		case *sqlplan.Between:
			operands = []sqlplan.Expr{p.X}
		case *sqlplan.Like:
			operands = []sqlplan.Expr{p.X}
		case *sqlplan.In:
			operands = []sqlplan.Expr{p.X}
		case *sqlplan.IsNull:
			operands = []sqlplan.Expr{p.X}
		}
		for _, o := range operands {
			if isValue(o) {
				continue
			}
			ce, cerr := c.column(sc, o)
			if cerr != nil || len(ce.ops) == 0 {
				continue // reported when the condition is compiled
			}
			cur, err = c.use(sc, ce, cur)
		}
		return true
	})
	return cur, err
}

// isValue reports whether e is computed without the current rows: a
// literal, a scalar subquery or arithmetic on those.
func isValue(e sqlplan.Expr) bool {
	switch x := e.(type) {
	case *sqlplan.Literal, *sqlplan.Subquery:
		return true
	case *sqlplan.Binary:
		switch x.Op {
		case "+", "-", "*", "/":
			return isValue(x.L) && isValue(x.R)
		}
	case *sqlplan.Cast:
		return isValue(x.X)
	case *sqlplan.Unary:
		return x.Op == "-" && isValue(x.X)
	}
	return false
}

// pred compiles a condition into filters of cur and returns the result.
func (c *compiler) pred(sc *scope, e sqlplan.Expr, cur string) (string, error) {
	switch x := e.(type) {
	case *sqlplan.Binary:
		switch x.Op {
		case "AND":
			l, err := c.pred(sc, x.L, cur)
			if err != nil {
				return "", err
			}
			return c.pred(sc, x.R, l)
		case "OR":
			var branches []any
			for _, d := range disjuncts(x) {
				b, err := c.pred(sc, d, cur)
				if err != nil {
					return "", err
				}
				branches = append(branches, b)
			}
			return ref(c.emit("combine_filters", "COMBINED_DF", map[string]any{"data_sources": branches, "operation": "or"})), nil
		}
		if cond := compareConditions[x.Op]; cond != "" {
			return c.compare(sc, x.Op, x.L, x.R, cur)
		}
		return "", fail("unsupported condition", "%s", render(x))
	case *sqlplan.Unary:
		if x.Op != "NOT" {
			return "", fail("unsupported condition", "%s", render(x))
		}
		n, ok := negate(x.X)
		if !ok {
			return "", fail("NOT of a complex condition", "%s", render(x))
		}
		return c.pred(sc, n, cur)
	case *sqlplan.Between:
		ce, err := c.column(sc, x.X)
		if err != nil {
			return "", err
		}
		lo, err := c.value(sc, x.Lo)
		if err != nil {
			return "", err
		}
		hi, err := c.value(sc, x.Hi)
		if err != nil {
			return "", err
		}
		if cur, err = c.use(sc, ce, cur); err != nil {
			return "", err
		}
		if x.Not {
			a := c.filter(cur, ce.col, "less_than", lo)
			b := c.filter(cur, ce.col, "greater_than", hi)
			return ref(c.emit("combine_filters", "COMBINED_DF", map[string]any{"data_sources": []any{a, b}, "operation": "or"})), nil
		}
		return c.filter(cur, ce.col, "between", []any{lo, hi}), nil
	case *sqlplan.Like:
		if x.Op != "LIKE" || x.Escape != nil {
			return "", fail("GLOB/ESCAPE", "%s", render(x))
		}
		ce, err := c.column(sc, x.X)
		if err != nil {
			return "", err
		}
		p, ok := x.Pattern.(*sqlplan.Literal)
		if !ok || p.Kind != sqlplan.LitString {
			return "", fail("LIKE with a computed pattern", "%s", render(x))
		}
		if cur, err = c.use(sc, ce, cur); err != nil {
			return "", err
		}
		cond := "like"
		if x.Not {
			cond = "not_like"
		}
		return c.filter(cur, ce.col, cond, p.Value), nil
	case *sqlplan.In:
		ce, err := c.column(sc, x.X)
		if err != nil {
			return "", err
		}
		var v any
		if x.Sub != nil {
			if v, err = c.subquery(x.Sub, true); err != nil {
				return "", err
			}
		} else {
			var list []any
			for _, it := range x.List {
				l, ok := it.(*sqlplan.Literal)
				if !ok || l.Kind == sqlplan.LitNull {
					return "", fail("IN with computed values", "%s", render(x))
				}
				list = append(list, literalValue(l))
			}
			v = list
		}
		if cur, err = c.use(sc, ce, cur); err != nil {
			return "", err
		}
		cond := "in"
		if x.Not {
			cond = "not_in"
		}
		return c.filter(cur, ce.col, cond, v), nil
	case *sqlplan.IsNull:
		ce, err := c.column(sc, x.X)
		if err != nil {
			return "", err
		}
		if cur, err = c.use(sc, ce, cur); err != nil {
			return "", err
		}
		cond := "is_null"
		if x.Not {
			cond = "is_not_null"
		}
		return c.filter(cur, ce.col, cond, nil), nil
	case *sqlplan.Exists:
		in, ok := decorrelate(x)
		if !ok {
			if x.Not {
				return "", fail("correlated subquery", "NOT EXISTS (NOT IN would differ when the subquery yields nulls)")
			}
			return "", fail("correlated subquery", "EXISTS that is not correlated by exactly one column equality")
		}
		return c.pred(sc, in, cur)
	}
	return "", fail("unsupported condition", "%s", render(e))
}

// compare compiles l op r: a column against a value, or against another
// column of the same row.
func (c *compiler) compare(sc *scope, op string, l, r sqlplan.Expr, cur string) (string, error) {
	if isValue(l) && !isValue(r) {
		l, r, op = r, l, flipped[op]
	}
	if isValue(l) {
		return "", fail("constant condition", "%s %s %s", render(l), op, render(r))
	}
	ce, err := c.column(sc, l)
	if err != nil {
		return "", err
	}
	if lit, ok := r.(*sqlplan.Literal); ok && lit.Kind == sqlplan.LitNull {
		return "", fail("comparison with NULL", "%s %s NULL", render(l), op)
	}
	cond := compareConditions[op]
	if isValue(r) {
		v, err := c.value(sc, r)
		if err != nil {
			return "", err
		}
		if cur, err = c.use(sc, ce, cur); err != nil {
			return "", err
		}
		return c.filter(cur, ce.col, cond, v), nil
	}
	other, err := c.column(sc, r)
	if err != nil {
		return "", err
	}
	if len(other.ops) > 0 {
		return "", fail("comparison of two computed columns", "%s %s %s", render(l), op, render(r))
	}
	if cur, err = c.use(sc, ce, cur); err != nil {
		return "", err
	}
	if cur, err = c.use(sc, other, cur); err != nil {
		return "", err
	}
	args := map[string]any{"data_source": cur, "key_name": ce.col, "condition": cond, "other_key_name": other.col}
	return ref(c.emit("filter_data", "FILTERED_DF", args)), nil
}

// value compiles a value operand: a literal, or a subquery / arithmetic
// on values computed by earlier steps.
func (c *compiler) value(sc *scope, e sqlplan.Expr) (any, error) {
	if l, ok := e.(*sqlplan.Literal); ok {
		if l.Kind == sqlplan.LitNull {
			return nil, fail("comparison with NULL", "")
		}
		return literalValue(l), nil
	}
	op, err := c.scalar(sc, e, "")
	if err != nil {
		return nil, err
	}
	return op, nil
}

func (c *compiler) filter(cur, col, cond string, value any) string {
	args := map[string]any{"data_source": cur, "key_name": col, "condition": cond}
	if value != nil {
		args["value"] = value
	}
	return ref(c.emit("filter_data", "FILTERED_DF", args))
}

func disjuncts(e sqlplan.Expr) []sqlplan.Expr {
	if b, ok := e.(*sqlplan.Binary); ok && b.Op == "OR" {
		return append(disjuncts(b.L), disjuncts(b.R)...)
	}
	return []sqlplan.Expr{e}
}

// negate pushes a NOT into a condition where SQL's three-valued logic
// allows it (a null operand is false either way).
func negate(e sqlplan.Expr) (sqlplan.Expr, bool) {
	switch x := e.(type) {
	case *sqlplan.Binary:
		if n, ok := negated[x.Op]; ok {
			return &sqlplan.Binary{Op: n, L: x.L, R: x.R}, true
		}
	case *sqlplan.Like:
		y := *x
		y.Not = !x.Not
		return &y, true
	case *sqlplan.In:
		y := *x
		y.Not = !x.Not
		return &y, true
	case *sqlplan.Between:
		y := *x
		y.Not = !x.Not
		return &y, true
	case *sqlplan.IsNull:
		y := *x
		y.Not = !x.Not
		return &y, true
	case *sqlplan.Exists:
		y := *x
		y.Not = !x.Not
		return &y, true
	}
	return nil, false
}

// decorrelate rewrites EXISTS (SELECT ... WHERE conds AND outer.a = inner.b)
// as outer.a IN (SELECT inner.b ... WHERE conds): equal in a WHERE clause
// (both are false, not null, when nothing matches). NOT EXISTS is left
// alone: NOT IN differs when inner.b has nulls.
func decorrelate(x *sqlplan.Exists) (*sqlplan.In, bool) {
	if x.Not || len(x.Q.Compound) > 0 || len(x.Q.GroupBy) > 0 || x.Q.Having != nil || x.Q.Limit != nil {
		return nil, false
	}
	var outer, inner *sqlplan.ColumnRef
	var rest sqlplan.Expr
	for _, cj := range sqlplan.Conjuncts(x.Q.Where) {
		if b, ok := cj.(*sqlplan.Binary); ok && b.Op == "=" && outer == nil {
			l, lok := b.L.(*sqlplan.ColumnRef)
			r, rok := b.R.(*sqlplan.ColumnRef)
			if lok && rok && l.Outer != r.Outer {
				if r.Outer {
					l, r = r, l
				}
				o := *l
				o.Outer = false
				outer, inner = &o, r
				continue
			}
		}
		if rest == nil {
			rest = cj
		} else {
			rest = &sqlplan.Binary{Op: "AND", L: rest, R: cj}
		}
	}
	if outer == nil {
		return nil, false
	}
	sub := *x.Q
	sub.Where = rest
	sub.Select = []*sqlplan.SelectItem{{Expr: inner}}
	sub.Correlated = false
	sub.Distinct = false
	return &sqlplan.In{X: outer, Sub: &sub}, true
}
