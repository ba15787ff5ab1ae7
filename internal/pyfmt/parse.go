package pyfmt

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ParseOptions say what Parse reads besides Python literals.
type ParseOptions struct {
	// Calls reads call expressions, name(value, key=value), as *Call:
	// the function-calling syntax models write ([f(a=1), g(b="x")]).
	Calls bool
	// FloatValues writes each float as the float64 Python holds for it,
	// in its shortest form ("1e5" is "100000.0", "0.10000000000000001"
	// is "0.1"), and rejects floats out of float64's range, as they come
	// out of a value json.loads made. Without it a float keeps the digits
	// it was written with.
	FloatValues bool
}

// Call is a Python call expression: Name(Positional..., key=value...).
type Call struct {
	Name       string
	Positional []any
	Keywords   map[string]any
	// Order lists the keywords in the order they were first written.
	Order []string
}

// SyntaxError says where and why text is not what a parser reads.
type SyntaxError struct {
	// Offset is the byte offset in the text where the problem is.
	Offset int
	// Msg says what was wrong.
	Msg string
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("python literal at byte %d: %s", e.Offset, e.Msg)
}

// Parse parses s, around which space is ignored, as one Python literal:
// dicts, lists, tuples, str (with any quotes, prefixes and escapes), int,
// float, True, False and None, and JSON's true, false and null, which
// models mix in. It returns what toolenv.DecodeJSON would make of the
// same value written as JSON: map[string]any, []any (tuples too),
// string, json.Number, bool, nil; and *Call with opt.Calls. Values JSON
// cannot hold (inf, nan, bytes, sets) are errors; a dict key that is not
// a string becomes the string json.dumps makes of it. An error is a
// *SyntaxError.
func Parse(s string, opt ParseOptions) (any, error) {
	p := &parser{s: s, opt: opt}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.s) {
		return nil, p.errorf("unexpected %q after the value", p.rest())
	}
	return v, nil
}

// ParsePrefix parses the Python value at the start of s as Parse does and
// returns it with the number of bytes it used; what follows is left
// alone.
func ParsePrefix(s string, opt ParseOptions) (any, int, error) {
	p := &parser{s: s, opt: opt}
	v, err := p.value()
	if err != nil {
		return nil, 0, err
	}
	return v, p.pos, nil
}

type parser struct {
	s     string
	pos   int
	depth int
	opt   ParseOptions
}

func syntaxErrorf(offset int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Offset: offset, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) errorf(format string, args ...any) error {
	return syntaxErrorf(p.pos, format, args...)
}

// expected is the error for text that is not what the grammar wants.
func (p *parser) expected(what string) error {
	if p.pos >= len(p.s) {
		return p.errorf("%s, found the end", what)
	}
	return p.errorf("%s, found %q", what, p.rest())
}

func (p *parser) rest() string {
	r := p.s[p.pos:]
	if len(r) > 20 {
		r = r[:20] + "…"
	}
	return r
}

func (p *parser) space() { p.pos = skipSpace(p.s, p.pos) }

// skipSpace returns the index of the first byte from i on that is not
// JSON or Python white space.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

func (p *parser) value() (any, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, p.errorf("nested too deeply")
	}
	p.space()
	if p.pos >= len(p.s) {
		return nil, p.expected("expected a value")
	}
	switch c := p.s[p.pos]; {
	case c == '[':
		p.pos++
		return p.sequence(']')
	case c == '(':
		p.pos++
		return p.sequence(')')
	case c == '{':
		p.pos++
		return p.dict()
	case c == '"' || c == '\'':
		return p.str(false)
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		return p.number()
	case c == '_' || isLetter(c):
		return p.nameOrCall()
	}
	return nil, p.expected("expected a value")
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 }

// ident reads a name: letters and '_', then digits, '.' and '-' too
// (tool names like "api.v1" and "get-weather").
func (p *parser) ident() string {
	start := p.pos
	for p.pos < len(p.s) {
		r, size := utf8.DecodeRuneInString(p.s[p.pos:])
		if r == '_' || unicode.IsLetter(r) || p.pos > start && (unicode.IsDigit(r) || r == '.' || r == '-') {
			p.pos += size
			continue
		}
		break
	}
	return p.s[start:p.pos]
}

func (p *parser) nameOrCall() (any, error) {
	start := p.pos
	// String prefixes: r'..', u'..', b'..', f'..'.
	if p.pos+1 < len(p.s) && (p.s[p.pos+1] == '\'' || p.s[p.pos+1] == '"') {
		switch p.s[p.pos] {
		case 'r', 'R':
			p.pos++
			return p.str(true)
		case 'u', 'U', 'b', 'B', 'f', 'F':
			p.pos++
			return p.str(false)
		}
	}
	name := p.ident()
	if name == "" {
		return nil, p.expected("expected a value")
	}
	save := p.pos
	p.space()
	if p.opt.Calls && p.pos < len(p.s) && p.s[p.pos] == '(' {
		p.pos++
		return p.call(name)
	}
	p.pos = save
	switch name {
	case "True", "true":
		return true, nil
	case "False", "false":
		return false, nil
	case "None", "null":
		return nil, nil
	case "inf", "nan":
		p.pos = start
		return nil, p.errorf("%s cannot be represented in JSON", name)
	}
	p.pos = start
	return nil, p.expected("expected a literal")
}

