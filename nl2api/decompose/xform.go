package decompose

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

// xop is one transform_data operation.
type xop struct {
	op   string
	args map[string]any
}

// colExpr is a column of the current data, possibly rewritten by
// transforms: the shape of an operand the tools can test, sort, group or
// aggregate.
type colExpr struct {
	col string
	ops []xop
	// kind is the SQL type the expression computes ("" unknown).
	kind string
	// mark is the signature of a column that holds a per-group aggregate.
	mark string
	// aggBase says ops apply to a column holding a per-group aggregate.
	aggBase bool
}

func (ce colExpr) signature() string {
	if ce.mark != "" {
		return ce.mark
	}
	if len(ce.ops) == 0 {
		return ""
	}
	raw, _ := json.Marshal(ce.ops2json())
	return string(raw)
}

func (ce colExpr) ops2json() []any {
	out := make([]any, len(ce.ops))
	for i, o := range ce.ops {
		out[i] = map[string]any{"op": o.op, "args": o.args}
	}
	return out
}

// column recognises e as a (possibly transformed) column of sc: a column
// reference, an aggregate already computed per group, or one of the
// functions and arithmetic transform_data can apply.
func (c *compiler) column(sc *scope, e sqlplan.Expr) (colExpr, error) {
	switch x := e.(type) {
	case *sqlplan.ColumnRef:
		n, err := sc.colName(x)
		if err != nil {
			return colExpr{}, err
		}
		return colExpr{col: n, kind: x.Kind}, nil
	case *sqlplan.AliasRef:
		return c.column(sc, x.Expr)
	case *sqlplan.Func:
		if x.Over != nil && sc.ranked == x {
			return colExpr{col: sqltools.RankColumn, kind: "integer"}, nil
		}
		if x.IsAggregate() {
			if col, ok := sc.aggCols[aggKey(x)]; ok {
				return colExpr{col: col, kind: sqlplan.Kind(x), mark: aggMark(x)}, nil
			}
			return colExpr{}, fail("aggregate in a condition", "%s outside GROUP BY", render(x))
		}
		return c.funcColumn(sc, x)
	case *sqlplan.Cast:
		inner, err := c.column(sc, x.X)
		if err != nil {
			return colExpr{}, err
		}
		t := map[string]string{"integer": "integer", "number": "real", "string": "text"}[sqlplan.Kind(x)]
		if t == "" {
			return colExpr{}, fail("unsupported function", "CAST AS %s", x.Type)
		}
		if inner.kind == sqlplan.Kind(x) && inner.kind != "" {
			return inner, nil // a no-op cast
		}
		return inner.then("cast", map[string]any{"type": t}, sqlplan.Kind(x)), nil
	case *sqlplan.Binary:
		switch x.Op {
		case "+", "-", "*", "/":
		default:
			return colExpr{}, fail("unsupported operator", "%s in %s", x.Op, render(x))
		}
		left, err := c.column(sc, x.L)
		if err != nil {
			// number op column: only + and * commute.
			if lit, ok := x.L.(*sqlplan.Literal); ok && (x.Op == "+" || x.Op == "*") {
				return c.column(sc, &sqlplan.Binary{Op: x.Op, L: x.R, R: lit})
			}
			return colExpr{}, err
		}
		op := map[string]string{"+": "add", "-": "subtract", "*": "multiply", "/": "divide"}[x.Op]
		kind := "number"
		switch r := x.R.(type) {
		case *sqlplan.Literal:
			n, ok := number(r)
			if !ok {
				return colExpr{}, fail("arithmetic with text", "%s", render(x))
			}
			if op == "divide" && left.kind == "integer" && r.Kind == sqlplan.LitInt {
				op = "integer_divide"
			}
			if left.kind == "integer" && r.Kind == sqlplan.LitInt {
				kind = "integer"
			}
			return left.then(op, map[string]any{"value": n}, kind), nil
		default:
			right, err := c.column(sc, x.R)
			if err != nil {
				return colExpr{}, err
			}
			if len(right.ops) > 0 {
				return colExpr{}, fail("arithmetic on two computed columns", "%s", render(x))
			}
			if op == "divide" && left.kind == "integer" && right.kind == "integer" {
				op = "integer_divide"
			}
			if left.kind == "integer" && right.kind == "integer" {
				kind = "integer"
			}
			return left.then(op, map[string]any{"other_key_name": right.col}, kind), nil
		}
	case *sqlplan.Collate:
		return colExpr{}, fail("COLLATE", "%s", render(x))
	}
	return colExpr{}, fail("not a column", "%s", render(e))
}

func aggMark(f *sqlplan.Func) string { return "aggregate " + aggKey(f) }

func (ce colExpr) then(op string, args map[string]any, kind string) colExpr {
	if ce.mark != "" {
		// Arithmetic on a per-group aggregate: the column already holds
		// it, so the operations apply to it as to a plain column.
		ce.mark = ""
		ce.ops = nil
		ce.aggBase = true
	}
	ops := append(append([]xop(nil), ce.ops...), xop{op: op, args: args})
	return colExpr{col: ce.col, ops: ops, kind: kind}
}

