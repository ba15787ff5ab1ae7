package pyfmt

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxIntDigits is Python 3.11's limit on the digits of an int read from
// text (sys.get_int_max_str_digits()): json.loads fails on a longer one.
const maxIntDigits = 4300

// loadsMaxDepth stands for Python's recursion limit, which json.loads
// reaches at about a thousand nested arrays or objects.
const loadsMaxDepth = 1000

// LoadsError is why Loads could not read its input: what was wrong and
// at which byte.
type LoadsError struct {
	Offset int
	Msg    string
}

// Error says what was wrong and where.
func (e *LoadsError) Error() string { return fmt.Sprintf("%s at byte %d", e.Msg, e.Offset) }

// Loads reads one JSON value as Python's json.loads does, into the values
// Repr, Str and Dumps write back as Python would:
//
//   - objects become Dicts in the order their keys were first written, a
//     repeated key keeping its first place and its last value;
//   - arrays []any, strings string, true/false bool, null nil;
//   - numbers json.Number with their literal (an int when it has no '.',
//     'e' or 'E', of any size up to 4,300 digits; a float otherwise, out
//     of range being infinite), and NaN, Infinity and -Infinity, which
//     json.loads reads too, float64;
//   - an escaped lone surrogate (\ud800 not part of a pair) is the
//     surrogate, kept in the generalized UTF-8 (WTF-8) that Repr and
//     Dumps write back as its escape; so is one already in that form in
//     the input; other bytes that are not UTF-8 are U+FFFD.
//
// Space around the value is ' ', '\t', '\n' and '\r'; anything else after
// it is an error, as are control characters inside strings (json.loads's
// strict mode) and nesting deeper than Python's recursion allows.
func Loads(s string) (any, error) {
	l := &loader{s: s}
	l.space()
	v, err := l.value(0)
	if err != nil {
		return nil, err
	}
	l.space()
	if l.i != len(l.s) {
		return nil, l.fail("extra data")
	}
	return v, nil
}

type loader struct {
	s string
	i int
}

func (l *loader) fail(msg string) error { return &LoadsError{Offset: l.i, Msg: msg} }

func (l *loader) space() {
	for l.i < len(l.s) {
		switch l.s[l.i] {
		case ' ', '\t', '\n', '\r':
			l.i++
		default:
			return
		}
	}
}

func (l *loader) value(depth int) (any, error) {
	if depth > loadsMaxDepth {
		return nil, l.fail("nested too deeply (Python's recursion limit)")
	}
	if l.i >= len(l.s) {
		return nil, l.fail("expecting value")
	}
	switch c := l.s[l.i]; {
	case c == '{':
		return l.object(depth)
	case c == '[':
		return l.array(depth)
	case c == '"':
		return l.str()
	case c == '-' || c >= '0' && c <= '9':
		if strings.HasPrefix(l.s[l.i:], "-Infinity") {
			l.i += len("-Infinity")
			return math.Inf(-1), nil
		}
		return l.number()
	}
	for _, w := range [...]struct {
		lit string
		v   any
	}{{"true", true}, {"false", false}, {"null", nil}, {"NaN", math.NaN()}, {"Infinity", math.Inf(1)}} {
		if strings.HasPrefix(l.s[l.i:], w.lit) {
			l.i += len(w.lit)
			return w.v, nil
		}
	}
	return nil, l.fail("expecting value")
}

func (l *loader) object(depth int) (any, error) {
	l.i++ // '{'
	d := Dict{}
	var at map[string]int
	l.space()
	if l.i < len(l.s) && l.s[l.i] == '}' {
		l.i++
		return d, nil
	}
	for {
		l.space()
		if l.i >= len(l.s) || l.s[l.i] != '"' {
			return nil, l.fail("expecting property name enclosed in double quotes")
		}
		k, err := l.str()
		if err != nil {
			return nil, err
		}
		l.space()
		if l.i >= len(l.s) || l.s[l.i] != ':' {
			return nil, l.fail("expecting ':' delimiter")
		}
		l.i++
		l.space()
		v, err := l.value(depth + 1)
		if err != nil {
			return nil, err
		}
		key := k.(string)
		if at == nil {
			at = map[string]int{}
		}
		if n, seen := at[key]; seen {
			d[n].Value = v
		} else {
			at[key] = len(d)
			d = append(d, Item{Key: key, Value: v})
		}
		l.space()
		if l.i >= len(l.s) {
			return nil, l.fail("expecting ',' delimiter")
		}
		switch l.s[l.i] {
		case '}':
			l.i++
			return d, nil
		case ',':
			l.i++
		default:
			return nil, l.fail("expecting ',' delimiter")
		}
	}
}

