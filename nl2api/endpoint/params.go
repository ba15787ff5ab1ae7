package endpoint

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/toolenv/toolenv/internal/ident"

	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

type maker struct {
	sql      string
	describe Describer
	params   []Param
	values   map[string]any
	used     map[string]int
}

// query collects the parameters of q's WHERE and HAVING and those of
// every subquery, in the select list, FROM, WHERE or HAVING.
func (m *maker) query(q *sqlplan.Query) {
	for _, s := range q.From {
		if s.Sub != nil {
			m.query(s.Sub)
		}
		m.subqueries(s.On)
	}
	for _, it := range q.Select {
		m.subqueries(it.Expr)
	}
	m.cond(q, q.Where)
	m.cond(q, q.Having)
	for _, g := range q.GroupBy {
		m.subqueries(g)
	}
	for _, o := range q.OrderBy {
		m.subqueries(o.Expr)
	}
	for _, c := range q.Compound {
		m.query(c.Query)
	}
}

func (m *maker) subqueries(e sqlplan.Expr) {
	for _, sq := range sqlplan.Subqueries(e) {
		m.query(sq)
	}
}

var opSuffix = map[string]string{"=": "", "==": "", "<>": "excluded", "!=": "excluded", ">": "min", ">=": "min", "<": "max", "<=": "max"}

// opPhrase says what a comparison with a parameter keeps.
var opPhrase = map[string]string{
	"=": "equals this value", "==": "equals this value", "<>": "differs from this value", "!=": "differs from this value",
	">": "is greater than this value", ">=": "is at least this value", "<": "is less than this value", "<=": "is at most this value",
}

// The phrases of IN list parameters: each item is one parameter.
const (
	inPhrase    = "equals this value or another value of the same list (IN)"
	notInPhrase = "differs from this value and from every other value of the same list (NOT IN)"
)

var flip = map[string]string{"=": "=", "==": "==", "<>": "<>", "!=": "!=", ">": "<", "<": ">", ">=": "<=", "<=": ">="}

// cond walks a condition and turns the literals compared with columns
// into parameters.
func (m *maker) cond(q *sqlplan.Query, e sqlplan.Expr) {
	if e == nil {
		return
	}
	sqlplan.Walk(e, func(x sqlplan.Expr) bool {
		switch p := x.(type) {
		case *sqlplan.Binary:
			if _, ok := opSuffix[p.Op]; ok {
				l, r, op := p.L, p.R, p.Op
				if _, isLit := l.(*sqlplan.Literal); isLit {
					l, r, op = r, l, flip[op]
				}
				// An empty string stays in the template: it is part of
				// what the endpoint means ("is empty"), and an empty
				// value for an equality parameter is refused.
				if lit, ok := r.(*sqlplan.Literal); ok && lit.Kind != sqlplan.LitNull && lit.Value != "" {
					if subject, ok := m.subject(l); ok {
						name := subject.base
						if s := opSuffix[op]; s != "" {
							name = s + "_" + name
						}
						m.add(name, lit, subject, opPhrase[op])
					}
				}
				return true
			}
		case *sqlplan.Like:
			if lit, ok := p.Pattern.(*sqlplan.Literal); ok && lit.Kind == sqlplan.LitString {
				if subject, ok := m.subject(p.X); ok {
					name, phrase := subject.base+"_pattern", "matches this LIKE pattern (% any run, _ one character)"
					if p.Not {
						name, phrase = "excluded_"+name, "does not match this LIKE pattern (% any run, _ one character)"
					}
					if p.Op == "GLOB" {
						phrase = "matches this GLOB pattern (* any run, ? one character)"
					}
					m.add(name, lit, subject, phrase)
				}
			}
		case *sqlplan.Between:
			if subject, ok := m.subject(p.X); ok {
				loP, hiP := "is at least this value (BETWEEN, inclusive)", "is at most this value (BETWEEN, inclusive)"
				if p.Not {
					loP, hiP = "is below this value or above the upper bound (NOT BETWEEN)", "is above this value or below the lower bound (NOT BETWEEN)"
				}
				if lo, ok := p.Lo.(*sqlplan.Literal); ok && lo.Kind != sqlplan.LitNull {
					m.add("min_"+subject.base, lo, subject, loP)
				}
				if hi, ok := p.Hi.(*sqlplan.Literal); ok && hi.Kind != sqlplan.LitNull {
					m.add("max_"+subject.base, hi, subject, hiP)
				}
			}
		case *sqlplan.In:
			if subject, ok := m.subject(p.X); ok && p.Sub == nil {
				phrase := inPhrase
				if p.Not {
					phrase = notInPhrase
				}
				for i, it := range p.List {
					if lit, ok := it.(*sqlplan.Literal); ok && lit.Kind != sqlplan.LitNull && lit.Value != "" {
						m.add(fmt.Sprintf("%s_%d", subject.base, i+1), lit, subject, phrase)
					}
				}
			}
		case *sqlplan.Subquery:
			m.query(p.Q)
			return false
		case *sqlplan.Exists:
			m.query(p.Q)
			return false
		}
		if in, ok := x.(*sqlplan.In); ok && in.Sub != nil {
			m.query(in.Sub)
		}
		return true
	})
}

