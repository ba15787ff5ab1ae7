package pyfmt

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// LooseOptions tune ParseLoose.
type LooseOptions struct {
	// KeepPartial keeps a string the text ends inside (model output: the
	// text so far is the answer); without it the string is dropped with
	// its member (templates: a cut "NoneTy" is no type).
	KeepPartial bool
}

// ParseLoose parses the JSON-like value at the start of s (after space)
// the way models and ToolBench's truncated templates write them: single-
// or double-quoted strings, Python's True/False/None and tuples, bare
// keys, trailing, extra or missing commas, raw newlines in strings, and
// text that stops in the middle (the open strings, lists and dicts are
// closed and an unfinished member is dropped). A double quote inside a
// string ends it only when what follows can follow a string (",", "}",
// "]", ")", ":" or the end), so "He said "hi" to me" survives.
//
// It returns the value (Dict, []any, string, json.Number, bool, nil), the
// offset just after it, and whether the text was cut short. An error is a
// *SyntaxError.
func ParseLoose(s string, opt LooseOptions) (v any, end int, truncated bool, err error) {
	p := &looseParser{s: s, keepPartial: opt.KeepPartial}
	p.ws()
	v, ok := p.value(0)
	if p.err != nil {
		return nil, p.pos, p.eof, p.err
	}
	if !ok {
		return nil, p.pos, true, syntaxErrorf(p.pos, "the text ends before any value")
	}
	return v, p.pos, p.eof, nil
}

// UnescapeLoose resolves the JSON and Python escapes in s as ParseLoose
// does in a string: unknown ones stand for their character.
func UnescapeLoose(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '\\' && i+1 < len(s) {
			i, _ = unescape(&b, s, i, modelEscapes)
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
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
		p.err = syntaxErrorf(p.pos, format, args...)
	}
}

func (p *looseParser) ws() { p.pos = skipSpace(p.s, p.pos) }

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
	o := Dict{}
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
		o = append(o, Item{Key: key, Value: v})
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
// and partial strings are not kept.
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
			p.pos, _ = unescape(&b, p.s, p.pos, modelEscapes)
		case c == q:
			if p.closes(p.pos + 1) {
				p.pos++
				return b.String(), true
			}
			b.WriteByte(c)
			p.pos++
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.pos:])
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
	i = skipSpace(p.s, i)
	return i == len(p.s) || strings.IndexByte(",}]):", p.s[i]) >= 0
}

func (p *looseParser) number() (any, bool) {
	start := p.pos
	for p.pos < len(p.s) && strings.IndexByte("+-.0123456789eE", p.s[p.pos]) >= 0 {
		p.pos++
	}
	lit := p.s[start:p.pos]
	if p.atEnd() {
		// Cut in the middle: "12." or "1e" is what was written so far.
		p.eof = true
		lit = strings.TrimRight(lit, ".eE+-")
	}
	if n, ok := jsonNumber(lit); ok {
		return json.Number(n), true
	}
	if p.eof {
		return nil, false
	}
	p.fail("%q is not a number", lit)
	return nil, false
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
