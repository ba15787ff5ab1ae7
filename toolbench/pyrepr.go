package toolbench

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

// ParsePyLiteral parses a Python literal as Python's str() writes a value
// that json.loads produced: dicts, lists, tuples, str, int, float, True,
// False and None. StableToolBench keys its cache by str(tool_input).
// Numbers come back as json.Number; tuples as lists. Values JSON cannot
// hold (inf, nan, bytes, sets) are errors.
func ParsePyLiteral(s string) (any, error) {
	p := &pyParser{s: s}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, p.errorf("unexpected %q after the value", p.rest())
	}
	return v, nil
}

type pyParser struct {
	s string
	i int
}

const maxPyDepth = 256

func (p *pyParser) errorf(format string, args ...any) error {
	return fmt.Errorf("python literal at byte %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *pyParser) rest() string {
	r := p.s[p.i:]
	if len(r) > 20 {
		r = r[:20] + "…"
	}
	return r
}

func (p *pyParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *pyParser) value(depth int) (any, error) {
	if depth > maxPyDepth {
		return nil, p.errorf("nested too deeply")
	}
	if p.i >= len(p.s) {
		return nil, p.errorf("unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.dict(depth)
	case c == '[':
		return p.seq(depth, ']')
	case c == '(':
		return p.seq(depth, ')')
	case c == '\'' || c == '"':
		return p.str()
	case c == 'u' && p.i+1 < len(p.s) && (p.s[p.i+1] == '\'' || p.s[p.i+1] == '"'):
		p.i++
		return p.str()
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		for _, kw := range []struct {
			word string
			v    any
		}{{"True", true}, {"False", false}, {"None", nil}} {
			if strings.HasPrefix(p.s[p.i:], kw.word) && !identAt(p.s, p.i+len(kw.word)) {
				p.i += len(kw.word)
				return kw.v, nil
			}
		}
		if strings.HasPrefix(p.s[p.i:], "inf") || strings.HasPrefix(p.s[p.i:], "nan") {
			return nil, p.errorf("%s cannot be represented in JSON", p.s[p.i:p.i+3])
		}
		return nil, p.errorf("unexpected %q", p.rest())
	}
}

func identAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func (p *pyParser) dict(depth int) (any, error) {
	p.i++ // {
	out := map[string]any{}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return out, nil
	}
	for {
		p.space()
		k, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.errorf("want ':' after a dict key (sets cannot be represented in JSON)")
		}
		p.i++
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		var ks string
		switch kk := k.(type) {
		case string:
			ks = kk
		case json.Number:
			ks = kk.String()
		case bool, nil:
			ks = PyRepr(kk)
		default:
			return nil, p.errorf("dict key must be a string or a number")
		}
		out[ks] = v
		p.space()
		if p.i >= len(p.s) {
			return nil, p.errorf("unterminated dict")
		}
		if p.s[p.i] == ',' {
			p.i++
			p.space()
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return out, nil
			}
			continue
		}
		if p.s[p.i] == '}' {
			p.i++
			return out, nil
		}
		return nil, p.errorf("want ',' or '}' in a dict, got %q", p.rest())
	}
}

func (p *pyParser) seq(depth int, end byte) (any, error) {
	p.i++
	out := []any{}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == end {
		p.i++
		return out, nil
	}
	for {
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, p.errorf("unterminated list")
		}
		if p.s[p.i] == ',' {
			p.i++
			p.space()
			if p.i < len(p.s) && p.s[p.i] == end {
				p.i++
				return out, nil
			}
			continue
		}
		if p.s[p.i] == end {
			p.i++
			return out, nil
		}
		return nil, p.errorf("want ',' or %q, got %q", end, p.rest())
	}
}

