package simulate

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// parseLoose parses the JSON-like value at the start of s (after
// whitespace) the way models and ToolBench's truncated templates write
// them: single- or double-quoted strings, Python's True/False/None and
// tuples, bare keys, trailing or missing commas, raw newlines in strings,
// and text that stops in the middle (the open strings, arrays and objects
// are closed and an unfinished member is dropped). A double quote inside a
// string ends it only when what follows can follow a string (",", "}",
// "]", ":" or the end), so "He said "hi" to me" survives.
//
// It returns the value (object, []any, string, json.Number, bool, nil),
// the offset just after it, and whether the text was cut short.
func parseLoose(s string) (v any, end int, truncated bool, err error) {
	return parseLooseOpts(s, true)
}

// parseLooseOpts is parseLoose; keepPartial says whether a string value
// the text ends inside is kept (model output: yes, the text so far is the
// answer) or dropped with its member (templates: a cut "NoneTy" is no type).
func parseLooseOpts(s string, keepPartial bool) (v any, end int, truncated bool, err error) {
	p := &looseParser{s: s, keepPartial: keepPartial}
	p.ws()
	v, ok := p.value(0)
	if p.err != nil {
		return nil, p.pos, p.eof, p.err
	}
	if !ok {
		return nil, p.pos, true, fmt.Errorf("the text ends before any value")
	}
	return v, p.pos, p.eof, nil
}

type looseParser struct {
	s           string
	keepPartial bool
	pos         int
	eof         bool // the text ended inside a value
	err         error
}

func (p *looseParser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
	}
}

func (p *looseParser) ws() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *looseParser) atEnd() bool { return p.pos >= len(p.s) }

// value parses one value; ok is false when the text ended before it was
// complete enough to keep.
func (p *looseParser) value(depth int) (any, bool) {
	if depth > maxDepth {
		p.fail("nested too deeply")
		return nil, false
	}
	if p.atEnd() {
		p.eof = true
		return nil, false
	}
	switch c := p.s[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[' || c == '(':
		return p.array(depth)
	case c == '"' || c == '\'':
		return p.str()
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		return p.number()
	default:
		return p.word()
	}
}

func (p *looseParser) object(depth int) (any, bool) {
	p.pos++ // '{'
	o := object{}
	for {
		p.ws()
		if p.atEnd() {
			p.eof = true
			return o, true
		}
		switch p.s[p.pos] {
		case '}':
			p.pos++
			return o, true
		case ',':
			p.pos++
			continue
		}
		key, ok := p.key()
		if p.err != nil {
			return nil, false
		}
		if !ok {
			return o, true
		}
		p.ws()
		if p.atEnd() {
			p.eof = true
			return o, true
		}
		if p.s[p.pos] != ':' && p.s[p.pos] != '=' {
			p.fail("expected ':' after key %q, found %q", key, p.s[p.pos])
			return nil, false
		}
		p.pos++
		p.ws()
		v, ok := p.value(depth + 1)
		if p.err != nil {
			return nil, false
		}
		if !ok {
			return o, true
		}
		o = append(o, member{key, v})
		p.ws()
		if !p.atEnd() && p.s[p.pos] != ',' && p.s[p.pos] != '}' && !isKeyStart(p.s[p.pos]) {
			p.fail("expected ',' or '}' after the value of %q, found %q", key, p.s[p.pos])
			return nil, false
		}
	}
}

func isKeyStart(c byte) bool {
	return c == '"' || c == '\'' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func (p *looseParser) key() (string, bool) {
	c := p.s[p.pos]
	if c == '"' || c == '\'' {
		v, ok := p.str()
		if !ok || p.eof {
			return "", false
		}
		return v.(string), true
	}
	if c >= '0' && c <= '9' || c == '-' { // Python dicts with number keys
		start := p.pos
		for p.pos < len(p.s) && (p.s[p.pos] >= '0' && p.s[p.pos] <= '9' || p.s[p.pos] == '-' || p.s[p.pos] == '.') {
			p.pos++
		}
		return p.s[start:p.pos], !p.atEnd()
	}
	if !isKeyStart(c) {
		p.fail("expected a key, found %q", c)
		return "", false
	}
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c == '_' || c == '-' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			p.pos++
			continue
		}
		break
	}
	if p.atEnd() {
		p.eof = true
		return "", false
	}
	return p.s[start:p.pos], true
}

func (p *looseParser) array(depth int) (any, bool) {
	closer := byte(']')
	if p.s[p.pos] == '(' {
		closer = ')'
	}
	p.pos++
	a := []any{}
	for {
		p.ws()
		if p.atEnd() {
			p.eof = true
			return a, true
		}
		switch p.s[p.pos] {
		case closer:
			p.pos++
			return a, true
		case ',':
			p.pos++
			continue
		}
		v, ok := p.value(depth + 1)
		if p.err != nil {
			return nil, false
		}
		if !ok {
			return a, true
		}
		a = append(a, v)
		p.ws()
		if !p.atEnd() && p.s[p.pos] != ',' && p.s[p.pos] != closer {
			c := p.s[p.pos]
			if c != '{' && c != '[' && c != '"' && c != '\'' && !(c >= '0' && c <= '9') && c != '-' {
				p.fail("expected ',' or %q in a list, found %q", closer, c)
				return nil, false
			}
		}
	}
}

// str parses a quoted string; ok is false when the text ended inside it
// before any closing quote (the partial string is still returned as a
// value by the caller's closing logic only if it is a value).
func (p *looseParser) str() (any, bool) {
	q := p.s[p.pos]
	p.pos++
	var b strings.Builder
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '\\':
			if p.pos+1 >= len(p.s) {
				p.pos++
				p.eof = true
				return b.String(), p.keepPartial
			}
			p.escape(&b)
		case c == q:
			if p.closes(p.pos + 1) {
				p.pos++
				return b.String(), true
			}
			b.WriteByte(c)
			p.pos++
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.pos:])
			if r == utf8.RuneError && size == 1 {
				r = utf8.RuneError
			}
			b.WriteRune(r)
			p.pos += size
		}
	}
	p.eof = true
	return b.String(), p.keepPartial
}

