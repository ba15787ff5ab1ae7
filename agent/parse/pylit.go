package parse

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pyCall is a Python call expression: name(args..., key=value...).
type pyCall struct {
	Name       string
	Positional []any
	Keywords   map[string]any
	Order      []string
}

// maxDepth bounds the nesting of Python literals, so that hostile input
// cannot exhaust the stack.
const maxDepth = 200

// pyParser parses a Python expression made of literals (str, int, float,
// True/False/None, list, tuple, dict) and calls with keyword arguments.
type pyParser struct {
	s     string
	pos   int
	depth int
}

var errNotPython = errors.New("not a Python expression")

// parsePython parses s as one Python expression, ignoring surrounding
// space. Values come back as toolenv.DecodeJSON gives them: string,
// json.Number, bool, nil, []any, map[string]any, and *pyCall for calls.
func parsePython(s string) (any, error) {
	p := &pyParser{s: s}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.s) {
		return nil, fmt.Errorf("%w: unexpected %q at offset %d", errNotPython, p.rest(10), p.pos)
	}
	return v, nil
}

// parsePythonPrefix parses one Python expression at the start of s and
// returns it with the number of bytes it used.
func parsePythonPrefix(s string) (any, int, error) {
	p := &pyParser{s: s}
	v, err := p.value()
	if err != nil {
		return nil, 0, err
	}
	return v, p.pos, nil
}

func (p *pyParser) rest(n int) string {
	r := p.s[p.pos:]
	if len(r) > n {
		r = r[:n]
	}
	return r
}

func (p *pyParser) space() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *pyParser) fail(what string) error {
	if p.pos >= len(p.s) {
		return fmt.Errorf("%w: %s, found the end", errNotPython, what)
	}
	return fmt.Errorf("%w: %s at offset %d, found %q", errNotPython, what, p.pos, p.rest(10))
}

func (p *pyParser) value() (any, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, fmt.Errorf("%w: nested too deeply", errNotPython)
	}
	p.space()
	if p.pos >= len(p.s) {
		return nil, p.fail("expected a value")
	}
	c := p.s[p.pos]
	switch {
	case c == '[':
		p.pos++
		return p.sequence(']')
	case c == '(':
		p.pos++
		v, err := p.sequence(')')
		if err != nil {
			return nil, err
		}
		return v, nil
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
	return nil, p.fail("expected a value")
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 }

func (p *pyParser) ident() string {
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

func (p *pyParser) nameOrCall() (any, error) {
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
		p.pos = start
		return nil, p.fail("expected a name")
	}
	save := p.pos
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == '(' {
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
	}
	p.pos = start
	return nil, p.fail("expected a literal")
}

func (p *pyParser) call(name string) (any, error) {
	c := &pyCall{Name: name, Keywords: map[string]any{}}
	for {
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == ')' {
			p.pos++
			return c, nil
		}
		// keyword=value or a positional value
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
		if p.pos >= len(p.s) {
			return nil, p.fail("expected ',' or ')' in the call to " + name)
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case ')':
		default:
			return nil, p.fail("expected ',' or ')' in the call to " + name)
		}
	}
}

func (p *pyParser) sequence(end byte) (any, error) {
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
		if p.pos >= len(p.s) {
			return nil, p.fail(fmt.Sprintf("expected ',' or '%c'", end))
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case end:
		default:
			return nil, p.fail(fmt.Sprintf("expected ',' or '%c'", end))
		}
	}
}

func (p *pyParser) dict() (any, error) {
	out := map[string]any{}
	for {
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			return out, nil
		}
		k, err := p.value()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != ':' {
			return nil, p.fail("expected ':' in a dict")
		}
		p.pos++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		ks, ok := k.(string)
		if !ok {
			b, _ := json.Marshal(k)
			ks = string(b)
		}
		out[ks] = v
		p.space()
		if p.pos >= len(p.s) {
			return nil, p.fail("expected ',' or '}'")
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case '}':
		default:
			return nil, p.fail("expected ',' or '}'")
		}
	}
}

func (p *pyParser) number() (any, error) {
	start := p.pos
	if p.s[p.pos] == '-' || p.s[p.pos] == '+' {
		p.pos++
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
	lit := strings.ReplaceAll(p.s[start:p.pos], "_", "")
	lit = strings.TrimPrefix(lit, "+")
	if _, err := strconv.ParseFloat(lit, 64); err != nil {
		var ne *strconv.NumError
		if !errors.As(err, &ne) || ne.Err != strconv.ErrRange {
			p.pos = start
			return nil, p.fail("expected a number")
		}
	}
	// Write it as a JSON number literal: "5." -> "5.0", ".5" -> "0.5".
	neg := strings.HasPrefix(lit, "-")
	lit = strings.TrimPrefix(lit, "-")
	if strings.HasPrefix(lit, ".") {
		lit = "0" + lit
	}
	lit = strings.Replace(lit, ".e", ".0e", 1)
	lit = strings.Replace(lit, ".E", ".0E", 1)
	if strings.HasSuffix(lit, ".") {
		lit += "0"
	}
	if !strings.ContainsAny(lit, ".eE") {
		if t := strings.TrimLeft(lit, "0"); t == "" {
			lit = "0"
		} else {
			lit = t
		}
	}
	if neg {
		lit = "-" + lit
	}
	if !json.Valid([]byte(lit)) {
		p.pos = start
		return nil, p.fail("expected a number")
	}
	return json.Number(lit), nil
}

func (p *pyParser) str(raw bool) (any, error) {
	q := p.s[p.pos]
	triple := strings.HasPrefix(p.s[p.pos:], strings.Repeat(string(q), 3))
	delim := string(q)
	if triple {
		delim = strings.Repeat(string(q), 3)
	}
	p.pos += len(delim)
	var b strings.Builder
	for p.pos < len(p.s) {
		if strings.HasPrefix(p.s[p.pos:], delim) {
			p.pos += len(delim)
			return b.String(), nil
		}
		c := p.s[p.pos]
		if c == '\n' && !triple {
			return nil, p.fail("unterminated string")
		}
		if c != '\\' || p.pos+1 >= len(p.s) {
			b.WriteByte(c)
			p.pos++
			continue
		}
		if raw {
			b.WriteByte(c)
			b.WriteByte(p.s[p.pos+1])
			p.pos += 2
			continue
		}
		e := p.s[p.pos+1]
		p.pos += 2
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case '\\', '\'', '"':
			b.WriteByte(e)
		case '\n':
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if p.pos+n > len(p.s) {
				return nil, p.fail("bad escape")
			}
			r, err := strconv.ParseUint(p.s[p.pos:p.pos+n], 16, 32)
			if err != nil || r > unicode.MaxRune {
				return nil, p.fail("bad escape")
			}
			b.WriteRune(rune(r))
			p.pos += n
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return nil, p.fail("unterminated string")
}
