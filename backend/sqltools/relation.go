package sqltools

import (
	"fmt"
	"strings"

	"github.com/toolenv/toolenv/backend/sqltools/rodb"
)

// frag is a piece of SQL and the values bound to its placeholders, in
// textual order. Values are only ever bound, never spliced into the text.
type frag struct {
	sql  string
	args []any
}

// sqlb builds SQL text and its argument list together, so that the
// arguments stay in the order their placeholders appear.
type sqlb struct {
	b    strings.Builder
	args []any
}

func (s *sqlb) text(t string) *sqlb { s.b.WriteString(t); return s }

func (s *sqlb) frag(f frag) *sqlb {
	s.b.WriteString(f.sql)
	s.args = append(s.args, f.args...)
	return s
}

func (s *sqlb) bind(v any) *sqlb {
	s.b.WriteByte('?')
	s.args = append(s.args, v)
	return s
}

func (s *sqlb) done() frag { return frag{sql: s.b.String(), args: s.args} }

// fmtFrag builds a fragment from a format whose %s verbs take fragments.
func fmtFrag(format string, parts ...frag) frag {
	var b sqlb
	i := 0
	for {
		j := strings.Index(format, "%s")
		if j < 0 {
			b.text(format)
			break
		}
		b.text(format[:j])
		if i < len(parts) {
			b.frag(parts[i])
		}
		i++
		format = format[j+2:]
	}
	return b.done()
}

func bound(v any) frag { return frag{sql: "?", args: []any{v}} }

// qcol is a visible column of a query: its public name, the expression
// computing it in the query's scope, and its JSON kind.
type qcol struct {
	name string
	expr frag
	kind string // "integer", "number", "string"
	// agg marks an expression that is an aggregate (per-group results).
	agg bool
}

// okey is a sort key: an expression in the query's scope.
type okey struct {
	expr frag
	desc bool
}

// query is one SELECT level. Every stored result is a query; operations
// derive new queries, adding a level (wrap) only when SQL requires it:
// filtering or sorting after a LIMIT, DISTINCT or GROUP BY.
//
// Every query has a defined row order: its sort keys, then tie, the
// identity of its rows (the joined tables' rowids or primary keys, the
// group keys of grouped rows, the columns of distinct rows). Two results
// read from the same data therefore list their rows in the same order,
// whatever index SQLite chooses to scan, and the values of one row stay
// together however many calls read them.
type query struct {
	from     frag
	cols     []qcol
	where    []frag
	groupBy  []frag
	order    []okey
	tie      []okey
	limit    int // -1: none
	distinct bool
}

func (q *query) clone() *query {
	c := *q
	c.cols = append([]qcol(nil), q.cols...)
	c.where = append([]frag(nil), q.where...)
	c.groupBy = append([]frag(nil), q.groupBy...)
	c.order = append([]okey(nil), q.order...)
	c.tie = append([]okey(nil), q.tie...)
	return &c
}

// sortBy puts key first among q's sort keys; rows equal in every key
// keep their identity order (tie).
func (q *query) sortBy(key frag, desc bool) {
	q.order = append([]okey{{expr: key, desc: desc}}, q.order...)
}

// distinctRows makes q's rows distinct: identical rows become one, and
// the rows' identity is their values.
func (q *query) distinctRows() {
	q.distinct = true
	q.tie = q.tie[:0]
	for _, c := range q.cols {
		q.tie = append(q.tie, okey{expr: c.expr})
	}
}

// col returns the visible column name, or nil.
func (q *query) col(name string) *qcol {
	for i := range q.cols {
		if q.cols[i].name == name {
			return &q.cols[i]
		}
	}
	return nil
}

func (q *query) colNames() []string {
	out := make([]string, len(q.cols))
	for i, c := range q.cols {
		out[i] = c.name
	}
	return out
}

// sealed reports whether the query's row set is fixed by LIMIT, DISTINCT
// or GROUP BY, so that a filter or sort must go on an outer level.
func (q *query) sealed() bool { return q.limit >= 0 || q.distinct || len(q.groupBy) > 0 }