// closes reports whether a quote at i-1 can end a string: what follows,
// after spaces, is a delimiter or the end.
func (p *looseParser) closes(i int) bool {
	for i < len(p.s) {
		switch p.s[i] {
		case ' ', '\t', '\r', '\n':
			i++
			continue
		case ',', '}', ']', ')', ':':
			return true
		}
		return false
	}
	return true
}

func (p *looseParser) escape(b *strings.Builder) {
	c := p.s[p.pos+1]
	p.pos += 2
	switch c {
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'r':
		b.WriteByte('\r')
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'u', 'x', 'U':
		n := map[byte]int{'u': 4, 'x': 2, 'U': 8}[c]
		if p.pos+n <= len(p.s) {
			if v, err := strconv.ParseUint(p.s[p.pos:p.pos+n], 16, 32); err == nil {
				r := rune(v)
				p.pos += n
				if c == 'u' && r >= 0xd800 && r < 0xdc00 && p.pos+6 <= len(p.s) && p.s[p.pos] == '\\' && p.s[p.pos+1] == 'u' {
					if lo, err := strconv.ParseUint(p.s[p.pos+2:p.pos+6], 16, 32); err == nil && lo >= 0xdc00 && lo < 0xe000 {
						r = 0x10000 + (r-0xd800)<<10 + (rune(lo) - 0xdc00)
						p.pos += 6
					}
				}
				if !utf8.ValidRune(r) {
					r = utf8.RuneError
				}
				b.WriteRune(r)
				return
			}
		}
		b.WriteByte('\\')
		b.WriteByte(c)
	default: // \" \' \\ \/ and unknown escapes keep the character
		b.WriteByte(c)
	}
}

func (p *looseParser) number() (any, bool) {
	start := p.pos
	for p.pos < len(p.s) && strings.IndexByte("+-.0123456789eE", p.s[p.pos]) >= 0 {
		p.pos++
	}
	lit := p.s[start:p.pos]
	if p.atEnd() {
		p.eof = true
	}
	if n, ok := jsonNumber(lit); ok {
		return n, true
	}
	if p.eof { // cut in the middle: 12. or 1e
		if n, ok := jsonNumber(strings.TrimRight(lit, ".eE+-")); ok {
			return n, true
		}
		return nil, false
	}
	p.fail("%q is not a number", lit)
	return nil, false
}

// jsonNumber normalises a number literal to valid JSON (no '+', a digit
// before the point).
func jsonNumber(lit string) (json.Number, bool) {
	s := strings.TrimPrefix(lit, "+")
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if strings.HasPrefix(s, ".") {
		s = "0" + s
	}
	if neg {
		s = "-" + s
	}
	if s == "" || !json.Valid([]byte(s)) {
		return "", false
	}
	return json.Number(s), true
}

// word parses true/false/null and Python's True/False/None/nan/inf.
func (p *looseParser) word() (any, bool) {
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			p.pos++
			continue
		}
		break
	}
	w := p.s[start:p.pos]
	switch w {
	case "true", "True":
		return true, true
	case "false", "False":
		return false, true
	case "null", "None", "NaN", "nan", "Infinity", "inf", "undefined":
		return nil, true
	}
	if p.atEnd() && w != "" {
		for _, full := range []string{"true", "True", "false", "False", "null", "None"} {
			if strings.HasPrefix(full, w) {
				p.eof = true
				return nil, false
			}
		}
	}
	if w == "" {
		p.fail("unexpected %q", p.s[p.pos])
	} else {
		p.fail("unexpected word %q", w)
	}
	return nil, false
}
