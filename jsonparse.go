package toolenv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ParseJSON parses one JSON value into the types encoding/json gives with
// UseNumber (map[string]any, []any, string, json.Number, bool, nil). It
// accepts exactly what encoding/json accepts (a differential fuzz test
// checks this) and decodes alike — duplicate keys keep the last value —
// but without reflection, for the request hot path. Unlike
// encoding/json, it keeps strings that are not UTF-8 apart instead of
// turning them all into U+FFFD: bytes that are not UTF-8 are kept as
// they are, and a lone surrogate escape (\ud800) becomes the surrogate's
// three-byte generalized UTF-8 form, so that "\xff", "\ud800" and
// "\ufffd" are three values (and three cache keys; Canonical writes
// them apart). Encoding such a string with encoding/json gives U+FFFD
// for each bad byte, as before.
//
// The one difference in what is decoded (FuzzParseJSON holds ParseJSON
// to encoding/json on everything else): the three raw bytes a surrogate
// takes in generalized UTF-8 (ED A0-BF 80-BF) are that surrogate, the
// same value as its escape ("\xed\xbb\xbb" is "\udefb", as Python's
// "surrogatepass" reads it), where encoding/json reads three bad bytes.
// Distinct values stay distinct: a raw high surrogate followed by a raw
// low one stays two surrogates (not U+10000), and Canonical writes such
// a pair so that it reads back as itself.
func ParseJSON(data []byte) (any, error) {
	p := jsonParser{data: data}
	return p.document()
}

// ParseJSONObject parses data as a JSON object.
func ParseJSONObject(data []byte) (map[string]any, error) {
	p := jsonParser{data: data}
	return p.documentObject()
}

// document parses p's data as one JSON value with nothing after it.
func (p *jsonParser) document() (any, error) {
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.data) {
		return nil, p.fail("unexpected data after the JSON value")
	}
	return v, nil
}

// documentObject is document for data that must be a JSON object.
func (p *jsonParser) documentObject() (map[string]any, error) {
	v, err := p.document()
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("want a JSON object")
	}
	return m, nil
}

type jsonParser struct {
	data []byte
	i    int
	// free holds member chunks of finished objects, reused: an object's
	// members are collected first and its map made at its final size,
	// since growing a map of many keys costs more than the parse. They
	// are kept in chunks that are never copied (growing one list of
	// members would copy it again and again).
	free [][]jsonMember
	// keep, when set, names the members of the outermost object whose
	// object or array values are kept as RawJSON (see ParseArgs).
	keep func(key string) bool
	// arena, when set, holds the same bytes as data: strings without
	// escapes and numbers are cut from it instead of each copied (see
	// ParseArgs).
	arena string
	// boxes, set with arena, holds short numbers and strings already
	// boxed as values (see box).
	boxes *boxCache
	// keepTop, when set, has the outermost object's members kept in top,
	// in the order they came, in the chunks they were collected in (see
	// ParseArgsText).
	keepTop bool
	top     [][]jsonMember
}

// boxCache keeps the last value boxed for each of a few short literals:
// a large object whose values repeat (0, 1, true, "", "yes"...) costs
// one allocation per distinct value instead of one per member. An
// interface value is immutable, so members may share one.
type boxCache [64]struct {
	lit string
	v   any
}

// maxBoxed is the longest literal boxCache keeps.
const maxBoxed = 16

// box returns s (the text at data[start:end] when number, else the
// decoded string) as a value: json.Number(s) or s, from p.boxes when
// the same literal was boxed last in its slot.
func (p *jsonParser) box(s string, number bool) any {
	if number {
		return p.boxAs(s, boxNumber)
	}
	return p.boxAs(s, boxString)
}

// boxRaw returns the object or array text s kept as RawJSON, as a
// value, from p.boxes as box does (many members whose values are {} or
// [1] cost one allocation, not one each).
func (p *jsonParser) boxRaw(s string) any { return p.boxAs(s, boxRawJSON) }