// sql renders the query. With hidden set, the sort keys are projected too
// (as __o1, __o2, ...) so that an outer level can keep the order.
func (q *query) sql(hidden bool) frag {
	var b sqlb
	b.text("SELECT ")
	if q.distinct {
		b.text("DISTINCT ")
	}
	for i, c := range q.cols {
		if i > 0 {
			b.text(", ")
		}
		b.frag(c.expr).text(" AS ").text(rodb.Quote(c.name))
	}
	if hidden {
		for i, k := range q.order {
			b.text(", ").frag(k.expr).text(fmt.Sprintf(" AS %s", rodb.Quote(hiddenOrder(i))))
		}
		for i, k := range q.tie {
			b.text(", ").frag(k.expr).text(fmt.Sprintf(" AS %s", rodb.Quote(hiddenTie(i))))
		}
	}
	if q.from.sql != "" {
		b.text(" FROM ").frag(q.from)
	}
	if len(q.where) > 0 {
		b.text(" WHERE ")
		for i, w := range q.where {
			if i > 0 {
				b.text(" AND ")
			}
			b.text("(").frag(w).text(")")
		}
	}
	if len(q.groupBy) > 0 {
		b.text(" GROUP BY ")
		for i, g := range q.groupBy {
			if i > 0 {
				b.text(", ")
			}
			b.frag(g)
		}
	}
	if len(q.order)+len(q.tie) > 0 {
		b.text(" ORDER BY ")
		for i, k := range q.order {
			if i > 0 {
				b.text(", ")
			}
			b.frag(k.expr)
			if k.desc {
				b.text(" DESC")
			}
		}
		for i, k := range q.tie {
			if i > 0 || len(q.order) > 0 {
				b.text(", ")
			}
			b.frag(k.expr)
			if k.desc {
				b.text(" DESC")
			}
		}
	}
	if q.limit >= 0 {
		b.text(" LIMIT ").bind(int64(q.limit))
	}
	return b.done()
}

func hiddenOrder(i int) string { return fmt.Sprintf("__o%d", i+1) }

func hiddenTie(i int) string { return fmt.Sprintf("__t%d", i+1) }

// wrap returns a query selecting every visible column from q as a
// subquery, keeping q's order and row identity through hidden columns
// (distinct rows are identified by their visible columns).
func (q *query) wrap(seq *int) *query {
	*seq++
	alias := fmt.Sprintf("s%d", *seq)
	hidden := !q.distinct && len(q.order)+len(q.tie) > 0
	inner := q.sql(hidden)
	w := &query{from: fmtFrag("(%s) AS "+rodb.Quote(alias), inner), limit: -1}
	ref := func(name string) frag { return frag{sql: rodb.Quote(alias) + "." + rodb.Quote(name)} }
	for _, c := range q.cols {
		w.cols = append(w.cols, qcol{name: c.name, expr: ref(c.name), kind: c.kind})
	}
	if q.distinct {
		for _, c := range q.cols {
			w.tie = append(w.tie, okey{expr: ref(c.name)})
		}
		return w
	}
	for i, k := range q.order {
		w.order = append(w.order, okey{expr: ref(hiddenOrder(i)), desc: k.desc})
	}
	for i, k := range q.tie {
		w.tie = append(w.tie, okey{expr: ref(hiddenTie(i)), desc: k.desc})
	}
	return w
}

// open returns q itself or, if its row set is sealed, a wrapped copy: a
// query whose rows may be filtered and sorted further.
func (q *query) open(seq *int) *query { return q.derive(q.sealed(), seq) }

// derive returns a query to build on: q wrapped as a subquery when wrap
// (what is added next must not change what q's own clauses mean), else
// a copy of q.
func (q *query) derive(wrap bool, seq *int) *query {
	if wrap {
		return q.wrap(seq)
	}
	return q.clone()
}

// linked reports whether q's columns depend on one another: in a
// per-group query, a bare column takes its value from the row holding a
// min or max aggregate of the same SELECT (SQLite's rule), which a
// projection without the aggregate would lose. Projections of a linked
// query wrap it.
func (q *query) linked() bool {
	if len(q.groupBy) == 0 {
		return false
	}
	for _, c := range q.cols {
		if c.agg {
			return true
		}
	}
	return false
}

// countSQL counts q's rows.
func (q *query) countSQL() frag {
	return fmtFrag("SELECT COUNT(*) FROM (%s)", q.sql(false))
}

// previewSQL returns q's first n rows.
func (q *query) previewSQL(n int) frag {
	c := q.clone()
	if c.limit < 0 || c.limit > n {
		c.limit = n
	}
	return c.sql(false)
}
