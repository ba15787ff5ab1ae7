package sqlplan

import (
	"errors"
	"strconv"
	"strings"

	"github.com/sqlc-dev/meyer/ast"
	"github.com/sqlc-dev/meyer/parser"
)

// Parse parses sql, which must be a single SELECT statement (with an
// optional trailing semicolon).
func Parse(sql string) (*ast.SelectStmt, error) {
	stmts, err := parser.ParseString(sql)
	if err != nil {
		return nil, &Error{Reason: "parse", Detail: err.Error()}
	}
	if len(stmts) != 1 {
		return nil, errorf("parse", "want one statement, got %d", len(stmts))
	}
	sel, ok := stmts[0].(*ast.SelectStmt)
	if !ok {
		return nil, errorf("not a SELECT", "%T", stmts[0])
	}
	return sel, nil
}

// Build parses sql and resolves it against cat.
func Build(sql string, cat *Catalog) (*Query, error) {
	sel, err := Parse(sql)
	if err != nil {
		return nil, err
	}
	b := &builder{cat: cat, src: sql, ctes: map[string]*ast.SelectStmt{}, expanding: map[string]bool{}}
	return b.selectStmt(sel, nil)
}

type builder struct {
	cat  *Catalog
	src  string
	ctes map[string]*ast.SelectStmt
	// expanding holds the common table expressions whose bodies are being
	// built, so one that names itself, directly or through another, is
	// refused as SQLite refuses it ("circular reference") instead of being
	// expanded forever.
	expanding map[string]bool
}

func (b *builder) selectStmt(s *ast.SelectStmt, parent *Query) (*Query, error) {
	if s.With != nil {
		if s.With.Recursive {
			return nil, errorf("recursive WITH", "")
		}
		for _, c := range s.With.CTEs {
			b.ctes[strings.ToLower(c.Name.Name)] = c.Select
		}
	}
	var first *Query
	for i, core := range s.Cores {
		sq, ok := core.(*ast.SelectQuery)
		if !ok {
			return nil, errorf("VALUES", "a VALUES clause is not a query over tables")
		}
		q, err := b.core(sq, parent)
		if err != nil {
			return nil, err
		}
		q.With = s.With != nil
		if i == 0 {
			first = q
			continue
		}
		op := s.Ops[i-1].Op
		if s.Ops[i-1].All {
			op += " ALL"
		}
		first.Compound = append(first.Compound, &CompoundPart{Op: op, Query: q})
	}
	return first, nil
}

func (b *builder) core(s *ast.SelectQuery, parent *Query) (*Query, error) {
	q := &Query{parent: parent, Distinct: s.Distinct == ast.DistinctDistinct, aliases: map[string]Expr{}}
	if len(s.Windows) > 0 {
		q.Window = true
	}
	if err := b.from(q, s.From); err != nil {
		return nil, err
	}
	// Result columns first: ORDER BY, HAVING (and, in SQLite, WHERE) may
	// refer to their aliases.
	for _, rc := range s.Columns {
		if st, ok := rc.Expr.(*ast.Star); ok {
			item := &SelectItem{Star: true}
			if st.Table != nil {
				src := q.source(st.Table.Name)
				if src == nil {
					return nil, errorf("unknown table", "%s.* names no table of the FROM clause", st.Table.Name)
				}
				item.StarSource = src
			}
			q.Select = append(q.Select, item)
			continue
		}
		e, err := b.expr(q, rc.Expr, false)
		if err != nil {
			return nil, err
		}
		item := &SelectItem{Expr: e}
		if rc.Alias != nil {
			item.Alias = rc.Alias.Name
			q.aliases[strings.ToLower(rc.Alias.Name)] = e
		}
		q.Select = append(q.Select, item)
	}
	var err error
	if s.Where != nil {
		if q.Where, err = b.expr(q, s.Where, true); err != nil {
			return nil, err
		}
	}
	for _, g := range s.GroupBy {
		e, err := b.expr(q, g, true)
		if err != nil {
			return nil, err
		}
		q.GroupBy = append(q.GroupBy, b.ordinal(q, e))
	}
	if s.Having != nil {
		if q.Having, err = b.expr(q, s.Having, true); err != nil {
			return nil, err
		}
	}
	for _, o := range s.OrderBy {
		e, err := b.expr(q, o.Expr, true)
		if err != nil {
			return nil, err
		}
		item := &OrderItem{Expr: b.ordinal(q, e), Desc: o.Order == ast.SortDesc}
		switch o.Nulls {
		case ast.NullsFirst:
			item.Nulls = "first"
		case ast.NullsLast:
			item.Nulls = "last"
		}
		q.OrderBy = append(q.OrderBy, item)
	}
	if s.Limit != nil {
		n, err := b.intLiteral(s.Limit.Count)
		if err != nil {
			return nil, err
		}
		q.Limit = &n
		if s.Limit.Offset != nil {
			m, err := b.intLiteral(s.Limit.Offset)
			if err != nil {
				return nil, err
			}
			q.Offset = &m
		}
	}
	return q, nil
}

