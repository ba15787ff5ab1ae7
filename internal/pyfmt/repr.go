package pyfmt

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	toolenv "github.com/toolenv/toolenv"
)

// Str returns Python's str(v): a string is itself, anything else is its
// repr.
func Str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return Repr(v)
}

// Repr returns Python's repr(v) (which is also str() of a container):
// None, True, False, strings in Python's quotes, ints and floats as
// Python prints them, lists, Tuples, and dicts, Dicts in their order and
// maps with sorted keys. A json.RawMessage is written as the value it
// decodes to (a string when it does not decode); a value of any other
// type as the string fmt.Sprint makes of it.
func Repr(v any) string {
	var b strings.Builder
	reprStyle.write(&b, v)
	return b.String()
}

// number is a number as Python's repr writes it.
type number string

// pyValue resolves the Go types Repr and Dumps accept into the few they
// write: nil, bool, string, number, []any, Tuple and Dict (anything else
// is left as it is).
func pyValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		return number(Number(string(x)))
	case float64:
		return number(float64Number(x))
	case int:
		return number(strconv.Itoa(x))
	case int64:
		return number(strconv.FormatInt(x, 10))
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case *Dict:
		return *x
	case map[string]any:
		return sortedDict(x)
	case toolenv.RawJSON:
		// An argument kept as text (toolenv.ParseArgs): written as the
		// value it holds, as if it had been decoded.
		return pyValue(toolenv.Decoded(x))
	case json.RawMessage:
		if d, err := DecodeOrdered(x); err == nil {
			return d
		}
		return string(x)
	}
	return v
}

// sortedDict returns m's items with their keys sorted.
func sortedDict(m map[string]any) Dict {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	d := make(Dict, len(keys))
	for i, k := range keys {
		d[i] = Item{Key: k, Value: m[k]}
	}
	return d
}

// ReprString returns Python's repr of a str: single quotes unless the
// string holds a single quote and no double quote, backslash escapes for
// the quote, backslash, \n, \r, \t and non-printable characters (\xNN,
// \uNNNN, \UNNNNNNNN), printable non-ASCII kept. Invalid UTF-8 is written
// as U+FFFD, which json.loads would have made of it.
func ReprString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	writeReprString(&b, s)
	return b.String()
}

// writeReprString writes ReprString(s) to b.
func writeReprString[S string | []byte](b *strings.Builder, s S) {
	quote := byte('\'')
	if indexByteIn(s, '\'') >= 0 && indexByteIn(s, '"') < 0 {
		quote = '"'
	}
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		if u, ok := SurrogateAt(s, i); ok {
			writeEscape(b, `\u`, uint32(u), 4) // as Python writes a lone surrogate
			i += 3
			continue
		}
		r, size := decodeRuneIn(s, i) // invalid UTF-8 as utf8.RuneError
		i += size
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			writeEscape(b, `\x`, uint32(r), 2)
		case r < utf8.RuneSelf:
			b.WriteByte(byte(r))
		case isPrintable(r):
			b.WriteRune(r)
		case r <= 0xff:
			writeEscape(b, `\x`, uint32(r), 2)
		case r <= 0xffff:
			writeEscape(b, `\u`, uint32(r), 4)
		default:
			writeEscape(b, `\U`, uint32(r), 8)
		}
	}
	b.WriteByte(quote)
}

func indexByteIn[S string | []byte](s S, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// decodeRuneIn decodes the rune at s[i:] as utf8.DecodeRune does.
func decodeRuneIn[S string | []byte](s S, i int) (rune, int) {
	if s[i] < utf8.RuneSelf {
		return rune(s[i]), 1
	}
	var buf [utf8.UTFMax]byte
	n := copy(buf[:], s[i:min(len(s), i+utf8.UTFMax)])
	return utf8.DecodeRune(buf[:n])
}

// writeEscape writes prefix and v in n lower-case hex digits.
func writeEscape(b *strings.Builder, prefix string, v uint32, n int) {
	const hex = "0123456789abcdef"
	b.WriteString(prefix)
	for k := n - 1; k >= 0; k-- {
		b.WriteByte(hex[(v>>(4*uint(k)))&0xf])
	}
}

// isPrintable approximates Python's str.isprintable for one non-ASCII
// character: letters, marks, numbers, punctuation and symbols are
// printable; separators, control, format, surrogate, private-use and
// unassigned characters are not.
func isPrintable(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S)
}

// Number returns how Python prints the number a JSON literal decodes to:
// an int (its exact digits) when the literal has no fraction or exponent,
// else a float; a float out of range is inf, as json.loads makes it.
func Number(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		neg := strings.HasPrefix(lit, "-")
		d := strings.TrimLeft(strings.TrimPrefix(lit, "-"), "0")
		if d == "" {
			return "0"
		}
		if neg {
			return "-" + d
		}
		return d
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		if strings.HasPrefix(lit, "-") {
			return "-inf"
		}
		return "inf"
	}
	return Float(f)
}

// float64Number is how Python prints a number encoding/json decoded into
// a float64: an integral one below 1e16 came from a JSON integer.
func float64Number(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e16 {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return Float(f)
}

// Float returns Python's repr of a float: the shortest digits that round
// trip, in fixed notation when the decimal exponent is in [-4, 16), with
// ".0" on integral values, else in scientific notation ("1e+16",
// "1.5e-05"); inf, -inf and nan as Python writes them.
func Float(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	neg := strings.HasPrefix(e, "-")
	e = strings.TrimPrefix(e, "-")
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	var out string
	if exp >= -4 && exp < 16 {
		if exp >= 0 {
			if len(digits) <= exp+1 {
				out = digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
			} else {
				out = digits[:exp+1] + "." + digits[exp+1:]
			}
		} else {
			out = "0." + strings.Repeat("0", -exp-1) + digits
		}
	} else {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign = "-"
			exp = -exp
		}
		out = fmt.Sprintf("%se%s%02d", m, sign, exp)
	}
	if neg {
		out = "-" + out
	}
	return out
}
