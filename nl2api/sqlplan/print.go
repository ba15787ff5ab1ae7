package sqlplan

import (
	"fmt"
	"strings"
)

// String renders an expression as SQL, for messages and descriptions.
// Columns are written source.column; literals as written.
func String(e Expr) string {
	var b strings.Builder
	write(&b, e)
	return b.String()
}

func write(b *strings.Builder, e Expr) {
	switch x := e.(type) {
	case nil:
		b.WriteString("NULL")
	case *ColumnRef:
		if x.Source != nil && x.Source.Name() != "" {
			b.WriteString(x.Source.Name() + ".")
		}
		b.WriteString(x.Column)
	case *Literal:
		if x.Kind == LitNull {
			b.WriteString("NULL")
		} else if x.Kind == LitString {
			b.WriteString("'" + strings.ReplaceAll(x.Value.(string), "'", "''") + "'")
		} else {
			b.WriteString(x.Raw)
		}
	case *Binary:
		b.WriteString("(")
		write(b, x.L)
		b.WriteString(" " + x.Op + " ")
		write(b, x.R)
		b.WriteString(")")
	case *Unary:
		b.WriteString(x.Op)
		if x.Op == "NOT" {
			b.WriteString(" ")
		}
		write(b, x.X)
	case *Func:
		b.WriteString(strings.ToUpper(x.Name) + "(")
		if x.Distinct {
			b.WriteString("DISTINCT ")
		}
		if x.Star {
			b.WriteString("*")
		}
		for i, a := range x.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			write(b, a)
		}
		b.WriteString(")")
		if w := x.Over; w != nil {
			b.WriteString(" OVER (")
			for i, p := range w.Partition {
				if i == 0 {
					b.WriteString("PARTITION BY ")
				} else {
					b.WriteString(", ")
				}
				write(b, p)
			}
			for i, o := range w.OrderBy {
				switch {
				case i == 0 && len(w.Partition) > 0:
					b.WriteString(" ORDER BY ")
				case i == 0:
					b.WriteString("ORDER BY ")
				default:
					b.WriteString(", ")
				}
				write(b, o.Expr)
				if o.Desc {
					b.WriteString(" DESC")
				}
			}
			b.WriteString(")")
		}
	case *Case:
		b.WriteString("CASE")
		if x.Operand != nil {
			b.WriteString(" ")
			write(b, x.Operand)
		}
		for _, w := range x.Whens {
			b.WriteString(" WHEN ")
			write(b, w.Cond)
			b.WriteString(" THEN ")
			write(b, w.Then)
		}
		if x.Else != nil {
			b.WriteString(" ELSE ")
			write(b, x.Else)
		}
		b.WriteString(" END")
	case *Cast:
		b.WriteString("CAST(")
		write(b, x.X)
		b.WriteString(" AS " + x.Type + ")")
	case *In:
		write(b, x.X)
		if x.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" IN (")
		if x.Sub != nil {
			b.WriteString("SELECT ...")
		}
		for i, a := range x.List {
			if i > 0 {
				b.WriteString(", ")
			}
			write(b, a)
		}
		b.WriteString(")")
	case *Between:
		write(b, x.X)
		if x.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" BETWEEN ")
		write(b, x.Lo)
		b.WriteString(" AND ")
		write(b, x.Hi)
	case *Like:
		write(b, x.X)
		if x.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" " + x.Op + " ")
		write(b, x.Pattern)
	case *IsNull:
		write(b, x.X)
		if x.Not {
			b.WriteString(" IS NOT NULL")
		} else {
			b.WriteString(" IS NULL")
		}
	case *Subquery:
		b.WriteString("(SELECT ...)")
	case *Exists:
		b.WriteString("EXISTS (SELECT ...)")
	case *Collate:
		write(b, x.X)
		b.WriteString(" COLLATE " + x.Name)
	case *AliasRef:
		b.WriteString(x.Name)
	default:
		fmt.Fprintf(b, "%T", e)
	}
}
