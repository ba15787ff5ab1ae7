package sqlplan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sqlc-dev/meyer/ast"
)

// Ranking is a rewrite of a query whose row order its ORDER BY decides:
// SQL returning every row the query ranks (its LIMIT and OFFSET left
// out), each followed by its ORDER BY values as Keys extra columns. Rows
// that are equal in every key are ties: SQL does not say which of them a
// LIMIT keeps, nor in which order they come.
type Ranking struct {
	SQL  string
	Keys int
	// Limit and Offset are the original query's (Limit -1: none).
	Limit, Offset int64
}

// RankQuery returns the Ranking of sql. ok is false when sql is not one
// SELECT (no compound, WITH or VALUES) with an ORDER BY, when it selects
// DISTINCT rows (extra columns would change which rows are distinct), or
// when its LIMIT or OFFSET is not an integer literal.
func RankQuery(sql string) (r *Ranking, ok bool) {
	stmt, err := Parse(sql)
	if err != nil || stmt.With != nil || len(stmt.Cores) != 1 {
		return nil, false
	}
	q, isSelect := stmt.Cores[0].(*ast.SelectQuery)
	if !isSelect || q.Distinct == ast.DistinctDistinct || len(q.OrderBy) == 0 || len(q.Columns) == 0 {
		return nil, false
	}
	text := func(n ast.Node) string { return sql[n.Pos():n.End()] }
	r = &Ranking{Limit: -1, Keys: len(q.OrderBy)}
	var keys []string
	for i, o := range q.OrderBy {
		k := text(o.Expr)
		switch x := o.Expr.(type) {
		case *ast.Ident: // a result column's alias wins in ORDER BY
			for _, c := range q.Columns {
				if c.Alias != nil && strings.EqualFold(c.Alias.Name, x.Name) && c.Expr != nil {
					k = text(c.Expr)
				}
			}
		case *ast.Literal: // ORDER BY 2: the second result column
			if n, err := strconv.Atoi(x.Raw); err == nil {
				if n < 1 || n > len(q.Columns) || q.Columns[n-1].Expr == nil {
					return nil, false
				}
				if _, star := q.Columns[n-1].Expr.(*ast.Star); star {
					return nil, false
				}
				k = text(q.Columns[n-1].Expr)
			}
		}
		keys = append(keys, fmt.Sprintf("(%s) AS \"__toolenv_rank_%d\"", k, i+1))
	}
	if l := q.Limit; l != nil {
		var err error
		if r.Limit, err = intLiteral(l.Count); err != nil {
			return nil, false
		}
		if l.Offset != nil {
			if r.Offset, err = intLiteral(l.Offset); err != nil {
				return nil, false
			}
		}
	}
	last := q.Columns[len(q.Columns)-1]
	var b strings.Builder
	b.WriteString(sql[:last.End()])
	b.WriteString(", " + strings.Join(keys, ", "))
	if q.Limit != nil {
		b.WriteString(sql[last.End():q.Limit.Pos()])
		b.WriteString(sql[q.Limit.End():])
	} else {
		b.WriteString(sql[last.End():])
	}
	r.SQL = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(b.String()), ";"))
	return r, true
}

func intLiteral(e ast.Expr) (int64, error) {
	l, ok := e.(*ast.Literal)
	if !ok {
		return 0, fmt.Errorf("not a literal")
	}
	return strconv.ParseInt(l.Raw, 10, 64)
}

// NestedRankings returns the Ranking of every subquery of sql (scalar,
// IN, EXISTS or FROM) whose LIMIT keeps rows by an ORDER BY: SQL does
// not say which of the rows that tie at the LIMIT's cut it keeps, so the
// answer of the whole query may depend on SQLite's choice among them.
// Each Ranking's SQL runs on its own only when the subquery is not
// correlated. Subqueries RankQuery cannot rank are left out.
func NestedRankings(sql string) []*Ranking {
	stmt, err := Parse(sql)
	if err != nil {
		return nil
	}
	var out []*Ranking
	ast.Walk(stmt, func(n ast.Node) bool {
		s, ok := n.(*ast.SelectStmt)
		if !ok || s == stmt || len(s.Cores) != 1 {
			return true
		}
		q, ok := s.Cores[0].(*ast.SelectQuery)
		if !ok || q.Limit == nil || len(q.OrderBy) == 0 || s.Pos() < 0 || s.End() > len(sql) || s.Pos() >= s.End() {
			return true
		}
		if r, ok := RankQuery(sql[s.Pos():s.End()]); ok && r.Limit >= 0 {
			out = append(out, r)
		}
		return true
	})
	return out
}
