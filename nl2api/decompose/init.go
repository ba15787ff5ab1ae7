package decompose

import (
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

func render(e sqlplan.Expr) string { return sqlplan.String(e) }

// init builds the starting table of q: the init call, the column
// prefixes, and the WHERE conjuncts left after join conditions moved into
// the init call.
func (c *compiler) init(q *sqlplan.Query, main bool) (*scope, sqlplan.Expr, error) {
	if len(q.From) == 0 {
		return nil, nil, fail("no FROM", "")
	}
	if q.From[0].Sub != nil {
		return c.derived(q, main)
	}
	label := sqltools.DefaultStartLabel
	if !main {
		c.subs++
		label = fmt.Sprintf("subquery_table_%d", c.subs)
	}
	sc := &scope{label: label, q: q, prefix: map[*sqlplan.Source]string{}, names: map[*sqlplan.Source]map[string]string{}, aggCols: map[string]string{}}
	alias := map[*sqlplan.Source]string{}
	for i, s := range q.From {
		alias[s] = fmt.Sprintf("T%d", i+1)
	}
	// Join conditions: ON clauses, and WHERE equalities that join a comma
	// or cross joined table.
	where := sqlplan.Conjuncts(q.Where)
	type joinSpec struct {
		kind string
		on   [][2]string
	}
	joins := make([]joinSpec, len(q.From))
	for i, s := range q.From {
		if i == 0 {
			continue
		}
		js := joinSpec{kind: s.Join}
		for _, cj := range sqlplan.Conjuncts(s.On) {
			l, r, ok := joinPair(cj, s, q.From[:i])
			if ok {
				js.on = append(js.on, [2]string{alias[l.Source] + "." + l.Column, alias[r.Source] + "." + r.Column})
				continue
			}
			if s.Join == "left" {
				return nil, nil, fail("LEFT JOIN condition", "ON %s is not an equality of columns", render(cj))
			}
			where = append(where, cj)
		}
		if s.Join == "comma" || s.Join == "cross" || (s.Join == "inner" && len(js.on) == 0) {
			var rest []sqlplan.Expr
			for _, w := range where {
				if l, r, ok := joinPair(w, s, q.From[:i]); ok {
					js.on = append(js.on, [2]string{alias[l.Source] + "." + l.Column, alias[r.Source] + "." + r.Column})
					continue
				}
				rest = append(rest, w)
			}
			where = rest
			js.kind = "inner"
			if len(js.on) == 0 {
				js.kind = "cross"
			}
		}
		joins[i] = js
	}
	prefixes := rolePrefixes(q.From, joins2pairs(q.From, alias, func(i int) [][2]string { return joins[i].on }))
	var starts []sqltools.StartTable
	for i, s := range q.From {
		st := sqltools.StartTable{Prefix: prefixes[i]}
		for _, col := range s.Table.Columns {
			st.Columns = append(st.Columns, col.Name)
		}
		starts = append(starts, st)
	}
	startNames := sqltools.StartColumnNames(starts)
	var tables []any
	for i, s := range q.From {
		sc.prefix[s] = prefixes[i]
		sc.names[s] = map[string]string{}
		t := map[string]any{"name": s.Table.Name, "alias": alias[s], "prefix": prefixes[i]}
		if i > 0 {
			t["join"] = joins[i].kind
			if len(joins[i].on) > 0 {
				var on []any
				for _, p := range joins[i].on {
					on = append(on, []any{p[0], p[1]})
				}
				t["on"] = on
			}
		}
		tables = append(tables, t)
		for j, col := range s.Table.Columns {
			name := startNames[i][j]
			sc.names[s][strings.ToLower(col.Name)] = name
			desc := c.describe(s.Table.Name, col.Name)
			if prefixes[i] != s.Table.Name {
				desc = strings.ReplaceAll(prefixes[i], "_", " ") + ": " + desc
			}
			c.columns = append(c.columns, sqltools.Column{Name: name, Type: col.Kind, Description: strings.TrimSpace(desc)})
		}
	}
	c.inits = append(c.inits, toolenv.GoldCall{Name: sqltools.InitTool, Label: label,
		Args: map[string]any{"database": c.db, "tables": tables}})
	var rest sqlplan.Expr
	for _, w := range where {
		if rest == nil {
			rest = w
		} else {
			rest = &sqlplan.Binary{Op: "AND", L: rest, R: w}
		}
	}
	return sc, rest, nil
}

// joinPair reports whether e is col = col between source s and one of
// the earlier sources (either order).
func joinPair(e sqlplan.Expr, s *sqlplan.Source, earlier []*sqlplan.Source) (l, r *sqlplan.ColumnRef, ok bool) {
	b, isBin := e.(*sqlplan.Binary)
	if !isBin || b.Op != "=" {
		return nil, nil, false
	}
	x, ok1 := b.L.(*sqlplan.ColumnRef)
	y, ok2 := b.R.(*sqlplan.ColumnRef)
	if !ok1 || !ok2 || x.Outer || y.Outer {
		return nil, nil, false
	}
	in := func(src *sqlplan.Source, list []*sqlplan.Source) bool {
		for _, e := range list {
			if e == src {
				return true
			}
		}
		return false
	}
	switch {
	case y.Source == s && in(x.Source, earlier):
		return x, y, true
	case x.Source == s && in(y.Source, earlier):
		return y, x, true
	case x.Source == s && y.Source == s:
		return x, y, true
	}
	return nil, nil, false
}

func joins2pairs(from []*sqlplan.Source, alias map[*sqlplan.Source]string, on func(int) [][2]string) map[*sqlplan.Source][]string {
	// For each source, the names of the columns of other sources it is
	// joined to: the roles it plays ("eye_colour_id" → "eye_colour").
	byAlias := map[string]*sqlplan.Source{}
	for _, s := range from {
		byAlias[alias[s]] = s
	}
	roles := map[*sqlplan.Source][]string{}
	for i := range from {
		for _, p := range on(i) {
			la, lc, _ := strings.Cut(p[0], ".")
			ra, rc, _ := strings.Cut(p[1], ".")
			ls, rs := byAlias[la], byAlias[ra]
			roles[rs] = append(roles[rs], lc)
			roles[ls] = append(roles[ls], rc)
		}
	}
	return roles
}

// rolePrefixes names each source's columns: the table name, except for a
// table used more than once, whose uses are named by the column that
// joins them ("eye_colour_id" → "eye_colour"), else numbered.
func rolePrefixes(from []*sqlplan.Source, roles map[*sqlplan.Source][]string) []string {
	count := map[string]int{}
	for _, s := range from {
		count[strings.ToLower(s.Table.Name)]++
	}
	out := make([]string, len(from))
	used := map[string]bool{}
	for i, s := range from {
		name := s.Table.Name
		if count[strings.ToLower(name)] > 1 {
			for _, r := range roles[s] {
				r = strings.TrimSuffix(strings.TrimSuffix(r, "_id"), "_ID")
				if r != "" && !strings.EqualFold(r, "id") && !used[r] {
					name = r
					break
				}
			}
		}
		name = sqltools.SanitizeColumn(name)
		for base, n := name, 2; used[name]; n++ {
			name = fmt.Sprintf("%s_%d", base, n)
		}
		used[name] = true
		out[i] = name
	}
	return out
}

// colName is the starting-table name of a column reference.
// hasColumn says whether the starting table has a column named name.
func (sc *scope) hasColumn(name string) bool {
	for _, m := range sc.names {
		for _, n := range m {
			if n == name {
				return true
			}
		}
	}
	return false
}

func (sc *scope) colName(r *sqlplan.ColumnRef) (string, error) {
	if r.Outer {
		return "", fail("correlated subquery", "%s", r.Column)
	}
	names, ok := sc.names[r.Source]
	if !ok {
		return "", fail("column of another query", "%s", r.Column)
	}
	n, ok := names[strings.ToLower(r.Column)]
	if !ok {
		return "", fail("unknown column", "%s", r.Column)
	}
	return n, nil
}

// derived compiles the FROM-subquery that is q's whole FROM clause to
// rows (on its own starting table), which then are the data the outer
// query works on: its columns are the subquery's result columns.
func (c *compiler) derived(q *sqlplan.Query, main bool) (*scope, sqlplan.Expr, error) {
	src := q.From[0]
	labels, _, err := c.query(src.Sub, main)
	if err != nil {
		return nil, nil, err
	}
	call := c.call(labels)
	if call == nil || call.Name != "retrieve_data" {
		return nil, nil, fail("subquery in FROM", "the subquery yields values, not rows")
	}
	keys, _ := call.Args["key_names"].([]any)
	outs, err := resultNames(src.Sub)
	if err != nil {
		return nil, nil, err
	}
	if len(outs) != len(keys) {
		return nil, nil, fail("subquery in FROM", "%d result columns, %d retrieved", len(outs), len(keys))
	}
	sc := &scope{label: labels[0], q: q, prefix: map[*sqlplan.Source]string{}, names: map[*sqlplan.Source]map[string]string{src: {}}, aggCols: map[string]string{}}
	for i, n := range outs {
		k, _ := keys[i].(string)
		if _, dup := sc.names[src][strings.ToLower(n)]; !dup {
			sc.names[src][strings.ToLower(n)] = k
		}
	}
	// The rows are new data: their columns hold what the subquery
	// selected, untransformed as far as the outer query is concerned.
	delete(c.state, ref(labels[0]))
	return sc, q.Where, nil
}

// resultNames are the names of a query's result columns, as an outer
// query refers to them: the alias, else the column's name; "*" expanded.
func resultNames(q *sqlplan.Query) ([]string, error) {
	var out []string
	for _, it := range q.Select {
		switch {
		case it.Star:
			for _, s := range q.From {
				if it.StarSource != nil && it.StarSource != s {
					continue
				}
				if s.Table == nil {
					return nil, fail("subquery in FROM", "* over a nested subquery")
				}
				for _, col := range s.Table.Columns {
					out = append(out, col.Name)
				}
			}
		case it.Alias != "":
			out = append(out, it.Alias)
		default:
			if cr, ok := it.Expr.(*sqlplan.ColumnRef); ok {
				out = append(out, cr.Column)
			} else {
				out = append(out, render(it.Expr))
			}
		}
	}
	return out, nil
}