func (c *compiler) funcColumn(sc *scope, f *sqlplan.Func) (colExpr, error) {
	arg := func(i int) (colExpr, error) {
		if i >= len(f.Args) {
			return colExpr{}, fail("unsupported function", "%s", render(f))
		}
		return c.column(sc, f.Args[i])
	}
	intArg := func(i int) (int64, bool) {
		if i >= len(f.Args) {
			return 0, false
		}
		l, ok := f.Args[i].(*sqlplan.Literal)
		if !ok || l.Kind != sqlplan.LitInt {
			return 0, false
		}
		return l.Value.(int64), true
	}
	switch f.Name {
	case "substr", "substring":
		inner, err := arg(0)
		if err != nil {
			return colExpr{}, err
		}
		start, ok := intArg(1)
		if !ok {
			return colExpr{}, fail("unsupported function", "SUBSTR with start %s", render(f))
		}
		// SQL counts from 1, and from the end when negative (-3: the last
		// three characters); the tool counts from 0, and from the end
		// when negative, as Python slices do. SUBSTR(x, 0, n) is SQLite's
		// quirk for the first n-1 characters.
		first := start - 1
		if start < 0 {
			first = start
		} else if start == 0 {
			first = 0
		}
		args := map[string]any{"start_index": json.Number(fmt.Sprint(first))}
		if len(f.Args) == 3 {
			n, ok := intArg(2)
			if !ok || n < 0 {
				return colExpr{}, fail("unsupported function", "SUBSTR with length %s", render(f))
			}
			end := first + n
			switch {
			case start == 0:
				end = max(n-1, 0)
			case start < 0 && end >= 0:
				end = 1 // "to the end": no end_index
			}
			if end != 1 || start >= 0 {
				args["end_index"] = json.Number(fmt.Sprint(end))
			}
		} else if len(f.Args) != 2 {
			return colExpr{}, fail("unsupported function", "%s", render(f))
		}
		return inner.then("substring", args, "string"), nil
	case "strftime":
		if len(f.Args) != 2 {
			return colExpr{}, fail("unsupported function", "%s", render(f))
		}
		format, ok := f.Args[0].(*sqlplan.Literal)
		if !ok || format.Kind != sqlplan.LitString {
			return colExpr{}, fail("unsupported function", "%s", render(f))
		}
		part := map[string]string{"%Y": "year", "%m": "month", "%d": "day"}[format.Value.(string)]
		if part == "" {
			return colExpr{}, fail("unsupported function", "strftime('%s', ...)", format.Value)
		}
		inner, err := arg(1)
		if err != nil {
			return colExpr{}, err
		}
		return inner.then(part, nil, "integer"), nil
	case "date":
		if len(f.Args) != 1 {
			return colExpr{}, fail("unsupported function", "%s", render(f))
		}
		inner, err := arg(0)
		if err != nil {
			return colExpr{}, err
		}
		return inner.then("date", nil, "string"), nil
	case "abs", "lower", "upper", "length":
		if len(f.Args) != 1 {
			return colExpr{}, fail("unsupported function", "%s", render(f))
		}
		inner, err := arg(0)
		if err != nil {
			return colExpr{}, err
		}
		k := map[string]string{"abs": inner.kind, "lower": "string", "upper": "string", "length": "integer"}[f.Name]
		return inner.then(f.Name, nil, k), nil
	case "round":
		inner, err := arg(0)
		if err != nil {
			return colExpr{}, err
		}
		args := map[string]any{}
		if len(f.Args) == 2 {
			d, ok := intArg(1)
			if !ok {
				return colExpr{}, fail("unsupported function", "%s", render(f))
			}
			args["digits"] = json.Number(fmt.Sprint(d))
		}
		return inner.then("round", args, "number"), nil
	}
	return colExpr{}, fail("unsupported function", "%s()", strings.ToUpper(f.Name))
}

// use makes the column ce available on data cur: a raw column must not
// have been transformed; a transformed one is transformed now (in place)
// unless the same transform was applied before. It returns the data to
// continue from.
func (c *compiler) use(sc *scope, ce colExpr, cur string) (string, error) {
	sig := ce.signature()
	prev, done := c.state[cur][ce.col]
	if ce.aggBase && strings.HasPrefix(prev, "aggregate ") {
		// Transforms on top of the aggregate: compare with what is on
		// top of it now.
		done = false
		prev = ""
	}
	switch {
	case sig == "" && !done:
		return cur, nil
	case done && prev == sig:
		return cur, nil
	case done:
		return "", fail("column transformed two ways", "%s", ce.col)
	}
	for _, o := range ce.ops {
		if other, ok := o.args["other_key_name"].(string); ok && c.state[cur][other] != "" {
			return "", fail("column transformed two ways", "%s", other)
		}
	}
	for _, o := range ce.ops {
		args := map[string]any{"data_source": cur, "key_name": ce.col, "operation_type": o.op}
		if len(o.args) > 0 {
			args["operation_args"] = o.args
		}
		cur = ref(c.emit("transform_data", "TRANSFORMED_DF", args))
	}
	st := map[string]string{ce.col: sig}
	for k, v := range c.state[cur] {
		if k != ce.col {
			st[k] = v
		}
	}
	c.state[cur] = st
	return cur, nil
}