// ordinal resolves "ORDER BY 2" / "GROUP BY 1" to the result column.
func (b *builder) ordinal(q *Query, e Expr) Expr {
	if l, ok := e.(*Literal); ok && l.Kind == LitInt {
		n := l.Value.(int64)
		if n >= 1 && int(n) <= len(q.Select) && q.Select[n-1].Expr != nil {
			return &AliasRef{Name: l.Raw, Expr: q.Select[n-1].Expr}
		}
	}
	return e
}

func (b *builder) intLiteral(e ast.Expr) (int64, error) {
	neg := false
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == ast.OpMinus {
		neg, e = true, u.X
	}
	l, ok := e.(*ast.Literal)
	if !ok || l.Kind != ast.LitInteger {
		return 0, errorf("non-literal LIMIT", "LIMIT and OFFSET must be integer literals")
	}
	n, err := strconv.ParseInt(l.Value, 0, 64)
	if err != nil {
		return 0, errorf("non-literal LIMIT", "%v", err)
	}
	if neg {
		n = -n
	}
	return n, nil
}

func (b *builder) from(q *Query, refs []*ast.TableRef) error {
	var flat []*ast.TableRef
	for _, r := range refs {
		if len(r.List) > 0 {
			if r.Join != nil && len(flat) > 0 {
				return errorf("nested join", "a parenthesised join after other tables")
			}
			flat = append(flat, r.List...)
			continue
		}
		flat = append(flat, r)
	}
	for i, r := range flat {
		src := &Source{Index: i}
		if r.Alias != nil {
			src.Alias = r.Alias.Name
		}
		switch {
		case r.HasArgs:
			return errorf("table-valued function", "%s(...)", r.Name.Name.Name)
		case r.Select != nil:
			sub, err := b.selectStmt(r.Select, q)
			if err != nil {
				return err
			}
			src.Sub = sub
		case r.Name != nil:
			name := r.Name.Name.Name
			if cte, ok := b.ctes[strings.ToLower(name)]; ok {
				key := strings.ToLower(name)
				if b.expanding[key] {
					return errorf("recursive WITH", "%s refers to itself; a query over it would never end", name)
				}
				b.expanding[key] = true
				sub, err := b.selectStmt(cte, q)
				delete(b.expanding, key)
				if err != nil {
					return err
				}
				src.Sub = sub
				if src.Alias == "" {
					src.Alias = name
				}
				break
			}
			t := b.cat.Table(name)
			if t == nil {
				return errorf("unknown table", "%s", name)
			}
			src.Table = t
		default:
			return errorf("parse", "empty FROM item")
		}
		if i > 0 {
			jt := ast.JoinInner
			if r.Join != nil {
				jt = r.Join.Type
			}
			switch {
			case jt&ast.JoinNatural != 0:
				return errorf("NATURAL join", "")
			case jt&ast.JoinRight != 0:
				return errorf("RIGHT/FULL join", "")
			case jt&ast.JoinLeft != 0:
				src.Join = "left"
			case jt&ast.JoinComma != 0:
				src.Join = "comma"
			case jt&ast.JoinCross != 0:
				src.Join = "cross"
			default:
				src.Join = "inner"
			}
		}
		q.From = append(q.From, src)
	}
	// ON conditions are resolved once every source is known (an ON may
	// only use sources up to its own, which SQLite checks; we accept the
	// SQL SQLite accepts).
	for i, r := range flat {
		src := q.From[i]
		if r.On != nil {
			e, err := b.expr(q, r.On, false)
			if err != nil {
				return err
			}
			src.On = e
		}
		if len(r.Using) > 0 {
			var on Expr
			for _, u := range r.Using {
				var left *ColumnRef
				for _, prev := range q.From[:i] {
					if c := prev.column(u.Name); c != nil {
						left = c
						break
					}
				}
				right := src.column(u.Name)
				if left == nil || right == nil {
					return errorf("unknown column", "USING(%s)", u.Name)
				}
				eq := Expr(&Binary{Op: "=", L: left, R: right})
				if on == nil {
					on = eq
				} else {
					on = &Binary{Op: "AND", L: on, R: eq}
				}
			}
			src.On = on
			if src.Join == "comma" || src.Join == "cross" {
				src.Join = "inner"
			}
		}
	}
	return nil
}

