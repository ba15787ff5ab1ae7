package simulate

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pyRepr renders v the way Python's repr() (and str() of containers)
// renders the value json.loads would give: StableToolBench and MirrorAPI
// build their prompts with str(dict), so a model trained on them has seen
// Python literals, and toolenv must write them byte for byte.
func pyRepr(v any) string {
	var b strings.Builder
	writePy(&b, v)
	return b.String()
}

func writePy(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case string:
		b.WriteString(pyString(x))
	case json.Number:
		b.WriteString(pyNumber(string(x)))
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e16 {
			b.WriteString(strconv.FormatFloat(x, 'f', 0, 64)) // an integral number came from a JSON integer
		} else {
			b.WriteString(pyFloat(x))
		}
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case object:
		b.WriteByte('{')
		for i, m := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyString(m.Key))
			b.WriteString(": ")
			writePy(b, m.Value)
		}
		b.WriteByte('}')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := make(object, len(keys))
		for i, k := range keys {
			o[i] = member{k, x[k]}
		}
		writePy(b, o)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writePy(b, e)
		}
		b.WriteByte(']')
	case tuple:
		b.WriteByte('(')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writePy(b, e)
		}
		if len(x) == 1 {
			b.WriteByte(',')
		}
		b.WriteByte(')')
	case json.RawMessage:
		if d, err := decodeOrdered(x); err == nil {
			writePy(b, d)
		} else {
			b.WriteString(pyString(string(x)))
		}
	default:
		b.WriteString(pyString(fmt.Sprint(x)))
	}
}

// pyNumber renders a JSON number literal as Python prints what json.loads
// makes of it: integers as they are, anything with a fraction or exponent
// as a float.
func pyNumber(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		return lit
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return lit
	}
	return pyFloat(f)
}

// pyFloat is Python's float repr: the shortest round-tripping digits, in
// positional notation for exponents from -4 to 15 (with ".0" for integral
// values), else scientific with a two-digit signed exponent.
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	exp := int(math.Floor(math.Log10(math.Abs(f))))
	// Log10 can be off by one near powers of ten; take the exponent from
	// the shortest scientific form instead.
	sci := strconv.FormatFloat(f, 'e', -1, 64)
	if i := strings.IndexByte(sci, 'e'); i >= 0 {
		if n, err := strconv.Atoi(sci[i+1:]); err == nil {
			exp = n
		}
	}
	if exp >= -4 && exp < 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	mant, e, _ := strings.Cut(sci, "e")
	sign := "+"
	if strings.HasPrefix(e, "-") {
		sign = "-"
	}
	e = strings.TrimLeft(e, "+-")
	if len(e) < 2 {
		e = "0" + e
	}
	return mant + "e" + sign + e
}

// pyString is Python's str repr: single quotes unless the string holds a
// single quote and no double quote; backslash, the quote, \t \n \r
// escaped; other non-printable characters as \xNN, \uNNNN or \UNNNNNNNN;
// printable non-ASCII kept.
func pyString(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(q)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == utf8.RuneError && size == 1 {
			r = unicode.ReplacementChar
		}
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteByte(q)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case pyPrintable(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// pyPrintable approximates Python's str.isprintable for non-ASCII runes:
// letters, marks, numbers, punctuation and symbols; not separators, format
// or control characters, surrogates, private use or unassigned code points.
func pyPrintable(r rune) bool {
	if unicode.Is(unicode.Co, r) {
		return false
	}
	return unicode.IsPrint(r) && !unicode.IsSpace(r)
}