// subject is what a parameter is compared with.
type subject struct {
	base   string // parameter base name
	column string // table.column
	what   string // phrase: "the year of event_date"
	col    Column
	kind   string
}

// subject recognises a column, or a function of one column, as the thing
// a literal is compared with.
func (m *maker) subject(e sqlplan.Expr) (subject, bool) {
	switch x := e.(type) {
	case *sqlplan.ColumnRef:
		if x.Source == nil || x.Source.Table == nil {
			return subject{base: wordBase(x.Column), what: x.Column, kind: x.Kind}, true
		}
		t := x.Source.Table.Name
		base := wordBase(x.Column)
		if generic[strings.ToLower(x.Column)] {
			base = wordBase(t + "_" + x.Column)
		}
		return subject{base: base, column: t + "." + x.Column, what: t + "." + x.Column, col: m.describe(t, x.Column), kind: x.Kind}, true
	case *sqlplan.Func:
		if len(x.Args) == 0 {
			return subject{}, false
		}
		var inner sqlplan.Expr
		for _, a := range x.Args {
			if _, lit := a.(*sqlplan.Literal); !lit {
				if inner != nil {
					return subject{}, false
				}
				inner = a
			}
		}
		s, ok := m.subject(inner)
		if !ok {
			return subject{}, false
		}
		part := funcPart(x)
		s.base = s.base + "_" + part
		s.what = strings.ReplaceAll(part, "_", " ") + " of " + s.what
		s.kind = sqlplan.Kind(x)
		return s, true
	case *sqlplan.Cast:
		return m.subject(x.X)
	case *sqlplan.Collate:
		return m.subject(x.X)
	case *sqlplan.Binary:
		// column op column (a difference, a ratio): name it after both.
		switch x.Op {
		case "+", "-", "*", "/":
			l, ok1 := m.subject(x.L)
			r, ok2 := m.subject(x.R)
			if ok1 && ok2 {
				word := map[string]string{"+": "plus", "-": "minus", "*": "times", "/": "per"}[x.Op]
				return subject{base: l.base + "_" + word + "_" + r.base, what: l.what + " " + map[string]string{"+": "+", "-": "-", "*": "×", "/": "/"}[x.Op] + " " + r.what, kind: sqlplan.Kind(x)}, true
			}
			if ok1 {
				if _, lit := x.R.(*sqlplan.Literal); lit {
					return l, true
				}
			}
		}
	}
	return subject{}, false
}

// funcPart names what a function extracts: year, month, day, date, ...
func funcPart(f *sqlplan.Func) string {
	switch f.Name {
	case "strftime":
		if len(f.Args) > 0 {
			if l, ok := f.Args[0].(*sqlplan.Literal); ok {
				switch l.Value {
				case "%Y":
					return "year"
				case "%m":
					return "month"
				case "%d":
					return "day"
				case "%Y-%m":
					return "year_month"
				}
			}
		}
		return "formatted"
	case "substr", "substring":
		if len(f.Args) == 3 {
			s, ok1 := f.Args[1].(*sqlplan.Literal)
			n, ok2 := f.Args[2].(*sqlplan.Literal)
			if ok1 && ok2 {
				switch fmt.Sprint(s.Value, ",", n.Value) {
				case "1,4":
					return "year"
				case "6,2":
					return "month"
				case "1,7":
					return "year_month"
				case "1,10":
					return "date"
				case "9,2":
					return "day"
				}
			}
		}
		return "part"
	case "date":
		return "date"
	case "lower", "upper":
		return "text"
	}
	return f.Name
}

