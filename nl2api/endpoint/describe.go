package endpoint

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

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
		n := strings.TrimRight(p.raw, "0123456789")
		if n != p.raw {
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
	return wordBase(name)
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
			return wordBase(it.Alias)
		}
	}
	return exprWord(it.Expr)
}

// exprWord names an expression in a few words.
func exprWord(e sqlplan.Expr) string {
	switch x := e.(type) {
	case *sqlplan.ColumnRef:
		if generic[strings.ToLower(x.Column)] && x.Source != nil && x.Source.Table != nil {
			return wordBase(x.Source.Table.Name + "_" + x.Column)
		}
		return wordBase(x.Column)
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
				return wordBase(c.Source.Table.Name) + "_count"
			}
			return "count"
		case "sum", "total":
			return "total_" + arg
		case "avg":
			return "average_" + arg
		case "min", "max":
			// smallest_/largest_, not min_/max_: those name parameters.
			if arg != "" {
				return map[string]string{"min": "smallest_", "max": "largest_"}[x.Name] + arg
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

// describeQuery says what the endpoint returns, so that its name,
// description and parameters together determine it: every condition
// (with the parameter it compares with, or the constant), grouping,
// ranking, limit and set operation is stated, and every constant the
// query computes with appears in it.
func (m *maker) describeQuery(q *sqlplan.Query) string {
	return m.queryPhrase(q) + "."
}

// queryPhrase is describeQuery without the final period.
func (m *maker) queryPhrase(q *sqlplan.Query) string {
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
	// Every source, and how it joins: a table joined twice in two roles
	// (eye colour, hair colour) is two different endpoints.
	var from []string
	for _, s := range q.From {
		src := ""
		switch {
		case s.Table != nil:
			src = s.Table.Name
		case s.Sub != nil:
			src = "(" + m.queryPhrase(s.Sub) + ")"
		}
		if s.On != nil {
			src += " (on " + m.condPhrase(s.On) + ")"
		} else if s.Join == "left" || s.Join == "cross" {
			src += " (" + s.Join + " join)"
		}
		if s.Join == "left" {
			src = strings.Replace(src, " (on ", " (left join on ", 1)
		}
		from = append(from, src)
	}
	if len(from) > 0 {
		b.WriteString(" from " + from[0])
		if len(from) > 1 {
			b.WriteString(" joined with " + joinPhrases(from[1:]))
		}
	}
	if q.Where != nil {
		b.WriteString(", for the rows where " + m.condPhrase(q.Where))
	}
	if len(q.GroupBy) > 0 {
		var gs []string
		for _, g := range q.GroupBy {
			gs = append(gs, m.exprPhrase(g))
		}
		b.WriteString(", per " + joinPhrases(gs))
	}
	if q.Having != nil {
		b.WriteString(", keeping the groups where " + m.condPhrase(q.Having))
	}
	order, limit, offset := q.OrderBy, q.Limit, q.Offset
	if n := len(q.Compound); n > 0 {
		last := q.Compound[n-1].Query
		order, limit, offset = last.OrderBy, last.Limit, last.Offset
	}
	if len(q.Compound) > 0 {
		for _, c := range q.Compound {
			part := *c.Query
			part.OrderBy, part.Limit, part.Offset = nil, nil, nil
			phrase := map[string]string{
				"UNION": "; together with (UNION, without duplicates) what this returns: ", "UNION ALL": "; together with (UNION ALL) what this returns: ",
				"INTERSECT": "; keeping only the rows (INTERSECT) that this also returns: ", "EXCEPT": "; leaving out the rows (EXCEPT) that this returns: ",
			}[c.Op]
			if phrase == "" {
				phrase = "; " + c.Op + " "
			}
			b.WriteString(phrase + lowerFirst(m.queryPhrase(&part)))
		}
		if len(order) > 0 || limit != nil {
			b.WriteString("; of all that")
		}
	}
	if len(order) > 0 {
		var keys []string
		for _, o := range order {
			k := m.exprPhrase(o.Expr)
			if o.Desc {
				k += " (descending)"
			}
			keys = append(keys, k)
		}
		switch {
		case limit != nil && *limit == 1:
			b.WriteString(", only the row with the " + map[bool]string{true: "highest ", false: "lowest "}[order[0].Desc] + m.exprPhrase(order[0].Expr))
			if len(order) > 1 {
				b.WriteString(" (ties: ordered by " + joinPhrases(keys[1:]) + ")")
			}
		case limit != nil:
			b.WriteString(fmt.Sprintf(", the %d rows with the %s%s", *limit, map[bool]string{true: "highest ", false: "lowest "}[order[0].Desc], m.exprPhrase(order[0].Expr)))
			if len(order) > 1 {
				b.WriteString(" (ties: ordered by " + joinPhrases(keys[1:]) + ")")
			}
		default:
			b.WriteString(", ordered by " + strings.Join(keys, ", then "))
		}
	} else if limit != nil {
		if *limit == 1 {
			b.WriteString(", one row only")
		} else {
			b.WriteString(fmt.Sprintf(", %d rows only", *limit))
		}
	}
	if offset != nil && *offset > 0 {
		b.WriteString(fmt.Sprintf(", after skipping the first %d", *offset))
	}
	return b.String()
}

func lowerFirst(s string) string {
	if r, size := utf8.DecodeRuneInString(s); size > 0 {
		return string(unicode.ToLower(r)) + s[size:]
	}
	return s
}

// itemPhrase describes a returned item; a column comes with its
// description.
func (m *maker) itemPhrase(it *sqlplan.SelectItem) string {
	if it.Star {
		if it.StarSource != nil && it.StarSource.Name() != "" {
			return "all columns of " + it.StarSource.Name()
		}
		return "all columns"
	}
	s := m.exprPhrase(it.Expr)
	if x, ok := it.Expr.(*sqlplan.ColumnRef); ok && x.Source != nil && x.Source.Table != nil {
		if d := m.describe(x.Source.Table.Name, x.Column); d.Description != "" {
			s += " (" + strings.TrimSuffix(oneLine(d.Description, 80), ".") + ")"
		}
	}
	return s
}

// param returns the parameter a literal became, or nil.
func (m *maker) param(l *sqlplan.Literal) *Param {
	for i := range m.params {
		if m.params[i].pos == l.Pos && m.params[i].end == l.End {
			return &m.params[i]
		}
	}
	return nil
}

// condPhrase states a condition in words: each comparison with its
// parameter (`name`) or its constant.
func (m *maker) condPhrase(e sqlplan.Expr) string {
	switch x := e.(type) {
	case *sqlplan.Binary:
		switch x.Op {
		case "AND":
			return m.condPhrase(x.L) + " and " + m.condPhrase(x.R)
		case "OR":
			return "either " + m.condPhrase(x.L) + " or " + m.condPhrase(x.R)
		}
		if ph, ok := cmpWords[x.Op]; ok {
			l, r, op := x.L, x.R, x.Op
			if _, isLit := l.(*sqlplan.Literal); isLit {
				l, r, op = r, l, flip[op]
				ph = cmpWords[op]
			}
			return m.exprPhrase(l) + " " + ph + " " + m.exprPhrase(r)
		}
	case *sqlplan.Unary:
		if x.Op == "NOT" {
			return "not (" + m.condPhrase(x.X) + ")"
		}
	case *sqlplan.In:
		verb := "is one of"
		if x.Not {
			verb = "is none of"
		}
		if x.Sub != nil {
			return m.exprPhrase(x.X) + " " + verb + " (" + lowerFirst(m.queryPhrase(x.Sub)) + ")"
		}
		var vs []string
		for _, v := range x.List {
			vs = append(vs, m.exprPhrase(v))
		}
		return m.exprPhrase(x.X) + " " + verb + " " + joinPhrases(vs)
	case *sqlplan.Between:
		verb := "is between"
		if x.Not {
			verb = "is not between"
		}
		return m.exprPhrase(x.X) + " " + verb + " " + m.exprPhrase(x.Lo) + " and " + m.exprPhrase(x.Hi) + " (inclusive)"
	case *sqlplan.Like:
		verb := "matches the " + x.Op + " pattern"
		if x.Not {
			verb = "does not match the " + x.Op + " pattern"
		}
		return m.exprPhrase(x.X) + " " + verb + " " + m.exprPhrase(x.Pattern)
	case *sqlplan.IsNull:
		if x.Not {
			return m.exprPhrase(x.X) + " is not null"
		}
		return m.exprPhrase(x.X) + " is null"
	case *sqlplan.Exists:
		verb := "there is a row: "
		if x.Not {
			verb = "there is no row: "
		}
		return verb + "(" + lowerFirst(m.queryPhrase(x.Q)) + ")"
	}
	return m.exprPhrase(e) + " holds"
}

var cmpWords = map[string]string{"=": "equals", "==": "equals", "<>": "differs from", "!=": "differs from", ">": "is greater than", ">=": "is at least",
	"<": "is less than", "<=": "is at most", "IS": "is", "IS NOT": "is not"}

// exprPhrase describes an expression for people, naming every column,
// parameter (`name`) and constant it uses.
func (m *maker) exprPhrase(e sqlplan.Expr) string {
	switch x := e.(type) {
	case *sqlplan.ColumnRef:
		if x.Source != nil && x.Source.Table != nil {
			return x.Source.Table.Name + "." + x.Column
		}
		return x.Column
	case *sqlplan.AliasRef:
		return m.exprPhrase(x.Expr)
	case *sqlplan.Literal:
		if p := m.param(x); p != nil {
			return "`" + p.Name + "`"
		}
		switch {
		case x.Kind == sqlplan.LitNull:
			return "null"
		case x.Kind == sqlplan.LitString && x.Value == "":
			return "the empty text ''"
		case x.Kind == sqlplan.LitString:
			return "'" + x.Value.(string) + "'"
		}
		return x.Raw
	case *sqlplan.Func:
		return m.funcPhrase(x)
	case *sqlplan.Cast:
		inner := m.exprPhrase(x.X)
		switch strings.ToUpper(x.Type) {
		case "INTEGER", "INT":
			return inner + " as a whole number"
		case "TEXT":
			return inner + " as text"
		}
		return inner
	case *sqlplan.Unary:
		if x.Op == "-" {
			return "minus " + m.exprPhrase(x.X)
		}
		if x.Op == "NOT" {
			return "not (" + m.condPhrase(x.X) + ")"
		}
		return m.exprPhrase(x.X)
	case *sqlplan.Binary:
		if sym, ok := arithWords[x.Op]; ok {
			return m.operand(x.L) + " " + sym + " " + m.operand(x.R)
		}
		if x.Op == "AND" || x.Op == "OR" || cmpWords[x.Op] != "" {
			return "whether " + m.condPhrase(x)
		}
		return m.operand(x.L) + " " + x.Op + " " + m.operand(x.R)
	case *sqlplan.Case:
		var parts []string
		for _, w := range x.Whens {
			cond := ""
			if x.Operand != nil {
				cond = m.exprPhrase(x.Operand) + " equals " + m.exprPhrase(w.Cond)
			} else {
				cond = m.condPhrase(w.Cond)
			}
			parts = append(parts, m.exprPhrase(w.Then)+" when "+cond)
		}
		s := strings.Join(parts, ", ")
		if x.Else != nil {
			s += ", else " + m.exprPhrase(x.Else)
		} else {
			s += ", else null"
		}
		return "(" + s + ")"
	case *sqlplan.Subquery:
		return "(" + lowerFirst(m.queryPhrase(x.Q)) + ")"
	case *sqlplan.Collate:
		return m.exprPhrase(x.X)
	case *sqlplan.IsNull, *sqlplan.In, *sqlplan.Between, *sqlplan.Like, *sqlplan.Exists:
		return "whether " + m.condPhrase(e)
	}
	return "a value computed from " + m.ingredients(e)
}

var arithWords = map[string]string{"+": "+", "-": "−", "*": "×", "/": "÷", "%": "modulo", "||": "followed by"}

// operand is an operand of arithmetic, parenthesised when it is itself
// arithmetic.
func (m *maker) operand(e sqlplan.Expr) string {
	if b, ok := e.(*sqlplan.Binary); ok && arithWords[b.Op] != "" {
		return "(" + m.exprPhrase(e) + ")"
	}
	return m.exprPhrase(e)
}

// funcPhrase describes a function call in words.
func (m *maker) funcPhrase(x *sqlplan.Func) string {
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
	lit := func(i int) (*sqlplan.Literal, bool) {
		if i >= len(x.Args) {
			return nil, false
		}
		l, ok := x.Args[i].(*sqlplan.Literal)
		return l, ok && m.param(l) == nil
	}
	if w := x.Over; w != nil && (x.Name == "rank" || x.Name == "dense_rank" || x.Name == "row_number") {
		// A window: say what is ranked, in which direction, within what.
		s := map[string]string{"rank": "the rank", "dense_rank": "the dense rank (no gaps after ties)", "row_number": "the row number"}[x.Name]
		for i, o := range w.OrderBy {
			way := ", smallest first"
			if o.Desc {
				way = ", largest first"
			}
			if i == 0 {
				s += " by "
			} else {
				s += ", then by "
			}
			s += m.exprPhrase(o.Expr) + way
		}
		if len(w.Partition) > 0 {
			var ps []string
			for _, p := range w.Partition {
				ps = append(ps, m.exprPhrase(p))
			}
			s += " within each " + joinPhrases(ps)
		}
		return s
	}
	switch x.Name {
	case "count":
		return "the number of " + arg
	case "sum", "total":
		return "the total of " + arg
	case "avg":
		return "the average of " + arg
	case "min":
		if len(x.Args) == 1 {
			return "the smallest " + arg
		}
		return "the smallest of " + joinPhrases(args)
	case "max":
		if len(x.Args) == 1 {
			return "the largest " + arg
		}
		return "the largest of " + joinPhrases(args)
	case "round":
		if len(args) == 2 {
			return args[0] + " rounded to " + args[1] + " digits"
		}
		return args[0] + " rounded to a whole number"
	case "abs":
		return "the absolute value of " + arg
	case "lower", "upper":
		return arg + " in " + x.Name + " case"
	case "length":
		return "the length of " + arg
	case "substr", "substring":
		if len(args) >= 2 {
			s, ok := lit(1)
			from := "position " + args[1]
			if ok {
				if v, isInt := s.Value.(int64); isInt && v < 0 {
					from = fmt.Sprintf("the %d. character from the end", -v)
					if len(args) == 2 {
						return fmt.Sprintf("the last %d characters of %s", -v, args[0])
					}
				}
			}
			if len(args) == 3 {
				return fmt.Sprintf("the %s characters from %s of %s", args[2], from, args[0])
			}
			return fmt.Sprintf("the characters from %s on of %s", from, args[0])
		}
	case "strftime":
		if len(x.Args) == 2 {
			if l, ok := lit(0); ok {
				if part, known := map[string]string{"%Y": "year", "%m": "month (01-12)", "%d": "day of the month", "%Y-%m": "year and month (YYYY-MM)", "%H": "hour", "%M": "minute"}[fmt.Sprint(l.Value)]; known {
					return "the " + part + " of " + args[1]
				}
				return fmt.Sprintf("%s formatted as '%v'", args[1], l.Value)
			}
		}
	case "date":
		if len(args) == 1 {
			return "the date (YYYY-MM-DD) of " + args[0]
		}
	case "iif":
		if len(x.Args) == 3 {
			return "(" + args[1] + " when " + m.condPhrase(x.Args[0]) + ", else " + args[2] + ")"
		}
	case "coalesce", "ifnull":
		return "the first of " + joinPhrases(args) + " that is not null"
	case "replace":
		if len(args) == 3 {
			return args[0] + " with " + args[1] + " replaced by " + args[2]
		}
	case "instr":
		if len(args) == 2 {
			return "the position of " + args[1] + " in " + args[0]
		}
	}
	return x.Name + " of " + arg
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

// ResultNames names the result columns of q as its endpoint's response
// does: a column by its name, an aliased item by its alias, any other
// expression in words, never SQL text.
func ResultNames(q *sqlplan.Query) []string {
	names, _ := resultColumns(q)
	return names
}

// resultColumns names the result columns: a column by its name, an
// aliased item by its alias, any other expression by words for what it
// computes ("average_value", never SQL text); all distinct. aliased
// reports the items that need an alias in the template to be named so.
func resultColumns(q *sqlplan.Query) (names []string, aliased []bool) {
	used := map[string]bool{}
	// An alias must not take a column's name: ORDER BY would read the
	// alias instead of the column.
	taken := map[string]bool{}
	for _, s := range q.From {
		if s.Table != nil {
			for _, c := range s.Table.Columns {
				taken[strings.ToLower(c.Name)] = true
			}
		}
	}
	for _, it := range q.Select {
		name, alias := "", false
		switch {
		case it.Alias != "":
			name = it.Alias
		case it.Star:
			name = "*"
		default:
			if c, ok := it.Expr.(*sqlplan.ColumnRef); ok {
				name = c.Column
			} else {
				name, alias = exprWord(it.Expr), true
			}
		}
		if alias {
			if taken[strings.ToLower(name)] {
				name = "result_" + name
			}
			for base, n := name, 2; used[strings.ToLower(name)] || taken[strings.ToLower(name)]; n++ {
				name = fmt.Sprintf("%s_%d", base, n)
			}
		}
		used[strings.ToLower(name)] = true
		names, aliased = append(names, name), append(aliased, alias)
	}
	return names, aliased
}