// The kinds of value boxAs makes of a literal.
const (
	boxString = iota
	boxNumber
	boxRawJSON
)

// boxAs returns s as a value of kind: from p.boxes when the same literal
// was boxed last in its slot as the same kind (the string "{}" is not the
// object {}), else boxed anew and kept there.
func (p *jsonParser) boxAs(s string, kind int) any {
	newValue := func() any {
		switch kind {
		case boxNumber:
			return json.Number(s)
		case boxRawJSON:
			return RawJSON{text: s}
		}
		return s
	}
	if p.boxes == nil || len(s) > maxBoxed || len(s) == 0 {
		return newValue()
	}
	e := &p.boxes[(boxHash(s)*3+uint(kind))%uint(len(p.boxes))]
	if e.lit == s && e.v != nil {
		var same bool
		switch e.v.(type) {
		case json.Number:
			same = kind == boxNumber
		case RawJSON:
			same = kind == boxRawJSON
		case string:
			same = kind == boxString
		}
		if same {
			return e.v
		}
	}
	v := newValue()
	e.lit, e.v = s, v
	return v
}

// boxHash hashes every byte of a short literal: literals that differ
// only inside ("[1]" and "[2]", "yes" and "yas") get slots of their own
// instead of taking each other's.
func boxHash(s string) uint {
	h := uint(len(s))
	for i := 0; i < len(s); i++ {
		h = h*31 + uint(s[i])
	}
	return h ^ h>>7
}

// cut returns data[start:end] as a string: from the arena when there is
// one, else a copy.
func (p *jsonParser) cut(start, end int) string {
	if p.arena != "" {
		return p.arena[start:end]
	}
	return string(p.data[start:end])
}

// memberChunk is the size of the chunks members are kept in past the
// first ones.
const memberChunk = 4096

// members collects an object's members in chunks.
type members struct {
	p      *jsonParser
	chunks [][]jsonMember
	n      int
}

// countMembersFrom is the size of text from which the outermost object's
// members are counted before they are parsed (see countMembers).
const countMembersFrom = 4 << 10

// countMembers returns how many members the object whose text follows
// its opening brace in data has: the commas outside strings at its own
// depth, and one, reading as far as the object's closing brace; or 0
// when its first countProbe bytes hold fewer than minTopKeys members (a
// few large members are collected in chunks as they come, not counted
// over their whole length). On text that is not JSON the count may be
// wrong either way, but never more than a fifth of data's length (a
// member and its comma take five bytes at least): the parse that
// follows fails, having allocated no more than the members of valid
// text of that length would take.
func countMembers(data []byte) int {
	n, closed := countCommas(data[:min(len(data), countProbe)])
	if !closed {
		if n+1 < minTopKeys {
			return 0
		}
		n, _ = countCommas(data)
	}
	return min(n+1, len(data)/5+1)
}

// countProbe is how much of an object countMembers reads to tell many
// members from few.
const countProbe = 16 << 10

// countCommas counts the commas outside strings at the depth data
// starts at, up to the brace or bracket that closes it (closed), or to
// its end.
func countCommas(data []byte) (n int, closed bool) {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			// To the closing quote: the next quote after an even run of
			// backslashes (long strings are searched, not stepped).
			for {
				j := bytes.IndexByte(data[i+1:], '"')
				if j < 0 {
					return n, false
				}
				i += 1 + j
				k := i - 1
				for k >= 0 && data[k] == '\\' {
					k--
				}
				if (i-1-k)%2 == 0 {
					break
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return n, true
			}
			depth--
		case ',':
			if depth == 0 {
				n++
			}
		}
	}
	return n, false
}

func (ms *members) add(k string, v any) {
	if c := len(ms.chunks); c == 0 || len(ms.chunks[c-1]) == cap(ms.chunks[c-1]) {
		size := 8 << c
		if size > memberChunk || c > 12 {
			size = memberChunk
		}
		var chunk []jsonMember
		if f := len(ms.p.free); f > 0 && cap(ms.p.free[f-1]) >= size {
			chunk, ms.p.free = ms.p.free[f-1][:0], ms.p.free[:f-1]
		} else {
			chunk = make([]jsonMember, 0, size)
		}
		ms.chunks = append(ms.chunks, chunk)
	}
	c := len(ms.chunks) - 1
	ms.chunks[c] = append(ms.chunks[c], jsonMember{k, v})
	ms.n++
}