// generic column names get their table's name in front.
var generic = map[string]bool{"id": true, "name": true, "type": true, "status": true, "date": true, "year": true, "value": true, "code": true, "description": true}

// wordBase turns a name into lower-case words joined by single
// underscores, keeping letters of every script (names and titles are
// made from it).
func wordBase(s string) string {
	var b strings.Builder
	under := true
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			under = false
			continue
		}
		if !under {
			b.WriteByte('_')
		}
		under = true
	}
	return strings.TrimRight(b.String(), "_")
}

// paramBase is the ASCII identifier of a name (ident.ASCII: ä→ae, ß→ss),
// lower case, never starting with a digit or an underscore (toolenv's own
// query options start with one).
func paramBase(s string) string {
	out := strings.ToLower(ident.ASCII(wordBase(s)))
	if out == "" || out[0] >= '0' && out[0] <= '9' {
		out = "p_" + out
	}
	return out
}

// Title is a name in words for people: underscores as spaces, each word
// capitalised, Unicode kept ("größe_by_jahr" → "Größe By Jahr").
func Title(name string) string {
	words := strings.Split(name, "_")
	for i, w := range words {
		if r, size := utf8.DecodeRuneInString(w); size > 0 {
			words[i] = string(unicode.ToUpper(r)) + w[size:]
		}
	}
	return strings.Join(strings.Fields(strings.Join(words, " ")), " ")
}

// add records a parameter for lit.
func (m *maker) add(name string, lit *sqlplan.Literal, s subject, phrase string) {
	for _, p := range m.params {
		if p.pos == lit.Pos {
			return // already a parameter (walked twice)
		}
	}
	raw := wordBase(name)
	base := paramBase(raw)
	name = ident.Limit(base, 64)
	for n := 2; m.used[name] > 0; n++ {
		name = ident.Limit(fmt.Sprintf("%s_%d", base, n), 64)
	}
	m.used[name]++
	typ, format := "string", ""
	switch lit.Kind {
	case sqlplan.LitInt:
		typ = "integer"
	case sqlplan.LitFloat:
		typ = "number"
	default:
		if v, ok := lit.Value.(string); ok && isDate(v) {
			format = "date"
		}
	}
	var desc strings.Builder
	what := s.what
	if s.col.Description != "" {
		desc.WriteString(upperFirst(strings.TrimSuffix(s.col.Description, ".")))
		desc.WriteString(" (" + what + ")")
	} else {
		desc.WriteString(upperFirst(what))
	}
	desc.WriteString(": the rows where it " + phrase)
	if s.what != s.column && s.column != "" && strings.Contains(s.what, " of ") {
		desc.WriteString(" (compared with " + s.what + ")")
	}
	desc.WriteString(".")
	if v := oneLine(s.col.Values, 160); v != "" {
		desc.WriteString(" " + v)
	}
	if m.values == nil {
		m.values = map[string]any{}
	}
	m.values[name] = lit.Value
	nonEmpty := typ == "string" && (phrase == opPhrase["="] || phrase == inPhrase)
	m.params = append(m.params, Param{Name: name, Title: Title(raw), Type: typ, Format: format, Description: desc.String(), Column: s.column, NonEmpty: nonEmpty, pos: lit.Pos, end: lit.End, base: s.base, raw: raw})
}

// isDate reports whether s is a date, YYYY-MM-DD.
func isDate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	if c := s[0]; c >= 'a' && c <= 'z' {
		return string(c-'a'+'A') + s[1:]
	}
	return s
}

// oneLine collapses whitespace and cuts s at about n bytes on a word.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimPrefix(s, "commonsense evidence: ")
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndex(s[:n], " ")
	if cut < n/2 {
		cut = n
	}
	return s[:cut] + " …"
}