// column returns a reference to the named column of s, or nil.
func (s *Source) column(name string) *ColumnRef {
	if s.Table != nil {
		if c := s.Table.Column(name); c != nil {
			return &ColumnRef{Source: s, Column: c.Name, Kind: c.Kind}
		}
		return nil
	}
	for _, it := range s.Sub.Select {
		n := it.Alias
		if n == "" {
			if cr, ok := it.Expr.(*ColumnRef); ok {
				n = cr.Column
			}
		}
		if strings.EqualFold(n, name) {
			return &ColumnRef{Source: s, Column: n, Kind: Kind(it.Expr)}
		}
		if it.Star {
			for _, inner := range s.Sub.From {
				if it.StarSource != nil && it.StarSource != inner {
					continue
				}
				if c := inner.column(name); c != nil {
					return &ColumnRef{Source: s, Column: c.Column, Kind: c.Kind}
				}
			}
		}
	}
	return nil
}

// source returns the FROM item named name (alias or table), or nil.
func (q *Query) source(name string) *Source {
	for _, s := range q.From {
		if strings.EqualFold(s.Name(), name) || (s.Alias == "" && s.Table != nil && strings.EqualFold(s.Table.Name, name)) {
			return s
		}
	}
	// SQLite also accepts the table name when the table has an alias.
	for _, s := range q.From {
		if s.Table != nil && strings.EqualFold(s.Table.Name, name) {
			return s
		}
	}
	return nil
}

// resolve finds an unqualified column in q's sources, then in its
// aliases (when useAliases), then in enclosing queries.
func (b *builder) resolve(q *Query, name string, useAliases bool) (Expr, error) {
	for cur, depth := q, 0; cur != nil; cur, depth = cur.parent, depth+1 {
		var found *ColumnRef
		for _, s := range cur.From {
			if c := s.column(name); c != nil {
				if found != nil {
					return nil, errorf("ambiguous column", "%s is in both %s and %s", name, found.Source.Name(), s.Name())
				}
				found = c
			}
		}
		if found != nil {
			if depth > 0 {
				found.Outer = true
				q.markCorrelated()
			}
			return found, nil
		}
		if depth == 0 && useAliases {
			if e, ok := cur.aliases[strings.ToLower(name)]; ok {
				return &AliasRef{Name: name, Expr: e}, nil
			}
		}
	}
	return nil, errorf("unknown column", "%s", name)
}