// done makes the object's map, at its final size, and gives the chunks
// back for the next objects. With keep, it returns the chunks instead,
// as they are: the members in the order they came.
func (ms *members) done(keep bool) (map[string]any, [][]jsonMember) {
	m := make(map[string]any, ms.distinctHint())
	for _, chunk := range ms.chunks {
		for _, kv := range chunk {
			m[kv.k] = kv.v // a repeated key keeps its last value
		}
		if !keep {
			clear(chunk)
			ms.p.free = append(ms.p.free, chunk)
		}
	}
	if keep {
		return m, ms.chunks
	}
	return m, nil
}

// distinctSample is how many of an object's first members distinctHint
// looks at.
const distinctSample = 256

// distinctHint returns the size to make the object's map at: its number
// of members, or for many members, that number scaled by the share of
// distinct keys among the first distinctSample (one key sent 100,000
// times made a table for 100,000, 4 MB to allocate and clear for two
// entries). A map whose keys repeat less later than at first grows as
// it fills.
func (ms *members) distinctHint() int {
	if ms.n <= 4*distinctSample {
		return ms.n
	}
	seen := make(map[string]struct{}, distinctSample)
	sampled := 0
	for _, chunk := range ms.chunks {
		for _, kv := range chunk {
			if sampled == distinctSample {
				return (ms.n*len(seen) + distinctSample - 1) / distinctSample
			}
			seen[kv.k] = struct{}{}
			sampled++
		}
	}
	return ms.n // not reached: more than distinctSample members
}

type jsonMember struct {
	k string
	v any
}

const maxJSONDepth = 10000 // encoding/json's limit

func (p *jsonParser) fail(msg string) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", p.i, msg)
}

func (p *jsonParser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (any, error) {
	if p.i >= len(p.data) {
		return nil, p.fail("unexpected end of input")
	}
	switch c := p.data[p.i]; {
	case c == '{':
		if depth >= maxJSONDepth {
			return nil, p.fail("nested too deeply")
		}
		return p.object(depth)
	case c == '[':
		if depth >= maxJSONDepth {
			return nil, p.fail("nested too deeply")
		}
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return p.box(s, false), nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true", true)
	case c == 'f':
		return p.literal("false", false)
	case c == 'n':
		return p.literal("null", nil)
	}
	return nil, p.fail(fmt.Sprintf("unexpected character %q", p.data[p.i]))
}

func (p *jsonParser) literal(word string, v any) (any, error) {
	if len(p.data)-p.i < len(word) || string(p.data[p.i:p.i+len(word)]) != word {
		return nil, p.fail("invalid literal")
	}
	p.i += len(word)
	return v, nil
}

func (p *jsonParser) object(depth int) (any, error) {
	p.i++ // {
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return map[string]any{}, nil // no members: p.top stays empty
	}
	ms := members{p: p}
	if depth == 0 && p.keepTop && len(p.data)-p.i >= countMembersFrom {
		// The outermost object's members are kept: many are counted
		// first and collected in one list of their size, neither
		// chunked nor joined afterwards.
		if n := countMembers(p.data[p.i:]); n > 0 {
			ms.chunks = [][]jsonMember{make([]jsonMember, 0, n)}
		}
	}
	for {
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, p.fail("want a string key")
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, p.fail("want ':' after an object key")
		}
		p.i++
		p.space()
		var v any
		if depth == 0 && p.keep != nil && p.i < len(p.data) && (p.data[p.i] == '{' || p.data[p.i] == '[') && p.keep(k) {
			v, err = p.rawValue(depth + 1)
		} else {
			v, err = p.value(depth + 1)
		}
		if err != nil {
			return nil, err
		}
		ms.add(k, v)
		p.space()
		if p.i >= len(p.data) {
			return nil, p.fail("unterminated object")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			m, kept := ms.done(depth == 0 && p.keepTop)
			if kept != nil {
				p.top = kept
			}
			return m, nil
		default:
			return nil, p.fail("want ',' or '}' in an object")
		}
	}
}