func (l *loader) array(depth int) (any, error) {
	l.i++ // '['
	a := []any{}
	l.space()
	if l.i < len(l.s) && l.s[l.i] == ']' {
		l.i++
		return a, nil
	}
	for {
		l.space()
		v, err := l.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		l.space()
		if l.i >= len(l.s) {
			return nil, l.fail("expecting ',' delimiter")
		}
		switch l.s[l.i] {
		case ']':
			l.i++
			return a, nil
		case ',':
			l.i++
		default:
			return nil, l.fail("expecting ',' delimiter")
		}
	}
}

// number reads a JSON number (Python's NUMBER_RE: -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?).
func (l *loader) number() (any, error) {
	start := l.i
	n, ok := scanNumber(l.s, start)
	if !ok {
		return nil, l.fail("expecting value")
	}
	if !n.float && n.intEnd-start-strings.Count(l.s[start:start+1], "-") > maxIntDigits {
		return nil, l.fail(fmt.Sprintf("an int of more than %d digits (Python's int_max_str_digits)", maxIntDigits))
	}
	l.i = n.end
	return json.Number(l.s[start:n.end]), nil
}

// str reads a JSON string at l.i (the opening quote).
func (l *loader) str() (any, error) {
	l.i++ // '"'
	var b strings.Builder
	for {
		start := l.i
		for l.i < len(l.s) {
			c := l.s[l.i]
			if c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
				break
			}
			l.i++
		}
		b.WriteString(l.s[start:l.i])
		if l.i >= len(l.s) {
			return nil, l.fail("unterminated string")
		}
		c := l.s[l.i]
		switch {
		case c == '"':
			l.i++
			return b.String(), nil
		case c < 0x20:
			return nil, l.fail("invalid control character")
		case c >= utf8.RuneSelf:
			if _, ok := SurrogateAt(l.s, l.i); ok {
				b.WriteString(l.s[l.i : l.i+3])
				l.i += 3
				continue
			}
			r, size := utf8.DecodeRuneInString(l.s[l.i:])
			b.WriteRune(r) // U+FFFD for a byte that is not UTF-8
			l.i += size
		default: // '\\'
			if err := l.escape(&b); err != nil {
				return nil, err
			}
		}
	}
}

// escape decodes the escape sequence at l.i (its backslash) into b.
func (l *loader) escape(b *strings.Builder) error {
	if l.i+1 >= len(l.s) {
		return l.fail("unterminated string")
	}
	e := l.s[l.i+1]
	l.i += 2
	switch e {
	case '"', '\\', '/':
		b.WriteByte(e)
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		u, ok := l.hex4()
		if !ok {
			return l.fail(`invalid \uXXXX escape`)
		}
		if utf16.IsSurrogate(u) && u < 0xdc00 && l.i+1 < len(l.s) && l.s[l.i] == '\\' && l.s[l.i+1] == 'u' {
			save := l.i
			l.i += 2
			if lo, ok := l.hex4(); ok && lo >= 0xdc00 && lo <= 0xdfff {
				b.WriteRune(utf16.DecodeRune(u, lo))
				return nil
			}
			l.i = save
		}
		if utf16.IsSurrogate(u) {
			w := surrogateBytes(u)
			b.Write(w[:])
			return nil
		}
		b.WriteRune(u)
	default:
		l.i--
		return l.fail("invalid \\escape")
	}
	return nil
}

func (l *loader) hex4() (rune, bool) {
	v, ok := hex4(l.s, l.i)
	if ok {
		l.i += 4
	}
	return v, ok
}
