package decompose

import (
	"slices"
	"strings"

	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

// aggKey identifies an aggregate expression.
func aggKey(f *sqlplan.Func) string { return render(f) }

// group compiles GROUP BY, the per-group aggregates the query uses, and
// HAVING. It returns the per-group table.
// afterGrouping returns the expressions evaluated over the groups:
// HAVING, the select list and ORDER BY, in that order.
func afterGrouping(q *sqlplan.Query) []sqlplan.Expr {
	out := append(make([]sqlplan.Expr, 0, 1+len(q.Select)+len(q.OrderBy)), q.Having)
	for _, it := range q.Select {
		out = append(out, it.Expr)
	}
	for _, o := range q.OrderBy {
		out = append(out, o.Expr)
	}
	return out
}

func (c *compiler) group(sc *scope, q *sqlplan.Query, cur string) (string, error) {
	var keys []colExpr
	for _, g := range q.GroupBy {
		ce, err := c.column(sc, g)
		if err != nil {
			return "", err
		}
		keys = append(keys, ce)
	}
	// Aggregates of HAVING, the select list and ORDER BY, in that order.
	var aggs []*sqlplan.Func
	seen := map[string]bool{}
	collect := func(e sqlplan.Expr) {
		sqlplan.Walk(e, func(x sqlplan.Expr) bool {
			if f, ok := x.(*sqlplan.Func); ok && f.IsAggregate() {
				if !seen[aggKey(f)] {
					seen[aggKey(f)] = true
					aggs = append(aggs, f)
				}
				return false
			}
			return true
		})
	}
	for _, e := range afterGrouping(q) {
		collect(e)
	}
	// Columns that aggregates read are transformed before grouping.
	type aggArg struct {
		f   *sqlplan.Func
		typ string
		ce  *colExpr
	}
	var plan []aggArg
	for _, f := range aggs {
		typ := aggTypes[f.Name]
		if typ == "" || f.Name == "total" {
			return "", fail("unsupported aggregate", "%s", f.Name)
		}
		a := aggArg{f: f, typ: typ}
		if !f.Star {
			if len(f.Args) != 1 {
				return "", fail("unsupported aggregate", "%s", render(f))
			}
			if _, _, _, ok := conditional(f.Args[0]); ok {
				return "", fail("per-group aggregate of CASE", "%s", render(f))
			}
			ce, err := c.column(sc, f.Args[0])
			if err != nil {
				return "", err
			}
			var uerr error
			if cur, uerr = c.use(sc, ce, cur); uerr != nil {
				return "", uerr
			}
			a.ce = &ce
		}
		plan = append(plan, a)
	}
	for _, k := range keys {
		var err error
		if cur, err = c.use(sc, k, cur); err != nil {
			return "", err
		}
	}
	for _, k := range keys {
		cur = ref(c.emit("group_data_by", "GROUPED_DF", map[string]any{"data_source": cur, "key_name": k.col}))
	}
	// A per-group aggregate replaces its column's values, so a column
	// holds one; a further aggregate of the column (or one of a group
	// key) goes to a new column of its type (new_column: max_value, ...).
	isKey := map[string]bool{}
	for _, k := range keys {
		isKey[k.col] = true
	}
	// Columns the select list, HAVING or ORDER BY read as they are (a
	// bare column: its value in one row of the group) keep their values:
	// an aggregate of one goes to a new column.
	raw := map[string]bool{}
	var rawUse func(e sqlplan.Expr)
	rawUse = func(e sqlplan.Expr) {
		sqlplan.Walk(e, func(x sqlplan.Expr) bool {
			switch y := x.(type) {
			case *sqlplan.AliasRef:
				rawUse(y.Expr)
				return false
			case *sqlplan.Func:
				return !y.IsAggregate()
			case *sqlplan.Subquery:
				return false
			case *sqlplan.ColumnRef:
				if n, err := sc.colName(y); err == nil {
					raw[n] = true
				}
			}
			return true
		})
	}
	for _, e := range afterGrouping(q) {
		rawUse(e)
	}
	holder := map[string]string{}
	for _, a := range plan {
		col := ""
		if a.ce != nil {
			col = a.ce.col
		}
		name := col
		if name == "" {
			name = "row_count"
		}
		newColumn := false
		if prev, ok := holder[name]; ok && prev != aggKey(a.f) || isKey[name] || raw[name] {
			if col == "" || !slices.Contains(sqltools.NewColumnTypes, a.typ) {
				if isKey[name] {
					return "", fail("aggregate of a group key", "%s", render(a.f))
				}
				return "", fail("two aggregates of one column", "%s and %s", prev, aggKey(a.f))
			}
			name, newColumn = sqltools.NewColumnName(a.typ), true
			if prev, ok := holder[name]; ok || sc.hasColumn(name) {
				return "", fail("two aggregates of one column", "%s needs column %s, which holds %s", aggKey(a.f), name, prev)
			}
		}
		holder[name] = aggKey(a.f)
		args := map[string]any{"data_source": cur, "aggregation_type": a.typ}
		if col != "" {
			args["key_name"] = col
		}
		if newColumn {
			args["new_column"] = true
		}
		if a.f.Distinct && a.typ != "min" && a.typ != "max" {
			args["distinct"] = true
		}
		cur = ref(c.emit("aggregate_data", "AGG_DF", args))
		sc.aggCols[aggKey(a.f)] = name
	}
	if len(plan) == 0 {
		// GROUP BY without aggregates: one row per group all the same.
		cur = ref(c.emit("aggregate_data", "AGG_DF", map[string]any{"data_source": cur, "aggregation_type": "count"}))
	}
	sc.grouped = true
	// Raw uses of aggregated columns after this point would read the
	// aggregates: mark them as transformed.
	st := map[string]string{}
	for k, v := range c.state[cur] {
		st[k] = v
	}
	for name, key := range holder {
		if name != "row_count" {
			st[name] = "aggregate " + key
		}
	}
	c.state[cur] = st
	if q.Having != nil {
		var err error
		if cur, err = c.pred(sc, q.Having, cur); err != nil {
			return "", err
		}
	}
	return cur, nil
}

// output compiles ORDER BY and the select list into sorts and one
// retrieve_data call.
func (c *compiler) output(sc *scope, q *sqlplan.Query, cur string) ([]string, bool, error) {
	if q.Offset != nil && *q.Offset > 0 {
		return nil, false, fail("OFFSET", "")
	}
	for _, o := range q.OrderBy {
		if o.Nulls == "first" && o.Desc || o.Nulls == "last" && !o.Desc {
			return nil, false, fail("NULLS FIRST/LAST", "")
		}
	}
	// A window function of the select list: rank_data adds its
	// rank_value column to the rows before they are sorted.
	w, err := window(q)
	if err != nil {
		return nil, false, err
	}
	if w != nil {
		o := w.Over.OrderBy[0]
		key, err := c.column(sc, o.Expr)
		if err != nil {
			return nil, false, err
		}
		if cur, err = c.use(sc, key, cur); err != nil {
			return nil, false, err
		}
		args := map[string]any{"data_source": cur, "key_name": key.col, "ascending": !o.Desc, "method": w.Name}
		if len(w.Over.Partition) == 1 {
			p, err := c.column(sc, w.Over.Partition[0])
			if err != nil {
				return nil, false, err
			}
			if cur, err = c.use(sc, p, cur); err != nil {
				return nil, false, err
			}
			args["data_source"] = cur
			args["partition_key_name"] = p.col
		}
		cur = ref(c.emit("rank_data", "RANKED_DF", args))
		sc.ranked = w
	}
	// Resolve the select list first: its transforms conflict with raw
	// uses in ORDER BY otherwise unnoticed.
	var cols []colExpr
	for _, it := range q.Select {
		if it.Star {
			for _, s := range q.From {
				if it.StarSource != nil && it.StarSource != s {
					continue
				}
				if s.Table == nil { // a FROM-subquery: its result columns
					names, err := resultNames(s.Sub)
					if err != nil {
						return nil, false, err
					}
					for _, n := range names {
						cols = append(cols, colExpr{col: sc.names[s][strings.ToLower(n)]})
					}
					continue
				}
				for _, col := range s.Table.Columns {
					cols = append(cols, colExpr{col: sc.names[s][strings.ToLower(col.Name)], kind: col.Kind})
				}
			}
			continue
		}
		if _, ok := it.Expr.(*sqlplan.Literal); ok {
			return nil, false, fail("constant in the select list", "%s", render(it.Expr))
		}
		if _, _, _, ok := conditional(it.Expr); ok {
			return nil, false, fail("CASE in the select list", "%s", render(it.Expr))
		}
		ce, err := c.column(sc, it.Expr)
		if err != nil {
			return nil, false, err
		}
		cols = append(cols, ce)
	}
	// Sorts: the last key first, since each sort keeps the earlier order
	// among its ties.
	for i := len(q.OrderBy) - 1; i >= 0; i-- {
		o := q.OrderBy[i]
		ce, err := c.column(sc, o.Expr)
		if err != nil {
			return nil, false, err
		}
		if cur, err = c.use(sc, ce, cur); err != nil {
			return nil, false, err
		}
		cur = ref(c.emit("sort_data", "SORTED_DF", map[string]any{"data_source": cur, "key_name": ce.col, "ascending": !o.Desc}))
	}
	var keys []any
	for _, ce := range cols {
		var err error
		if cur, err = c.use(sc, ce, cur); err != nil {
			return nil, false, err
		}
		keys = append(keys, ce.col)
	}
	args := map[string]any{"data_source": cur, "key_names": keys}
	if q.Distinct {
		args["distinct"] = true
	}
	if q.Limit != nil {
		if *q.Limit < 0 {
			return nil, false, fail("negative LIMIT", "")
		}
		args["limit"] = *q.Limit
	}
	l := c.emit("retrieve_data", "SELECT_COL", args)
	return []string{l}, len(q.OrderBy) > 0, nil
}
