package sqlplan

// Query is one resolved SELECT (a compound's first part, the others in
// Compound).
type Query struct {
	Distinct bool
	Select   []*SelectItem
	From     []*Source
	Where    Expr
	GroupBy  []Expr
	Having   Expr
	OrderBy  []*OrderItem
	// Limit and Offset are set when the query has them (literal integers).
	Limit, Offset *int64
	// Compound holds the UNION / EXCEPT / INTERSECT parts after the first.
	Compound []*CompoundPart
	// Correlated says a subquery refers to columns of an outer query.
	Correlated bool
	// Window says the query uses window functions.
	Window bool
	// With says the query had a WITH clause (CTEs are resolved as
	// derived tables).
	With bool

	parent  *Query
	aliases map[string]Expr // select aliases, lower-cased
}

// SelectItem is one result column.
type SelectItem struct {
	Expr  Expr
	Alias string
	// Star is set for "*" or "t.*" (Expr is nil); StarSource for "t.*".
	Star       bool
	StarSource *Source
}

// Source is one FROM item: a table or a derived table, with how it joins
// the items before it.
type Source struct {
	// Table is the table's schema (nil for a derived table).
	Table *Table
	// Sub is the derived table's query.
	Sub *Query
	// Alias is the alias as written ("" when none).
	Alias string
	// Join is "" for the first item, else "inner", "left", "cross" or
	// "comma" (a comma join).
	Join string
	// On is the join condition (nil for none).
	On Expr
	// Index is the item's position in From.
	Index int
}

// Name is how the query refers to the source: its alias, else its table.
func (s *Source) Name() string {
	if s.Alias != "" {
		return s.Alias
	}
	if s.Table != nil {
		return s.Table.Name
	}
	return ""
}

// OrderItem is one ORDER BY key.
type OrderItem struct {
	Expr Expr
	Desc bool
	// Nulls is "", "first" or "last".
	Nulls string
}

// CompoundPart is one part of a compound select after the first.
type CompoundPart struct {
	Op    string // "UNION", "UNION ALL", "EXCEPT", "INTERSECT"
	Query *Query
}

// Expr is an expression of the plan.
type Expr interface{ expr() }

// ColumnRef is a resolved column: the source it comes from and the
// column's name as the schema spells it.
type ColumnRef struct {
	Source *Source
	Column string
	Kind   string // "integer", "number", "string" or "" (derived tables)
	// Outer says the column belongs to an enclosing query (correlation).
	Outer bool
}

// LiteralKind is the type of a literal.
type LiteralKind int

// The literal kinds.
const (
	LitNull LiteralKind = iota
	LitInt
	LitFloat
	LitString
)

// Literal is a constant, with its byte span in the original SQL.
type Literal struct {
	Kind LiteralKind
	// Value is int64, float64, string or nil.
	Value any
	// Raw is the literal as written (with a leading "-" when negated).
	Raw      string
	Pos, End int
}

// Binary is an infix operation: "AND", "OR", "=", "<>", "<", "<=", ">",
// ">=", "+", "-", "*", "/", "%", "||", "IS", "IS NOT", and the bit
// operators.
type Binary struct {
	Op   string
	L, R Expr
}

// Unary is a prefix operation: "NOT", "-", "+", "~".
type Unary struct {
	Op string
	X  Expr
}

// Func is a function call; aggregates are recognised by name (IsAggregate).
type Func struct {
	Name     string // lower case
	Args     []Expr
	Distinct bool
	Star     bool // COUNT(*)
	// Over is the window of a window function call (nil otherwise, and
	// for windows other than [PARTITION BY …] [ORDER BY …]).
	Over *Window
}

// Window is the OVER clause of a window function: PARTITION BY and
// ORDER BY, without frame.
type Window struct {
	Partition []Expr
	OrderBy   []*OrderItem
}