func (q *Query) markCorrelated() {
	for cur := q; cur != nil; cur = cur.parent {
		cur.Correlated = true
	}
}

func (b *builder) qualified(q *Query, table, name string) (Expr, error) {
	for cur, depth := q, 0; cur != nil; cur, depth = cur.parent, depth+1 {
		if s := cur.source(table); s != nil {
			c := s.column(name)
			if c == nil {
				return nil, errorf("unknown column", "%s.%s", table, name)
			}
			if depth > 0 {
				c.Outer = true
				q.markCorrelated()
			}
			return c, nil
		}
	}
	return nil, errorf("unknown table", "%s (in %s.%s)", table, table, name)
}

var binaryOps = map[ast.Operator]string{
	ast.OpOr: "OR", ast.OpAnd: "AND", ast.OpEq: "=", ast.OpNe: "<>", ast.OpLt: "<", ast.OpLe: "<=",
	ast.OpGt: ">", ast.OpGe: ">=", ast.OpBitAnd: "&", ast.OpBitOr: "|", ast.OpLShift: "<<", ast.OpRShift: ">>",
	ast.OpAdd: "+", ast.OpSub: "-", ast.OpMul: "*", ast.OpDiv: "/", ast.OpMod: "%", ast.OpConcat: "||",
}

// expr converts an expression; useAliases lets bare names resolve to
// result-column aliases (ORDER BY, GROUP BY, HAVING, WHERE in SQLite).
func (b *builder) expr(q *Query, e ast.Expr, useAliases bool) (Expr, error) {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return b.expr(q, x.X, useAliases)
	case *ast.Ident:
		r, err := b.resolve(q, x.Name, useAliases)
		if err != nil {
			var pe *Error
			if errors.As(err, &pe) && pe.Reason == "unknown column" {
				// SQLite's fallbacks: a "double-quoted" name that is no
				// column is a string; TRUE and FALSE are 1 and 0.
				if x.Quote == ast.QuoteDouble || x.Quote == ast.QuoteSingle {
					return &Literal{Kind: LitString, Value: x.Name, Raw: x.Raw, Pos: x.Pos(), End: x.End()}, nil
				}
				switch strings.ToLower(x.Name) {
				case "true":
					return &Literal{Kind: LitInt, Value: int64(1), Raw: x.Raw, Pos: x.Pos(), End: x.End()}, nil
				case "false":
					return &Literal{Kind: LitInt, Value: int64(0), Raw: x.Raw, Pos: x.Pos(), End: x.End()}, nil
				}
			}
			return nil, err
		}
		return r, nil
	case *ast.QualifiedRef:
		switch len(x.Parts) {
		case 2:
			return b.qualified(q, x.Parts[0].Name, x.Parts[1].Name)
		case 3:
			return b.qualified(q, x.Parts[1].Name, x.Parts[2].Name)
		}
		return nil, errorf("parse", "bad column reference %s", ast.String(x))
	case *ast.Literal:
		switch x.Kind {
		case ast.LitCurrentDate, ast.LitCurrentTime, ast.LitCurrentTimestamp:
			// The clock: a function of no arguments, as SQLite evaluates it.
			return &Func{Name: strings.ToLower(x.Raw)}, nil
		}
		return literal(x)
	case *ast.BindParam:
		return nil, errorf("bind parameter", "%s", x.Raw)
	case *ast.BinaryExpr:
		op, ok := binaryOps[x.Op]
		if !ok {
			return nil, errorf("operator", "%s", x.Op)
		}
		l, err := b.expr(q, x.X, useAliases)
		if err != nil {
			return nil, err
		}
		r, err := b.expr(q, x.Y, useAliases)
		if err != nil {
			return nil, err
		}
		return &Binary{Op: op, L: l, R: r}, nil
	case *ast.UnaryExpr:
		inner, err := b.expr(q, x.X, useAliases)
		if err != nil {
			return nil, err
		}
		switch x.Op {
		case ast.OpNot:
			return &Unary{Op: "NOT", X: inner}, nil
		case ast.OpMinus:
			if l, ok := inner.(*Literal); ok && (l.Kind == LitInt || l.Kind == LitFloat) {
				neg := *l
				neg.Raw = b.src[x.Pos():l.End]
				neg.Pos = x.Pos()
				if v, ok := l.Value.(int64); ok {
					neg.Value = -v
				} else {
					neg.Value = -l.Value.(float64)
				}
				return &neg, nil
			}
			return &Unary{Op: "-", X: inner}, nil
		case ast.OpPlus:
			return &Unary{Op: "+", X: inner}, nil
		case ast.OpBitNot:
			return &Unary{Op: "~", X: inner}, nil
		}
		return nil, errorf("operator", "%s", x.Op)
	case *ast.LikeExpr:
		l, err := b.expr(q, x.X, useAliases)
		if err != nil {
			return nil, err
		}
		p, err := b.expr(q, x.Y, useAliases)
		if err != nil {
			return nil, err
		}
		op := "LIKE"
		if x.Op != nil {
			op = strings.ToUpper(x.Op.Name)
		}
		out := &Like{X: l, Pattern: p, Not: x.Not, Op: op}
		if x.Escape != nil {
			if out.Escape, err = b.expr(q, x.Escape, useAliases); err != nil {
				return nil, err
			}
		}
		return out, nil
	case *ast.IsExpr:
		l, err := b.expr(q, x.X, useAliases)
		if err != nil {
			return nil, err
		}
		if lit, ok := x.Y.(*ast.Literal); ok && lit.Kind == ast.LitNull && !x.Distinct {
			return &IsNull{X: l, Not: x.Not}, nil
		}
		r, err := b.expr(q, x.Y, useAliases)
		if err != nil {
			return nil, err
		}
		op := "IS"
		if x.Not != x.Distinct {
			op = "IS NOT"
		}
		return &Binary{Op: op, L: l, R: r}, nil
	case *ast.NullCheckExpr:
		l, err := b.expr(q, x.X, useAliases)
		if err != nil {
			return nil, err
		}
		return &IsNull{X: l, Not: x.Test != ast.TestIsNull}, nil
	case *ast.BetweenExpr:
		l, err := b.expr(q, x.X, useAliases)
		if err != nil {
			return nil, err
		}
		lo, err := b.expr(q, x.Lo, useAliases)
		if err != nil {
			return nil, err
		}
		hi, err := b.expr(q, x.Hi, useAliases)
		if err != nil {
			return nil, err
		}
		return &Between{X: l, Lo: lo, Hi: hi, Not: x.Not}, nil
	case *ast.InExpr:
		l, err := b.expr(q, x.X, useAliases)
		if err != nil {
			return nil, err
		}
		out := &In{X: l, Not: x.Not}
		switch {
		case x.Select != nil:
			if out.Sub, err = b.selectStmt(x.Select, q); err != nil {
				return nil, err
			}
		case x.Table != nil:
			return nil, errorf("IN table", "x IN %s", x.Table.Name.Name)
		default:
			for _, it := range x.List {
				e, err := b.expr(q, it, useAliases)
				if err != nil {
					return nil, err
				}
				out.List = append(out.List, e)
			}
		}
		return out, nil
	case *ast.CaseExpr:
		out := &Case{}
		var err error
		if x.Operand != nil {
			if out.Operand, err = b.expr(q, x.Operand, useAliases); err != nil {
				return nil, err
			}
		}
		for _, w := range x.Whens {
			c, err := b.expr(q, w.When, useAliases)
			if err != nil {
				return nil, err
			}
			t, err := b.expr(q, w.Then, useAliases)
			if err != nil {
				return nil, err
			}
			out.Whens = append(out.Whens, When{Cond: c, Then: t})
		}
		if x.Else != nil {
			if out.Else, err = b.expr(q, x.Else, useAliases); err != nil {
				return nil, err
			}
		}
		return out, nil
	case *ast.CastExpr:
		inner, err := b.expr(q, x.X, useAliases)
		if err != nil {
			return nil, err
		}
		typ := ""
		if x.Type != nil {
			typ = strings.ToUpper(x.Type.Name)
		}
		return &Cast{X: inner, Type: typ}, nil
	case *ast.CollateExpr:
		inner, err := b.expr(q, x.X, useAliases)
		if err != nil {
			return nil, err
		}
		name := ""
		if x.Name != nil {
			name = strings.ToUpper(x.Name.Name)
		}
		return &Collate{X: inner, Name: name}, nil
	case *ast.FuncCall:
		if x.Over != nil {
			q.Window = true
		}
		if x.Filter != nil {
			return nil, errorf("aggregate FILTER", "%s(...) FILTER", x.Name.Name)
		}
		if len(x.OrderBy) > 0 {
			return nil, errorf("aggregate ORDER BY", "%s(... ORDER BY ...)", x.Name.Name)
		}
		f := &Func{Name: strings.ToLower(x.Name.Name), Distinct: x.Distinct, Star: x.Star}
		for _, a := range x.Args {
			e, err := b.expr(q, a, useAliases)
			if err != nil {
				return nil, err
			}
			f.Args = append(f.Args, e)
		}
		if w := x.Over; w != nil && w.Name == nil && w.Base == nil && !w.NameOnly && w.StartBound == nil && w.EndBound == nil {
			f.Over = &Window{}
			for _, p := range w.Partition {
				e, err := b.expr(q, p, useAliases)
				if err != nil {
					return nil, err
				}
				f.Over.Partition = append(f.Over.Partition, e)
			}
			for _, o := range w.OrderBy {
				e, err := b.expr(q, o.Expr, useAliases)
				if err != nil {
					return nil, err
				}
				item := &OrderItem{Expr: e, Desc: o.Order == ast.SortDesc}
				switch o.Nulls {
				case ast.NullsFirst:
					item.Nulls = "first"
				case ast.NullsLast:
					item.Nulls = "last"
				}
				f.Over.OrderBy = append(f.Over.OrderBy, item)
			}
		}
		return f, nil
	case *ast.ExistsExpr:
		sub, err := b.selectStmt(x.Select, q)
		if err != nil {
			return nil, err
		}
		return &Exists{Q: sub}, nil
	case *ast.SubqueryExpr:
		sub, err := b.selectStmt(x.Select, q)
		if err != nil {
			return nil, err
		}
		return &Subquery{Q: sub}, nil
	case *ast.VectorExpr:
		return nil, errorf("row value", "(a, b, ...)")
	case *ast.Star:
		return nil, errorf("parse", "* outside a select list or COUNT(*)")
	}
	return nil, errorf("expression", "%T", e)
}

func literal(x *ast.Literal) (*Literal, error) {
	l := &Literal{Raw: x.Raw, Pos: x.Pos(), End: x.End()}
	switch x.Kind {
	case ast.LitNull:
		l.Kind = LitNull
	case ast.LitInteger:
		n, err := strconv.ParseInt(strings.ReplaceAll(x.Value, "_", ""), 0, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(x.Value, 64)
			if ferr != nil {
				return nil, errorf("literal", "integer %s: %v", x.Raw, err)
			}
			l.Kind, l.Value = LitFloat, f
			return l, nil
		}
		l.Kind, l.Value = LitInt, n
	case ast.LitFloat:
		f, err := strconv.ParseFloat(strings.ReplaceAll(x.Value, "_", ""), 64)
		if err != nil {
			return nil, errorf("literal", "number %s: %v", x.Raw, err)
		}
		l.Kind, l.Value = LitFloat, f
	case ast.LitString:
		l.Kind, l.Value = LitString, x.Value
	case ast.LitBlob:
		return nil, errorf("blob literal", "%s", x.Raw)
	}
	return l, nil
}
