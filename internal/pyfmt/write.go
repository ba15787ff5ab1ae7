package pyfmt

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A style spells values one way: as Python's repr or as its json.dumps.
type style struct {
	none, yes, no string // None, True and False
	str           func(string) string
	num           func(number) string
	// tuples writes Tuples in parentheses (else as lists).
	tuples bool
	// other writes a value of a type pyValue does not resolve.
	other func(st *style, b *strings.Builder, v any)
}

var (
	reprStyle = &style{
		none: "None", yes: "True", no: "False",
		str:    ReprString,
		num:    func(n number) string { return string(n) },
		tuples: true,
		other: func(_ *style, b *strings.Builder, v any) {
			b.WriteString(ReprString(fmt.Sprint(v)))
		},
	}
	dumpsStyle = &style{
		none: "null", yes: "true", no: "false",
		str: JSONString,
		num: func(n number) string { return dumpsNumber(string(n)) },
		other: func(st *style, b *strings.Builder, v any) {
			if raw, err := json.Marshal(v); err == nil {
				if d, err := DecodeOrdered(raw); err == nil {
					st.write(b, d)
					return
				}
			}
			b.WriteString(JSONString(fmt.Sprint(v)))
		},
	}
)

// write writes v in the style.
func (st *style) write(b *strings.Builder, v any) {
	switch x := pyValue(v).(type) {
	case nil:
		b.WriteString(st.none)
	case bool:
		if x {
			b.WriteString(st.yes)
		} else {
			b.WriteString(st.no)
		}
	case string:
		b.WriteString(st.str(x))
	case number:
		b.WriteString(st.num(x))
	case []any:
		st.seq(b, "[", x, "]")
	case Tuple:
		switch {
		case !st.tuples:
			st.seq(b, "[", x, "]")
		case len(x) == 1:
			st.seq(b, "(", x, ",)")
		default:
			st.seq(b, "(", x, ")")
		}
	case Dict:
		b.WriteByte('{')
		for i, it := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(st.str(it.Key))
			b.WriteString(": ")
			st.write(b, it.Value)
		}
		b.WriteByte('}')
	default:
		st.other(st, b, x)
	}
}

func (st *style) seq(b *strings.Builder, open string, x []any, end string) {
	b.WriteString(open)
	for i, e := range x {
		if i > 0 {
			b.WriteString(", ")
		}
		st.write(b, e)
	}
	b.WriteString(end)
}