func (p *jsonParser) array(depth int) (any, error) {
	p.i++ // [
	a := []any{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return a, nil
	}
	for {
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.space()
		if p.i >= len(p.data) {
			return nil, p.fail("unterminated array")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, nil
		default:
			return nil, p.fail("want ',' or ']' in an array")
		}
	}
}

func (p *jsonParser) number() (any, error) {
	start := p.i
	if err := p.scanNumber(); err != nil {
		return nil, err
	}
	return p.box(p.cut(start, p.i), true), nil
}

// scanNumber moves past the JSON number at p.i.
func (p *jsonParser) scanNumber() error {
	d := p.data
	if p.i < len(d) && d[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(d) && d[p.i] == '0':
		p.i++
	case p.i < len(d) && d[p.i] >= '1' && d[p.i] <= '9':
		for p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
			p.i++
		}
	default:
		return p.fail("invalid number")
	}
	if p.i < len(d) && d[p.i] == '.' {
		p.i++
		if p.i >= len(d) || d[p.i] < '0' || d[p.i] > '9' {
			return p.fail("invalid number")
		}
		for p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
			p.i++
		}
	}
	if p.i < len(d) && (d[p.i] == 'e' || d[p.i] == 'E') {
		p.i++
		if p.i < len(d) && (d[p.i] == '+' || d[p.i] == '-') {
			p.i++
		}
		if p.i >= len(d) || d[p.i] < '0' || d[p.i] > '9' {
			return p.fail("invalid number")
		}
		for p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
			p.i++
		}
	}
	return nil
}

func (p *jsonParser) str() (string, error) {
	p.i++ // opening quote
	start := p.i
	d := p.data
	// Fast path: no escapes, all ASCII printable.
	for p.i < len(d) {
		c := d[p.i]
		if c == '"' {
			s := p.cut(start, p.i)
			p.i++
			return s, nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		p.i++
	}
	buf := make([]byte, 0, p.i-start+16)
	buf = append(buf, d[start:p.i]...)
	buf, err := p.strRest(buf)
	if err != nil {
		return "", err
	}
	return string(buf), nil
}

// strRest appends the decoded rest of the string p.i is in (after its
// opening quote) to buf, and moves past its closing quote.
func (p *jsonParser) strRest(buf []byte) ([]byte, error) {
	d := p.data
	for p.i < len(d) {
		c := d[p.i]
		switch {
		case c == '"':
			p.i++
			return buf, nil
		case c < 0x20:
			return nil, p.fail("control character in a string")
		case c == '\\':
			if p.i+1 >= len(d) {
				return nil, p.fail("unterminated escape")
			}
			e := d[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return nil, p.fail("invalid \\u escape")
				}
				if utf16.IsSurrogate(r) {
					// A high surrogate followed by \uDC00-\uDFFF is one
					// character; anything else is U+FFFD, as encoding/json.
					save := p.i
					if p.i+1 < len(d) && d[p.i] == '\\' && d[p.i+1] == 'u' {
						p.i += 2
						if r2, ok := p.hex4(); ok {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								buf = utf8.AppendRune(buf, dec)
								continue
							}
						}
					}
					p.i = save
					buf = appendWTF8(buf, r)
					continue
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return nil, p.fail("invalid escape")
			}
		default:
			// A run of bytes that stand for themselves is copied at once
			// (a byte that is not UTF-8 is kept as it is).
			j := p.i + 1
			for j < len(d) && d[j] >= 0x20 && d[j] != '"' && d[j] != '\\' {
				j++
			}
			buf = append(buf, d[p.i:j]...)
			p.i = j
		}
	}
	return nil, p.fail("unterminated string")
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.data) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.data[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}