// Case is a CASE expression (Operand nil for the searched form).
type Case struct {
	Operand Expr
	Whens   []When
	Else    Expr
}

// When is one WHEN ... THEN ... pair.
type When struct{ Cond, Then Expr }

// Cast is CAST(x AS type).
type Cast struct {
	X    Expr
	Type string // upper case as written: "REAL", "INTEGER", "TEXT", ...
}

// In is x [NOT] IN (list) or (subquery).
type In struct {
	X    Expr
	Not  bool
	List []Expr
	Sub  *Query
}

// Between is x [NOT] BETWEEN lo AND hi.
type Between struct {
	X, Lo, Hi Expr
	Not       bool
}

// Like is x [NOT] LIKE/GLOB pattern.
type Like struct {
	X, Pattern Expr
	Not        bool
	Op         string // "LIKE", "GLOB", "REGEXP", "MATCH"
	Escape     Expr
}

// IsNull is x IS [NOT] NULL.
type IsNull struct {
	X   Expr
	Not bool
}

// Subquery is a scalar subquery.
type Subquery struct{ Q *Query }

// Exists is [NOT] EXISTS (subquery).
type Exists struct {
	Q   *Query
	Not bool
}

// Collate is x COLLATE name.
type Collate struct {
	X    Expr
	Name string
}

// AliasRef is a reference to a result column by its alias (resolved to
// the aliased expression in Expr).
type AliasRef struct {
	Name string
	Expr Expr
}

func (*ColumnRef) expr() {}
func (*Literal) expr()   {}
func (*Binary) expr()    {}
func (*Unary) expr()     {}
func (*Func) expr()      {}
func (*Case) expr()      {}
func (*Cast) expr()      {}
func (*In) expr()        {}
func (*Between) expr()   {}
func (*Like) expr()      {}
func (*IsNull) expr()    {}
func (*Subquery) expr()  {}
func (*Exists) expr()    {}
func (*Collate) expr()   {}
func (*AliasRef) expr()  {}

// aggregates are the aggregate functions of SQLite.
var aggregates = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true, "total": true, "group_concat": true, "string_agg": true}

// IsAggregate reports whether f is an aggregate call (min and max with one
// argument; with more they are scalar functions).
func (f *Func) IsAggregate() bool {
	if f.Name == "min" || f.Name == "max" {
		return len(f.Args) == 1
	}
	return aggregates[f.Name]
}

// HasAggregate reports whether e contains an aggregate call outside
// subqueries.
func HasAggregate(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if f, ok := x.(*Func); ok && f.IsAggregate() {
			found = true
		}
		return !found
	})
	return found
}

// Walk calls fn on e and its subexpressions, depth first, not entering
// subqueries; fn returns false to skip a node's children.
func Walk(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch x := e.(type) {
	case *Binary:
		Walk(x.L, fn)
		Walk(x.R, fn)
	case *Unary:
		Walk(x.X, fn)
	case *Func:
		for _, a := range x.Args {
			Walk(a, fn)
		}
		if x.Over != nil {
			for _, p := range x.Over.Partition {
				Walk(p, fn)
			}
			for _, o := range x.Over.OrderBy {
				Walk(o.Expr, fn)
			}
		}
	case *Case:
		Walk(x.Operand, fn)
		for _, w := range x.Whens {
			Walk(w.Cond, fn)
			Walk(w.Then, fn)
		}
		Walk(x.Else, fn)
	case *Cast:
		Walk(x.X, fn)
	case *In:
		Walk(x.X, fn)
		for _, a := range x.List {
			Walk(a, fn)
		}
	case *Between:
		Walk(x.X, fn)
		Walk(x.Lo, fn)
		Walk(x.Hi, fn)
	case *Like:
		Walk(x.X, fn)
		Walk(x.Pattern, fn)
		Walk(x.Escape, fn)
	case *IsNull:
		Walk(x.X, fn)
	case *Collate:
		Walk(x.X, fn)
	case *AliasRef:
		Walk(x.Expr, fn)
	}
}

