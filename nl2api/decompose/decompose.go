package decompose

import (
	"encoding/json"
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

// Describer returns the description of a column of a table ("" when
// unknown).
type Describer func(table, column string) string

// Plan is a decomposed question.
type Plan struct {
	// Init are the hidden initialisation calls (meta.init).
	Init []toolenv.GoldCall
	// Calls are the gold calls.
	Calls []toolenv.GoldCall
	// Answer are the labels whose results form the answer, in column
	// order.
	Answer []string
	// Ordered says the answer's row order is decided by ORDER BY.
	Ordered bool
	// Columns are the columns of the starting tables (the task's key_name
	// enum), in starting-table order.
	Columns []sqltools.Column
	// Caveat, when set, says on which data the calls reproduce the SQL's
	// answer, when that is not all data: the reason to give when they do
	// not (verification shows it).
	Caveat *sqlplan.Error
}

func fail(reason, format string, args ...any) error {
	return &sqlplan.Error{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// Slot decomposes q, a query over database db, into SLOT calls.
func Slot(q *sqlplan.Query, db string, describe Describer) (*Plan, error) {
	c := &compiler{db: db, describe: describe, state: map[string]map[string]string{}}
	if describe == nil {
		c.describe = func(string, string) string { return "" }
	}
	answer, ordered, err := c.query(q, true)
	if err != nil {
		return nil, err
	}
	return &Plan{Init: c.inits, Calls: c.calls, Answer: answer, Ordered: ordered, Columns: c.columns, Caveat: c.caveat}, nil
}

type compiler struct {
	db       string
	describe Describer
	inits    []toolenv.GoldCall
	calls    []toolenv.GoldCall
	columns  []sqltools.Column
	n        int // label counter
	subs     int // subquery starting tables
	// state records, for each result ("$label$"), the transforms applied
	// in place to its columns (column → signature).
	state map[string]map[string]string
	// caveat is the plan's Caveat.
	caveat *sqlplan.Error
}

// label returns a fresh label with the given prefix.
func (c *compiler) label(prefix string) string {
	l := fmt.Sprintf("%s_%d", prefix, c.n)
	c.n++
	return l
}

// emit appends a call and returns its label. The result inherits the
// column transforms of its data source.
func (c *compiler) emit(name, prefix string, args map[string]any) string {
	l := c.label(prefix)
	c.calls = append(c.calls, toolenv.GoldCall{Name: name, Args: args, Label: l})
	src, _ := args["data_source"].(string)
	if list, ok := args["data_sources"].([]any); ok && len(list) > 0 {
		src, _ = list[0].(string)
	}
	if st := c.state[src]; len(st) > 0 {
		c.state[ref(l)] = st
	}
	return l
}

func ref(label string) string { return "$" + label + "$" }

// scope is one starting table and the chain of results derived from it.
type scope struct {
	label  string
	q      *sqlplan.Query
	prefix map[*sqlplan.Source]string
	// names maps each source's columns (lower-cased) to their
	// starting-table names.
	names map[*sqlplan.Source]map[string]string
	// aggCols maps an aggregate (by its key) to the per-group column
	// holding it, once the data is grouped.
	aggCols map[string]string
	// grouped says the current data is a per-group table.
	grouped bool
	// ranked is the window function whose rank_value column the data
	// has (rank_data).
	ranked *sqlplan.Func
}

// query compiles q (main: the task's query) and returns the answer labels.
func (c *compiler) query(q *sqlplan.Query, main bool) ([]string, bool, error) {
	if len(q.Compound) > 0 && !q.Window && !q.With {
		return c.compound(q, main)
	}
	if err := check(q); err != nil {
		return nil, false, err
	}
	if len(q.From) == 0 {
		// SELECT (subquery) - (subquery): values only.
		var answer []string
		for _, it := range q.Select {
			if it.Star || q.Where != nil || len(q.GroupBy) > 0 {
				return nil, false, fail("no FROM", "")
			}
			l, err := c.resultLabel(nil, it.Expr, "")
			if err != nil {
				return nil, false, err
			}
			answer = append(answer, l)
		}
		return answer, false, nil
	}
	sc, where, err := c.init(q, main)
	if err != nil {
		return nil, false, err
	}
	cur := ref(sc.label)
	// Transforms the WHERE clause needs are applied first, so that every
	// filter (and every OR branch) starts from the same table.
	if where != nil {
		if cur, err = c.whereTransforms(sc, where, cur); err != nil {
			return nil, false, err
		}
		if cur, err = c.pred(sc, where, cur); err != nil {
			return nil, false, err
		}
	}
	aggregate := len(q.GroupBy) == 0 && selectHasAggregate(q)
	if aggregate {
		if q.Having != nil {
			return nil, false, fail("HAVING without GROUP BY", "")
		}
		if q.Limit != nil && *q.Limit == 0 {
			return nil, false, fail("LIMIT 0", "")
		}
		if q.Offset != nil && *q.Offset > 0 {
			return nil, false, fail("OFFSET", "")
		}
		if l, ok, err := c.bareWithExtreme(sc, q, cur); ok || err != nil {
			return l, false, err
		}
		if keys := bareKeys(q); len(keys) > 0 {
			// SELECT b, SUM(y) … without GROUP BY: SQL takes b from a row
			// it does not name, which is well defined only when b holds
			// one value over the rows. Grouped by b, the query has that
			// one row exactly then (and several rows, or none, otherwise:
			// verification against the gold answer rejects those). The
			// one row needs no ORDER BY, and LIMIT n ≥ 1 keeps it.
			g := *q
			g.GroupBy, g.OrderBy, g.Limit = keys, nil, nil
			var names []string
			for _, k := range keys {
				names = append(names, render(k))
			}
			c.caveat = &sqlplan.Error{Reason: "bare column with aggregate holds several values",
				Detail: fmt.Sprintf("%s beside an aggregate without GROUP BY: SQL takes a value from a row it does not name", strings.Join(names, ", "))}
			if cur, err = c.group(sc, &g, cur); err != nil {
				return nil, false, err
			}
			return c.output(sc, &g, cur)
		}
		var answer []string
		for _, it := range q.Select {
			if it.Star {
				return nil, false, fail("bare column with aggregate", "* next to an aggregate")
			}
			l, err := c.resultLabel(sc, it.Expr, cur)
			if err != nil {
				return nil, false, err
			}
			answer = append(answer, l)
		}
		return answer, false, nil
	}
	if len(q.GroupBy) > 0 {
		if cur, err = c.group(sc, q, cur); err != nil {
			return nil, false, err
		}
	}
	return c.output(sc, q, cur)
}

// check rejects what the tools cannot express at all.
func check(q *sqlplan.Query) error {
	switch {
	case len(q.Compound) > 0:
		return fail("set operation", "%s", q.Compound[0].Op)
	case q.Window:
		if _, err := window(q); err != nil {
			return err
		}
	case q.With:
		return fail("WITH clause", "common table expressions are not decomposed")
	}
	for _, s := range q.From {
		if s.Sub != nil && len(q.From) > 1 {
			return fail("subquery in FROM joined with tables", "a FROM-subquery is decomposed only as the whole FROM clause")
		}
	}
	return nil
}

// window returns the one window function of q's select list that
// rank_data computes: RANK() or DENSE_RANK() OVER ([PARTITION BY p]
// ORDER BY k), a select item of its own; nil when there is none, and an
// error for any other use of windows.
func window(q *sqlplan.Query) (*sqlplan.Func, error) {
	var found *sqlplan.Func
	top := map[sqlplan.Expr]bool{}
	for _, it := range q.Select {
		if it.Expr != nil {
			top[it.Expr] = true
		}
	}
	var err error
	visit := func(e sqlplan.Expr) {
		sqlplan.Walk(e, func(x sqlplan.Expr) bool {
			f, ok := x.(*sqlplan.Func)
			if !ok || err != nil {
				return err == nil
			}
			switch f.Name {
			case "rank", "dense_rank", "row_number", "ntile", "lag", "lead", "first_value", "last_value", "nth_value", "percent_rank", "cume_dist":
			default:
				if f.Over == nil {
					return true
				}
			}
			switch {
			case f.Name != "rank" && f.Name != "dense_rank":
				err = fail("window function", "%s: rank_data computes RANK() and DENSE_RANK() only", render(f))
			case f.Over == nil || len(f.Args) > 0:
				err = fail("window function", "%s: a named window or arguments", render(f))
			case len(f.Over.OrderBy) != 1 || len(f.Over.Partition) > 1:
				err = fail("window function", "%s: rank_data ranks by one column, within at most one partition column", render(f))
			case f.Over.OrderBy[0].Nulls == "first" && f.Over.OrderBy[0].Desc || f.Over.OrderBy[0].Nulls == "last" && !f.Over.OrderBy[0].Desc:
				err = fail("window function", "%s: NULLS FIRST/LAST against the default", render(f))
			case !top[f]:
				err = fail("window function", "%s: a window inside an expression or outside the select list", render(f))
			case found != nil:
				err = fail("window function", "%s and %s: rank_data adds one rank_value column", render(found), render(f))
			default:
				found = f
			}
			return false
		})
	}
	for _, it := range q.Select {
		visit(it.Expr)
	}
	top = map[sqlplan.Expr]bool{} // elsewhere a window is never supported
	visit(q.Where)
	visit(q.Having)
	for _, o := range q.OrderBy {
		if a, ok := o.Expr.(*sqlplan.AliasRef); ok && a.Expr == sqlplan.Expr(found) && found != nil {
			continue // ORDER BY the rank's alias: sorting by rank_value
		}
		visit(o.Expr)
	}
	for _, g := range q.GroupBy {
		visit(g)
	}
	return found, err
}

// setOps maps SQL's compound operators to set_operation's operations.
var setOps = map[string]string{"UNION": "union", "UNION ALL": "union_all", "INTERSECT": "intersect", "EXCEPT": "except"}

// compound compiles a set operation: each part to rows on its own
// starting table, set_operation calls folding them left to right (as
// SQLite does), then the ORDER BY and LIMIT of the whole (SQLite attaches
// them to the last part) on the combined table, and one retrieve_data.
func (c *compiler) compound(q *sqlplan.Query, main bool) ([]string, bool, error) {
	parts := []*sqlplan.Query{q}
	for _, p := range q.Compound {
		parts = append(parts, p.Query)
	}
	last := parts[len(parts)-1]
	var sides []string
	var names []any
	for i, p := range parts {
		cp := *p
		cp.Compound = nil
		if i == len(parts)-1 {
			cp.OrderBy, cp.Limit, cp.Offset = nil, nil, nil
		}
		labels, _, err := c.query(&cp, main && i == 0)
		if err != nil {
			return nil, false, err
		}
		call := c.call(labels)
		if call == nil || call.Name != "retrieve_data" {
			return nil, false, fail("set operation over values", "each part of a set operation must select rows")
		}
		if i == 0 {
			names, _ = call.Args["key_names"].([]any)
		}
		sides = append(sides, labels[0])
	}
	acc := ref(sides[0])
	for i, part := range q.Compound {
		op, ok := setOps[part.Op]
		if !ok {
			return nil, false, fail("set operation", "%s", part.Op)
		}
		acc = ref(c.emit("set_operation", "SET_DF", map[string]any{"left": acc, "right": ref(sides[i+1]), "operation": op}))
	}
	delete(c.state, acc)
	if last.Offset != nil && *last.Offset > 0 {
		return nil, false, fail("OFFSET", "")
	}
	for i := len(last.OrderBy) - 1; i >= 0; i-- {
		o := last.OrderBy[i]
		col, ok := compoundKey(last, o.Expr, names)
		if !ok {
			return nil, false, fail("ORDER BY of a set operation", "%s is not a result column", render(o.Expr))
		}
		acc = ref(c.emit("sort_data", "SORTED_DF", map[string]any{"data_source": acc, "key_name": col, "ascending": !o.Desc}))
	}
	args := map[string]any{"data_source": acc, "key_names": names}
	if last.Limit != nil {
		args["limit"] = *last.Limit
	}
	return []string{c.emit("retrieve_data", "SELECT_COL", args)}, len(last.OrderBy) > 0, nil
}

// compoundKey finds the result column an ORDER BY term of a set
// operation names: by position, by alias, or as an expression of the
// last part's select list.
func compoundKey(last *sqlplan.Query, e sqlplan.Expr, names []any) (string, bool) {
	at := func(i int) (string, bool) {
		if i < 0 || i >= len(names) {
			return "", false
		}
		s, ok := names[i].(string)
		return s, ok
	}
	switch x := e.(type) {
	case *sqlplan.Literal:
		if n, ok := x.Value.(int64); ok {
			return at(int(n) - 1)
		}
	case *sqlplan.AliasRef:
		for i, it := range last.Select {
			if strings.EqualFold(it.Alias, x.Name) {
				return at(i)
			}
		}
	}
	for i, it := range last.Select {
		if it.Expr != nil && render(it.Expr) == render(e) {
			return at(i)
		}
	}
	return "", false
}

// call returns the call that produced the only label of labels, or nil.
func (c *compiler) call(labels []string) *toolenv.GoldCall {
	if len(labels) != 1 {
		return nil
	}
	for i := len(c.calls) - 1; i >= 0; i-- {
		if c.calls[i].Label == labels[0] {
			return &c.calls[i]
		}
	}
	return nil
}

func selectHasAggregate(q *sqlplan.Query) bool {
	for _, it := range q.Select {
		if it.Expr != nil && sqlplan.HasAggregate(it.Expr) {
			return true
		}
	}
	return false
}

// resultLabel compiles a selected expression of an answer made of
// values and returns the label of its result; a constant is no answer.
func (c *compiler) resultLabel(sc *scope, e sqlplan.Expr, cur string) (string, error) {
	op, err := c.scalar(sc, e, cur)
	if err != nil {
		return "", err
	}
	l, ok := labelOf(op)
	if !ok {
		return "", fail("constant result", "%s", render(e))
	}
	return l, nil
}

// operand is a compiled scalar: a "$label$" or a JSON number.
type operand any

func labelOf(op operand) (string, bool) {
	s, ok := op.(string)
	if !ok || !strings.HasPrefix(s, "$") {
		return "", false
	}
	return strings.Trim(s, "$"), true
}

// number converts a numeric literal to a JSON number.
func number(l *sqlplan.Literal) (json.Number, bool) {
	switch v := l.Value.(type) {
	case int64:
		return json.Number(fmt.Sprint(v)), true
	case float64:
		return json.Number(fmt.Sprint(v)), true
	}
	return "", false
}

// literalValue is the JSON value of a literal used as a filter value.
func literalValue(l *sqlplan.Literal) any {
	switch v := l.Value.(type) {
	case int64, float64:
		n, _ := number(l)
		return n
	case string:
		return v
	}
	return nil
}

// bareKeys returns the bare (aggregate-free, non-constant) expressions
// of an aggregate select list without GROUP BY, once each; nil when
// there are none or the list has a *.
func bareKeys(q *sqlplan.Query) []sqlplan.Expr {
	var keys []sqlplan.Expr
	seen := map[string]bool{}
	for _, it := range q.Select {
		if it.Star {
			return nil
		}
		if _, ok := it.Expr.(*sqlplan.Literal); ok || sqlplan.HasAggregate(it.Expr) {
			continue
		}
		if k := render(it.Expr); !seen[k] {
			seen[k] = true
			keys = append(keys, it.Expr)
		}
	}
	return keys
}

// bareWithExtreme compiles SELECT MAX(a), b, … (or MIN) without GROUP
// BY, with columns beside the one MAX or MIN and, maybe, other
// aggregates (SUM, COUNT, AVG; no second MIN or MAX): SQLite takes the
// bare columns from the row that holds the maximum (minimum), which is
// the row argmax (argmin) returns, and a equals the extreme there; the
// other aggregates are values over all the rows. ok is false when the
// select list has another shape.
func (c *compiler) bareWithExtreme(sc *scope, q *sqlplan.Query, cur string) ([]string, bool, error) {
	var ext *sqlplan.Func
	bare := false
	extremes := 0
	for _, it := range q.Select {
		if it.Star {
			return nil, false, nil
		}
		sqlplan.Walk(it.Expr, func(x sqlplan.Expr) bool {
			if f, ok := x.(*sqlplan.Func); ok && f.IsAggregate() && (f.Name == "max" || f.Name == "min") {
				extremes++
			}
			return true
		})
		switch x := it.Expr.(type) {
		case *sqlplan.ColumnRef:
			bare = true
			continue
		case *sqlplan.Func:
			if (x.Name == "max" || x.Name == "min") && !x.Distinct && !x.Star && len(x.Args) == 1 && ext == nil {
				if _, ok := x.Args[0].(*sqlplan.ColumnRef); ok {
					ext = x
					continue
				}
			}
		}
		if !sqlplan.HasAggregate(it.Expr) {
			return nil, false, nil
		}
	}
	if ext == nil || !bare || extremes != 1 || q.Distinct || len(q.OrderBy) > 0 {
		return nil, false, nil
	}
	ece, err := c.column(sc, ext.Args[0])
	if err != nil {
		return nil, true, err
	}
	if cur, err = c.use(sc, ece, cur); err != nil {
		return nil, true, err
	}
	var row string
	var answer, keys []any
	flush := func() {
		if len(keys) > 0 {
			answer = append(answer, c.emit("retrieve_data", "SELECT_COL", map[string]any{"data_source": row, "key_names": keys}))
			keys = nil
		}
	}
	for _, it := range q.Select {
		e := it.Expr
		if e == sqlplan.Expr(ext) {
			e = ext.Args[0]
		}
		if _, ok := e.(*sqlplan.ColumnRef); !ok {
			flush()
			l, err := c.resultLabel(sc, e, cur)
			if err != nil {
				return nil, true, err
			}
			answer = append(answer, l)
			continue
		}
		ce, err := c.column(sc, e)
		if err != nil {
			return nil, true, err
		}
		if _, err := c.use(sc, ce, cur); err != nil {
			return nil, true, err
		}
		if row == "" {
			row = ref(c.emit("aggregate_data", "AGG_DF", map[string]any{"data_source": cur, "key_name": ece.col, "aggregation_type": "arg" + ext.Name}))
		}
		keys = append(keys, ce.col)
	}
	flush()
	out := make([]string, len(answer))
	for i, a := range answer {
		out[i] = a.(string)
	}
	return out, true, nil
}