func (p *pyParser) str() (any, error) {
	q := p.s[p.i]
	p.i++
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return nil, p.errorf("unterminated string")
		}
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return nil, p.errorf("unterminated escape")
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '\\', '\'', '"':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'v':
				b.WriteByte('\v')
			case '\n':
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if p.i+n > len(p.s) {
					return nil, p.errorf("short \\%c escape", e)
				}
				code, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
				if err != nil || code > unicode.MaxRune {
					return nil, p.errorf("bad \\%c escape %q", e, p.s[p.i:p.i+n])
				}
				p.i += n
				b.WriteRune(rune(code))
			case '0', '1', '2', '3', '4', '5', '6', '7':
				code := int(e - '0')
				for k := 0; k < 2 && p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '7'; k++ {
					code = code*8 + int(p.s[p.i]-'0')
					p.i++
				}
				b.WriteRune(rune(code))
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			b.WriteRune(r)
			p.i += size
		}
	}
}

func (p *pyParser) number() (any, error) {
	start := p.i
	if p.s[p.i] == '-' || p.s[p.i] == '+' {
		p.i++
	}
	if strings.HasPrefix(p.s[p.i:], "inf") || strings.HasPrefix(p.s[p.i:], "nan") {
		return nil, p.errorf("%s cannot be represented in JSON", p.s[start:p.i+3])
	}
	for p.i < len(p.s) {
		c := p.s[p.i]
		if (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '_' ||
			((c == '-' || c == '+') && (p.s[p.i-1] == 'e' || p.s[p.i-1] == 'E')) {
			p.i++
			continue
		}
		break
	}
	lit := strings.ReplaceAll(strings.TrimPrefix(p.s[start:p.i], "+"), "_", "")
	// Python allows "1." and ".5"; JSON does not.
	if strings.HasPrefix(lit, ".") || strings.HasPrefix(lit, "-.") {
		lit = strings.Replace(lit, ".", "0.", 1)
	}
	if strings.HasSuffix(lit, ".") || strings.Contains(lit, ".e") || strings.Contains(lit, ".E") {
		lit = strings.Replace(lit, ".", ".0", 1)
	}
	if _, err := toolenv.CanonicalNumber(lit); err != nil {
		return nil, p.errorf("bad number %q", p.s[start:p.i])
	}
	if strings.ContainsAny(lit, ".eE") {
		// A Python float: its value is the nearest float64, as json.loads
		// made it.
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, p.errorf("number %q is out of range", p.s[start:p.i])
		}
		out := strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(out, ".e") {
			out += ".0" // keep it a float, so PyRepr writes it back as one
		}
		return json.Number(out), nil
	}
	return json.Number(lit), nil
}

// PyRepr writes v as Python's str() writes the value json.loads would
// make of it: single-quoted strings (double-quoted when they hold a single
// quote and no double quote), True/False/None, floats in Python's repr,
// dict keys in sorted order.
func PyRepr(v any) string {
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
		writePyString(b, x)
	case json.Number:
		b.WriteString(pyNumber(string(x)))
	case float64:
		b.WriteString(pyFloat(x))
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
			writePy(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writePyString(b, k)
			b.WriteString(": ")
			writePy(b, x[k])
		}
		b.WriteByte('}')
	default:
		fmt.Fprint(b, x)
	}
}

// pyNumber renders a JSON number literal as Python would after json.loads:
// integers stay as written, anything with a fraction or exponent is a
// float.
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

// pyFloat is Python's repr(float).
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exps, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(exps)
	if exp >= -4 && exp < 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	sign := "+"
	if exp < 0 {
		sign, exp = "-", -exp
	}
	return fmt.Sprintf("%se%s%02d", mant, sign, exp)
}

func writePyString(b *strings.Builder, s string) {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, "\"") {
		q = '"'
	}
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError:
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && !pyPrintable(r)):
			switch {
			case r < 0x100:
				fmt.Fprintf(b, `\x%02x`, r)
			case r < 0x10000:
				fmt.Fprintf(b, `\u%04x`, r)
			default:
				fmt.Fprintf(b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
}

// pyPrintable approximates Python's str.isprintable for one character.
func pyPrintable(r rune) bool {
	if r == ' ' {
		return true
	}
	if unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp, unicode.Cc, unicode.Cf, unicode.Cs, unicode.Co) {
		return false
	}
	return unicode.IsPrint(r) || unicode.IsGraphic(r)
}
