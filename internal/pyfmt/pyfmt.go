package pyfmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ordered is a map whose keys keep their insertion order, like a Python
// dict.
type Ordered struct {
	Keys   []string
	Values map[string]any
}

// Set adds or replaces key.
func (o *Ordered) Set(key string, v any) {
	if o.Values == nil {
		o.Values = map[string]any{}
	}
	if _, ok := o.Values[key]; !ok {
		o.Keys = append(o.Keys, key)
	}
	o.Values[key] = v
}

// Str returns Python's str(v): a string is itself, anything else is its
// repr.
func Str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return Repr(v)
}

// Repr returns Python's repr(v). Maps that are not Ordered are written
// with sorted keys.
func Repr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v any) {
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
		b.WriteString(ReprString(x))
	case json.Number:
		b.WriteString(Number(string(x)))
	case float64:
		b.WriteString(Float(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e)
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(ReprString(e))
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		writeDict(b, keys, x)
	case *Ordered:
		writeDict(b, x.Keys, x.Values)
	case Ordered:
		writeDict(b, x.Keys, x.Values)
	default:
		fmt.Fprint(b, x)
	}
}

func writeDict(b *strings.Builder, keys []string, m map[string]any) {
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(ReprString(k))
		b.WriteString(": ")
		writeRepr(b, m[k])
	}
	b.WriteByte('}')
}

// ReprString returns Python's repr of a str: single quotes unless the
// string holds a single quote and no double quote, backslash escapes for
// the quote, backslash, \n, \r, \t and non-printable characters.
func ReprString(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			// Python strings cannot hold invalid UTF-8; json.loads would
			// have produced U+FFFD.
			r = utf8.RuneError
		}
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
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x80:
			b.WriteRune(r)
		case isPrintable(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// isPrintable approximates Python's str.isprintable for one character:
// letters, marks, numbers, punctuation and symbols are printable; other
// spaces, control, format, surrogate, private-use and unassigned
// characters are not.
func isPrintable(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S)
}

// Number returns how Python prints the number a JSON literal decodes to:
// an int when the literal has no fraction or exponent, else a float.
func Number(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		// Python ints print their exact digits.
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
		// Out of range: Python gives inf.
		if strings.HasPrefix(lit, "-") {
			return "-inf"
		}
		return "inf"
	}
	return Float(f)
}

// Float returns Python's repr of a float: the shortest digits that round
// trip, in fixed notation when the decimal exponent is in [-4, 16), with
// ".0" on integral values, else in scientific notation ("1e+16",
// "1.5e-05").
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

// JSONDumps re-encodes the JSON text raw the way Python's json.dumps does
// by default: ", " and ": " separators, object keys in the order they
// appear, non-ASCII escaped as \uXXXX, and numbers as Python prints the
// int or float they decode to.
func JSONDumps(raw []byte) (string, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var b strings.Builder
	if err := dumpValue(d, &b); err != nil {
		return "", fmt.Errorf("pyfmt: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return "", fmt.Errorf("pyfmt: unexpected data after the JSON value")
	}
	return b.String(), nil
}

func dumpValue(d *json.Decoder, b *strings.Builder) error {
	tok, err := d.Token()
	if err != nil {
		return err
	}
	return dumpToken(d, b, tok)
}

func dumpToken(d *json.Decoder, b *strings.Builder, tok json.Token) error {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			b.WriteByte('{')
			for i := 0; d.More(); i++ {
				if i > 0 {
					b.WriteString(", ")
				}
				k, err := d.Token()
				if err != nil {
					return err
				}
				ks, _ := k.(string)
				b.WriteString(JSONString(ks))
				b.WriteString(": ")
				if err := dumpValue(d, b); err != nil {
					return err
				}
			}
			if _, err := d.Token(); err != nil {
				return err
			}
			b.WriteByte('}')
		case '[':
			b.WriteByte('[')
			for i := 0; d.More(); i++ {
				if i > 0 {
					b.WriteString(", ")
				}
				if err := dumpValue(d, b); err != nil {
					return err
				}
			}
			if _, err := d.Token(); err != nil {
				return err
			}
			b.WriteByte(']')
		default:
			return fmt.Errorf("unexpected %v", t)
		}
	case string:
		b.WriteString(JSONString(t))
	case json.Number:
		b.WriteString(Number(string(t)))
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	default:
		return fmt.Errorf("unexpected token %v", t)
	}
	return nil
}

// JSONString returns s as a JSON string the way Python's json.dumps
// writes it with ensure_ascii: every non-ASCII character as \uXXXX
// (surrogate pairs above U+FFFF).
func JSONString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r < 0x80:
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Format fills the named fields of a Python str.format template: "{name}"
// is replaced by fields[name] and "{{" / "}}" become "{" / "}". A field
// not in fields is left as written.
func Format(template string, fields map[string]string) string {
	var b strings.Builder
	b.Grow(len(template))
	for i := 0; i < len(template); {
		c := template[i]
		switch {
		case c == '{' && i+1 < len(template) && template[i+1] == '{':
			b.WriteByte('{')
			i += 2
		case c == '}' && i+1 < len(template) && template[i+1] == '}':
			b.WriteByte('}')
			i += 2
		case c == '{':
			end := strings.IndexByte(template[i:], '}')
			if end < 0 {
				b.WriteString(template[i:])
				return b.String()
			}
			name := template[i+1 : i+end]
			if v, ok := fields[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(template[i : i+end+1])
			}
			i += end + 1
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}