func (p *parser) call(name string) (any, error) {
	c := &Call{Name: name, Keywords: map[string]any{}}
	for {
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == ')' {
			p.pos++
			return c, nil
		}
		// key=value or a positional value
		save := p.pos
		key := p.ident()
		p.space()
		if key != "" && p.pos < len(p.s) && p.s[p.pos] == '=' && (p.pos+1 >= len(p.s) || p.s[p.pos+1] != '=') {
			p.pos++
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			if _, dup := c.Keywords[key]; !dup {
				c.Order = append(c.Order, key)
			}
			c.Keywords[key] = v
		} else {
			p.pos = save
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			c.Positional = append(c.Positional, v)
		}
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != ',' && p.s[p.pos] != ')' {
			return nil, p.expected("expected ',' or ')' in the call to " + name)
		}
		if p.s[p.pos] == ',' {
			p.pos++
		}
	}
}

func (p *parser) sequence(end byte) (any, error) {
	out := []any{}
	for {
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == end {
			p.pos++
			return out, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != ',' && p.s[p.pos] != end {
			return nil, p.expected(fmt.Sprintf("expected ',' or '%c'", end))
		}
		if p.s[p.pos] == ',' {
			p.pos++
		}
	}
}

func (p *parser) dict() (any, error) {
	out := map[string]any{}
	for {
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			return out, nil
		}
		keyAt := p.pos
		k, err := p.value()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != ':' {
			return nil, p.expected("expected ':' after a dict key (sets cannot be represented in JSON)")
		}
		p.pos++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		ks, ok := dictKey(k)
		if !ok {
			p.pos = keyAt
			return nil, p.errorf("a dict key must be a string, a number, True, False or None")
		}
		out[ks] = v
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != ',' && p.s[p.pos] != '}' {
			return nil, p.expected("expected ',' or '}' in a dict")
		}
		if p.s[p.pos] == ',' {
			p.pos++
		}
	}
}

// dictKey is the JSON object key json.dumps writes for a dict key.
func dictKey(k any) (string, bool) {
	switch x := k.(type) {
	case string:
		return x, true
	case json.Number:
		return string(x), true
	case bool:
		return strconv.FormatBool(x), true
	case nil:
		return "null", true
	}
	return "", false
}

func (p *parser) number() (any, error) {
	start := p.pos
	if p.s[p.pos] == '-' || p.s[p.pos] == '+' {
		p.pos++
	}
	if rest := p.s[p.pos:]; strings.HasPrefix(rest, "inf") || strings.HasPrefix(rest, "nan") {
		return nil, p.errorf("%s cannot be represented in JSON", p.s[start:p.pos+3])
	}
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c >= '0' && c <= '9' || c == '.' || c == '_' || c == 'e' || c == 'E' ||
			(c == '-' || c == '+') && (p.s[p.pos-1] == 'e' || p.s[p.pos-1] == 'E') {
			p.pos++
			continue
		}
		break
	}
	lit, ok := jsonNumber(p.s[start:p.pos])
	if !ok {
		p.pos = start
		return nil, p.expected("expected a number")
	}
	if !p.opt.FloatValues || !strings.ContainsAny(lit, ".eE") {
		return json.Number(lit), nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) {
		p.pos = start
		return nil, p.errorf("number %s is out of range", lit)
	}
	out := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(out, ".e") {
		out += ".0" // still a float, which Repr writes back as one
	}
	return json.Number(out), nil
}

// str reads a quoted string, triple-quoted or not; raw keeps backslashes.
func (p *parser) str(raw bool) (any, error) {
	start := p.pos
	delim := p.s[p.pos : p.pos+1]
	if strings.HasPrefix(p.s[p.pos+1:], delim) && strings.HasPrefix(p.s[p.pos+2:], delim) {
		delim = p.s[p.pos : p.pos+3]
	} else if end := plainStringEnd(p.s, p.pos+1, delim[0]); end >= 0 {
		// No escape, line break or invalid UTF-8 before the closing
		// quote: the string is its own text (what strDecoded makes).
		p.pos = end + 1
		return p.s[start+1 : end], nil
	}
	return p.strDecoded(delim, raw)
}

// strDecoded reads the string at p.pos quoted by delim, character by
// character.
func (p *parser) strDecoded(delim string, raw bool) (any, error) {
	start := p.pos
	p.pos += len(delim)
	var b strings.Builder
	for p.pos < len(p.s) {
		if strings.HasPrefix(p.s[p.pos:], delim) {
			p.pos += len(delim)
			return b.String(), nil
		}
		c := p.s[p.pos]
		switch {
		case c == '\n' && len(delim) == 1:
			return nil, p.errorf("a line break in a string that is not triple-quoted")
		case c == '\\' && p.pos+1 < len(p.s) && raw:
			b.WriteString(p.s[p.pos : p.pos+2])
			p.pos += 2
		case c == '\\' && p.pos+1 < len(p.s):
			next, ok := unescape(&b, p.s, p.pos, pythonEscapes)
			if !ok {
				return nil, p.errorf("bad escape %q", p.s[p.pos:min(next, len(p.s))])
			}
			p.pos = next
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.pos:])
			b.WriteRune(r)
			p.pos += size
		}
	}
	p.pos = start
	return nil, p.errorf("unterminated string")
}

// plainStringEnd returns the index of the first q in s from i on when
// every byte before it reads as itself in a one-quote string (no
// backslash, no line break, valid UTF-8), else -1.
func plainStringEnd(s string, i int, q byte) int {
	ascii := true
	for j := i; j < len(s); j++ {
		switch c := s[j]; {
		case c == q:
			if !ascii && !utf8.ValidString(s[i:j]) {
				return -1
			}
			return j
		case c == '\\' || c == '\n':
			return -1
		case c >= 0x80:
			ascii = false
		}
	}
	return -1
}