// Subqueries returns the subqueries directly inside e (scalar, IN and
// EXISTS), in order.
func Subqueries(e Expr) []*Query {
	var out []*Query
	Walk(e, func(x Expr) bool {
		switch s := x.(type) {
		case *Subquery:
			out = append(out, s.Q)
		case *Exists:
			out = append(out, s.Q)
		case *In:
			if s.Sub != nil {
				out = append(out, s.Sub)
			}
		}
		return true
	})
	return out
}

// Conjuncts splits e at its top-level ANDs.
func Conjuncts(e Expr) []Expr {
	if e == nil {
		return nil
	}
	if b, ok := e.(*Binary); ok && b.Op == "AND" {
		return append(Conjuncts(b.L), Conjuncts(b.R)...)
	}
	return []Expr{e}
}

// Kind infers the type of e as SQLite computes it: "integer", "number"
// (real), "string", or "" when unknown.
func Kind(e Expr) string {
	switch x := e.(type) {
	case *ColumnRef:
		return x.Kind
	case *Literal:
		switch x.Kind {
		case LitInt:
			return "integer"
		case LitFloat:
			return "number"
		case LitString:
			return "string"
		}
		return ""
	case *Cast:
		switch t := x.Type; {
		case containsAny(t, "INT"):
			return "integer"
		case containsAny(t, "REAL", "FLOA", "DOUB"):
			return "number"
		case containsAny(t, "CHAR", "TEXT", "CLOB"):
			return "string"
		case containsAny(t, "NUM", "DEC"):
			return "number"
		}
		return ""
	case *Binary:
		switch x.Op {
		case "+", "-", "*", "/", "%":
			l, r := Kind(x.L), Kind(x.R)
			if l == "number" || r == "number" {
				return "number"
			}
			if l == "integer" && r == "integer" {
				return "integer"
			}
			return ""
		case "||":
			return "string"
		}
		return "integer" // comparisons and logic give 0/1
	case *Unary:
		if x.Op == "NOT" {
			return "integer"
		}
		return Kind(x.X)
	case *Func:
		switch x.Name {
		case "count", "length", "instr":
			return "integer"
		case "avg", "total":
			return "number"
		case "sum", "min", "max", "abs", "iif", "coalesce", "ifnull":
			for _, a := range x.Args {
				if k := Kind(a); k != "" {
					if x.Name == "iif" {
						continue
					}
					return k
				}
			}
			if x.Name == "iif" && len(x.Args) == 3 {
				return mergeKinds(Kind(x.Args[1]), Kind(x.Args[2]))
			}
			return ""
		case "substr", "substring", "strftime", "date", "datetime", "time", "lower", "upper", "trim", "replace", "group_concat":
			return "string"
		case "round":
			return "number"
		}
		return ""
	case *Case:
		k := ""
		for _, w := range x.Whens {
			k = mergeKinds(k, Kind(w.Then))
		}
		if x.Else != nil {
			k = mergeKinds(k, Kind(x.Else))
		}
		return k
	case *Subquery:
		if len(x.Q.Select) == 1 && x.Q.Select[0].Expr != nil {
			return Kind(x.Q.Select[0].Expr)
		}
	case *AliasRef:
		return Kind(x.Expr)
	case *In, *Between, *Like, *IsNull, *Exists:
		return "integer"
	}
	return ""
}

// mergeKinds combines the kinds of alternatives (CASE branches): a null
// branch ("" from NULL) does not change the other's kind.
func mergeKinds(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "" || a == b:
		return a
	case (a == "integer" && b == "number") || (a == "number" && b == "integer"):
		return "number"
	}
	return "string"
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if len(s) >= len(sub) {
			for i := 0; i+len(sub) <= len(s); i++ {
				if s[i:i+len(sub)] == sub {
					return true
				}
			}
		}
	}
	return false
}
