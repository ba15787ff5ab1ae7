package decompose

import (
	"encoding/json"

	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

var calcOps = map[string]string{"+": "add", "-": "subtract", "*": "multiply", "/": "divide"}

// scalar compiles an expression that yields one value: aggregates over
// the data cur, arithmetic, casts, literals and subqueries. It returns a
// "$label$" or a JSON number.
func (c *compiler) scalar(sc *scope, e sqlplan.Expr, cur string) (operand, error) {
	switch x := e.(type) {
	case *sqlplan.Literal:
		n, ok := number(x)
		if !ok {
			return nil, fail("text or null in arithmetic", "%s", render(x))
		}
		return n, nil
	case *sqlplan.Cast:
		switch sqlplan.Kind(x) {
		case "number", "integer":
			// The tools compute in SQLite's numbers: real division is
			// chosen by divide below, so a cast changes nothing else.
			if sqlplan.Kind(x) == "integer" && sqlplan.Kind(x.X) != "integer" {
				return nil, fail("CAST AS INTEGER of a value", "%s", render(x))
			}
			return c.scalar(sc, x.X, cur)
		}
		return nil, fail("CAST of a value", "%s", render(x))
	case *sqlplan.AliasRef:
		return c.scalar(sc, x.Expr, cur)
	case *sqlplan.Unary:
		if x.Op == "+" {
			return c.scalar(sc, x.X, cur)
		}
		if x.Op == "-" {
			v, err := c.scalar(sc, x.X, cur)
			if err != nil {
				return nil, err
			}
			return c.calculate("multiply", json.Number("-1"), v), nil
		}
	case *sqlplan.Binary:
		op, ok := calcOps[x.Op]
		if !ok {
			break
		}
		l, err := c.scalar(sc, x.L, cur)
		if err != nil {
			return nil, err
		}
		r, err := c.scalar(sc, x.R, cur)
		if err != nil {
			return nil, err
		}
		if op == "divide" && sqlplan.Kind(x.L) == "integer" && sqlplan.Kind(x.R) == "integer" {
			op = "integer_divide"
		}
		return c.calculate(op, l, r), nil
	case *sqlplan.Subquery:
		return c.subquery(x.Q, false)
	case *sqlplan.ColumnRef:
		return nil, fail("bare column with aggregate", "%s next to an aggregate without GROUP BY", render(x))
	case *sqlplan.Func:
		if x.Name == "round" && (len(x.Args) == 1 || len(x.Args) == 2) {
			// ROUND(v[, digits]) of a value (an aggregate, arithmetic).
			var digits any = json.Number("0")
			if len(x.Args) == 2 {
				l, ok := x.Args[1].(*sqlplan.Literal)
				if !ok || l.Kind != sqlplan.LitInt {
					return nil, fail("unsupported function", "%s", render(x))
				}
				digits, _ = number(l)
			}
			v, err := c.scalar(sc, x.Args[0], cur)
			if err != nil {
				return nil, err
			}
			return c.calculate("round", v, digits), nil
		}
		if !x.IsAggregate() {
			return nil, fail("unsupported function", "%s() on a value", x.Name)
		}
		if cur == "" {
			return nil, fail("aggregate in a condition", "%s", render(x))
		}
		return c.aggregate(sc, x, cur)
	}
	return nil, fail("unsupported expression", "%s", render(e))
}

func (c *compiler) calculate(op string, l, r operand) operand {
	return ref(c.emit("calculate", "VALUE", map[string]any{"operation": op, "left": l, "right": r}))
}

var aggTypes = map[string]string{"count": "count", "sum": "sum", "avg": "mean", "min": "min", "max": "max", "total": "sum"}

// aggregate compiles one aggregate over all of cur into a value.
func (c *compiler) aggregate(sc *scope, f *sqlplan.Func, cur string) (operand, error) {
	typ := aggTypes[f.Name]
	if typ == "" || f.Name == "total" {
		return nil, fail("unsupported aggregate", "%s", f.Name)
	}
	args := map[string]any{"aggregation_type": typ}
	if f.Star {
		args["data_source"] = cur
		return ref(c.emit("aggregate_data", "AGG", args)), nil
	}
	if len(f.Args) != 1 {
		return nil, fail("unsupported aggregate", "%s", render(f))
	}
	arg := f.Args[0]
	// CASE WHEN cond THEN v ELSE e END (and IIF) inside an aggregate: the
	// rows where cond holds, then the aggregate of v over them.
	if cond, then, els, ok := conditional(arg); ok {
		data, err := c.pred(sc, cond, cur)
		if err != nil {
			return nil, err
		}
		elseNull := isNull(els)
		elseZero := isZero(els)
		switch {
		case typ == "count" && elseNull:
		case typ == "count" && !elseNull && isConst(els):
			data = cur // every row counts: the ELSE value is not null
			then = els
		case typ == "sum" && (elseNull || elseZero):
		case (typ == "mean" || typ == "min" || typ == "max") && elseNull:
		default:
			return nil, fail("aggregate of CASE", "%s", render(f))
		}
		if typ == "count" && isConst(then) && !f.Distinct {
			return ref(c.emit("aggregate_data", "AGG", map[string]any{"data_source": data, "aggregation_type": "count"})), nil
		}
		if typ == "sum" && isOne(then) && !f.Distinct {
			return ref(c.emit("aggregate_data", "AGG", map[string]any{"data_source": data, "aggregation_type": "count"})), nil
		}
		ce, err := c.column(sc, then)
		if err != nil {
			return nil, err
		}
		if data, err = c.use(sc, ce, data); err != nil {
			return nil, err
		}
		args["data_source"] = data
		args["key_name"] = ce.col
		if f.Distinct {
			args["distinct"] = true
		}
		return ref(c.emit("aggregate_data", "AGG", args)), nil
	}
	ce, err := c.column(sc, arg)
	if err != nil {
		return nil, err
	}
	if cur, err = c.use(sc, ce, cur); err != nil {
		return nil, err
	}
	args["data_source"] = cur
	args["key_name"] = ce.col
	if f.Distinct {
		if typ == "min" || typ == "max" {
			delete(args, "distinct")
		} else {
			args["distinct"] = true
		}
	}
	return ref(c.emit("aggregate_data", "AGG", args)), nil
}

// conditional recognises CASE WHEN c THEN v [ELSE e] END and IIF(c, v, e).
func conditional(e sqlplan.Expr) (cond, then, els sqlplan.Expr, ok bool) {
	switch x := e.(type) {
	case *sqlplan.Case:
		if x.Operand != nil || len(x.Whens) != 1 {
			return nil, nil, nil, false
		}
		return x.Whens[0].Cond, x.Whens[0].Then, x.Else, true
	case *sqlplan.Func:
		if x.Name == "iif" && len(x.Args) == 3 {
			return x.Args[0], x.Args[1], x.Args[2], true
		}
	}
	return nil, nil, nil, false
}

func isNull(e sqlplan.Expr) bool {
	if e == nil {
		return true
	}
	l, ok := e.(*sqlplan.Literal)
	return ok && l.Kind == sqlplan.LitNull
}

func isConst(e sqlplan.Expr) bool {
	l, ok := e.(*sqlplan.Literal)
	return ok && l.Kind != sqlplan.LitNull
}

func isZero(e sqlplan.Expr) bool {
	l, ok := e.(*sqlplan.Literal)
	if !ok {
		return false
	}
	switch v := l.Value.(type) {
	case int64:
		return v == 0
	case float64:
		return v == 0
	}
	return false
}

func isOne(e sqlplan.Expr) bool {
	l, ok := e.(*sqlplan.Literal)
	if !ok {
		return false
	}
	switch v := l.Value.(type) {
	case int64:
		return v == 1
	case float64:
		return v == 1
	}
	return false
}

// subquery compiles an uncorrelated subquery on its own starting table
// and returns the label of its value (scalar) or of its rows (IN).
func (c *compiler) subquery(q *sqlplan.Query, list bool) (operand, error) {
	if len(q.Select) != 1 || q.Select[0].Star {
		return nil, fail("subquery with several columns", "")
	}
	answer, _, err := c.query(q, false)
	if err != nil {
		return nil, err
	}
	if len(answer) != 1 {
		return nil, fail("subquery with several columns", "")
	}
	return ref(answer[0]), nil
}
