package endpoint

import (
	"fmt"
	"strings"

	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

// name is the endpoint name after "get_": what it returns, how it is
// ordered, and the parameters it takes.
func (m *maker) name(q *sqlplan.Query) string {
	var parts []string
	seen := map[string]bool{}
	for _, it := range q.Select {
		w := itemWord(it)
		if !seen[w] {
			seen[w] = true
			parts = append(parts, w)
		}
	}
	if len(parts) > 3 {
		parts = append(parts[:3], "more")
	}
	name := strings.Join(parts, "_and_")
	if len(q.OrderBy) > 0 {
		key := exprWord(q.OrderBy[0].Expr)
		switch {
		case q.Limit != nil && q.OrderBy[0].Desc:
			name += "_with_highest_" + key
		case q.Limit != nil:
			name += "_with_lowest_" + key
		default:
			name += "_sorted_by_" + key
		}
	}
	var by []string
	seenBy := map[string]bool{}
	for _, p := range m.params {
		// IN lists and numbered repeats name the endpoint once.
		n := strings.TrimRight(p.Name, "0123456789")
		if n != p.Name {
			n = strings.TrimSuffix(n, "_")
		}
		if !seenBy[n] {
			seenBy[n] = true
			by = append(by, n)
		}
	}
	if len(by) > 3 {
		by = append(by[:3], "more")
	}
	if len(by) > 0 {
		name += "_by_" + strings.Join(by, "_and_")
	}
	if len(q.Compound) > 0 {
		name += "_" + strings.ToLower(strings.Fields(q.Compound[0].Op)[0]) + "_others"
	}
	return paramBase(name)
}

func itemWord(it *sqlplan.SelectItem) string {
	if it.Star {
		if it.StarSource != nil && it.StarSource.Table != nil {
			return it.StarSource.Table.Name + "_records"
		}
		return "records"
	}
	if it.Alias != "" && !strings.EqualFold(it.Alias, "calculate") {
		if _, isCol := it.Expr.(*sqlplan.ColumnRef); !isCol {
			return paramBase(it.Alias)
		}
	}
	return exprWord(it.Expr)
}

// exprWord names an expression in a few words.
func exprWord(e sqlplan.Expr) string {
	switch x := e.(type) {
	case *sqlplan.ColumnRef:
		if generic[strings.ToLower(x.Column)] && x.Source != nil && x.Source.Table != nil {
			return paramBase(x.Source.Table.Name + "_" + x.Column)
		}
		return paramBase(x.Column)
	case *sqlplan.AliasRef:
		return exprWord(x.Expr)
	case *sqlplan.Func:
		arg := ""
		if len(x.Args) == 1 {
			arg = exprWord(x.Args[0])
		}
		switch x.Name {
		case "count":
			if x.Star || arg == "" {
				return "count"
			}
			if x.Distinct {
				return "distinct_" + arg + "_count"
			}
			if c, ok := x.Args[0].(*sqlplan.ColumnRef); ok && c.Source != nil && c.Source.Table != nil {
				return paramBase(c.Source.Table.Name) + "_count"
			}
			return "count"
		case "sum", "total":
			return "total_" + arg
		case "avg":
			return "average_" + arg
		case "min", "max":
			if arg != "" {
				return x.Name + "_" + arg
			}
		}
		if arg != "" {
			return arg + "_" + funcPart(x)
		}
		return x.Name
	case *sqlplan.Cast:
		return exprWord(x.X)
	case *sqlplan.Binary:
		if isPercentage(x) {
			return "percentage"
		}
		switch x.Op {
		case "/":
			return "ratio"
		case "-":
			return "difference"
		case "+":
			return "sum"
		case "*":
			return "product"
		}
	case *sqlplan.Subquery:
		if len(x.Q.Select) == 1 && !x.Q.Select[0].Star {
			return exprWord(x.Q.Select[0].Expr)
		}
	case *sqlplan.Case:
		return "result"
	}
	return "value"
}

// isPercentage recognises x * 100 / y and x / y * 100.
func isPercentage(e sqlplan.Expr) bool {
	hundred := false
	div := false
	sqlplan.Walk(e, func(x sqlplan.Expr) bool {
		switch y := x.(type) {
		case *sqlplan.Binary:
			if y.Op == "/" {
				div = true
			}
			if y.Op == "*" {
				for _, side := range []sqlplan.Expr{y.L, y.R} {
					if l, ok := side.(*sqlplan.Literal); ok && fmt.Sprint(l.Value) == "100" {
						hundred = true
					}
				}
			}
		case *sqlplan.Func:
			return !y.IsAggregate()
		}
		return true
	})
	return hundred && div
}

// describeQuery says in one or two sentences what the endpoint returns.
func (m *maker) describeQuery(q *sqlplan.Query) string {
	var b strings.Builder
	var items []string
	for _, it := range q.Select {
		items = append(items, m.itemPhrase(it))
	}
	b.WriteString("Returns ")
	if q.Distinct {
		b.WriteString("the distinct ")
	}
	b.WriteString(joinPhrases(items))
	var tables []string
	for _, s := range q.From {
		if s.Table != nil {
			tables = append(tables, s.Table.Name)
		}
	}
	if len(tables) > 0 {
		b.WriteString(" from " + tables[0])
		if len(tables) > 1 {
			b.WriteString(" joined with " + joinPhrases(uniq(tables[1:])))
		}
	}
	if len(m.params) > 0 {
		var conds []string
		for _, p := range m.params {
			conds = append(conds, "`"+p.Name+"`")
		}
		b.WriteString(", for the rows selected by " + joinPhrases(conds))
	}
	if len(q.GroupBy) > 0 {
		var gs []string
		for _, g := range q.GroupBy {
			gs = append(gs, m.exprPhrase(g))
		}
		b.WriteString(", per " + joinPhrases(gs))
	}
	if len(q.OrderBy) > 0 {
		o := q.OrderBy[0]
		dir := "ascending"
		if o.Desc {
			dir = "descending"
		}
		b.WriteString(fmt.Sprintf(", ordered by %s (%s)", m.exprPhrase(o.Expr), dir))
	}
	if q.Limit != nil {
		if *q.Limit == 1 {
			b.WriteString(", first row only")
		} else {
			b.WriteString(fmt.Sprintf(", first %d rows", *q.Limit))
		}
	}
	if len(q.Compound) > 0 {
		b.WriteString(fmt.Sprintf(" (%s another query)", strings.ToLower(q.Compound[0].Op)))
	}
	b.WriteString(".")
	return b.String()
}

func (m *maker) itemPhrase(it *sqlplan.SelectItem) string {
	if it.Star {
		return "all columns"
	}
	return m.exprPhrase(it.Expr)
}

// exprPhrase describes an expression for people.
func (m *maker) exprPhrase(e sqlplan.Expr) string {
	switch x := e.(type) {
	case *sqlplan.ColumnRef:
		if x.Source != nil && x.Source.Table != nil {
			d := m.describe(x.Source.Table.Name, x.Column)
			s := x.Source.Table.Name + "." + x.Column
			if d.Description != "" {
				s += " (" + strings.TrimSuffix(oneLine(d.Description, 80), ".") + ")"
			}
			return s
		}
		return x.Column
	case *sqlplan.AliasRef:
		return m.exprPhrase(x.Expr)
	case *sqlplan.Func:
		var args []string
		for _, a := range x.Args {
			args = append(args, m.exprPhrase(a))
		}
		arg := strings.Join(args, ", ")
		if x.Star {
			arg = "rows"
		}
		if x.Distinct {
			arg = "distinct " + arg
		}
		switch x.Name {
		case "count":
			return "the number of " + arg
		case "sum", "total":
			return "the total of " + arg
		case "avg":
			return "the average of " + arg
		case "min":
			return "the smallest " + arg
		case "max":
			return "the largest " + arg
		}
		return fmt.Sprintf("%s(%s)", x.Name, arg)
	case *sqlplan.Cast:
		return m.exprPhrase(x.X)
	case *sqlplan.Binary:
		if isPercentage(x) {
			return "a percentage computed from " + m.ingredients(x)
		}
		switch x.Op {
		case "/":
			return "the ratio of " + m.exprPhrase(x.L) + " to " + m.exprPhrase(x.R)
		case "-":
			return "the difference between " + m.exprPhrase(x.L) + " and " + m.exprPhrase(x.R)
		case "+":
			return "the sum of " + m.exprPhrase(x.L) + " and " + m.exprPhrase(x.R)
		}
		return "a value computed from " + m.ingredients(x)
	case *sqlplan.Literal:
		return x.Raw
	case *sqlplan.Subquery:
		if len(x.Q.Select) == 1 && !x.Q.Select[0].Star {
			return m.exprPhrase(x.Q.Select[0].Expr) + " (of a subquery)"
		}
		return "a subquery's value"
	case *sqlplan.Case:
		return "a value computed from " + m.ingredients(x)
	}
	return "a value computed from " + m.ingredients(e)
}

// ingredients lists the columns an expression reads.
func (m *maker) ingredients(e sqlplan.Expr) string {
	var cols []string
	sqlplan.Walk(e, func(x sqlplan.Expr) bool {
		if c, ok := x.(*sqlplan.ColumnRef); ok && c.Source != nil && c.Source.Table != nil {
			cols = append(cols, c.Source.Table.Name+"."+c.Column)
		}
		return true
	})
	cols = uniq(cols)
	if len(cols) == 0 {
		return "constants"
	}
	return joinPhrases(cols)
}

func uniq(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func joinPhrases(list []string) string {
	switch len(list) {
	case 0:
		return ""
	case 1:
		return list[0]
	}
	return strings.Join(list[:len(list)-1], ", ") + " and " + list[len(list)-1]
}

// resultColumns names the result columns as the SQL does.
func resultColumns(q *sqlplan.Query) []string {
	var out []string
	for _, it := range q.Select {
		switch {
		case it.Alias != "":
			out = append(out, it.Alias)
		case it.Star:
			out = append(out, "*")
		default:
			if c, ok := it.Expr.(*sqlplan.ColumnRef); ok {
				out = append(out, c.Column)
			} else {
				out = append(out, sqlplan.String(it.Expr))
			}
		}
	}
	return out
}
