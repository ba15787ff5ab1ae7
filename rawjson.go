package toolenv

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// RawJSON is a JSON value kept as its text instead of decoded: what
// ParseArgs gives for an argument the tool's schema does not describe
// whose value is an object or an array, so that a call's undocumented
// members cost a scan, not a map per nested object. The text is valid
// JSON (NewRawJSON checks it; ParseJSON reads it) and immutable.
//
// Canonical writes a RawJSON as it writes the value ParseJSON decodes
// from it, so a call's cache key does not depend on which arguments
// were kept raw; encoding/json writes its text (MarshalJSON). Code that
// looks into argument values decodes it with Value.
type RawJSON struct {
	text string
}

// NewRawJSON returns data as a RawJSON, or the error ParseJSON gives when
// data is not one JSON value. The bytes are copied.
func NewRawJSON(data []byte) (RawJSON, error) {
	start, end, err := checkJSON(data)
	if err != nil {
		return RawJSON{}, err
	}
	return RawJSON{text: string(data[start:end])}, nil
}

// CutRawJSON reads the JSON value at the start of data (after spaces)
// as a RawJSON, checked as NewRawJSON checks it, and returns it with the
// index in data after it, for the caller to say what may follow: one
// scan where finding a value's end and then checking it take two. The
// bytes are copied. On malformed JSON it returns the error ParseJSON
// gives for the value's text (up to where the scan stopped, byte
// positions counted in data).
func CutRawJSON(data []byte) (RawJSON, int, error) {
	p := jsonParser{data: data}
	p.space()
	start := p.i
	if err := p.skip(0); err != nil {
		q := jsonParser{data: data, i: start}
		if _, perr := q.value(0); perr != nil {
			return RawJSON{}, 0, perr // ParseJSON's words
		}
		return RawJSON{}, 0, err
	}
	return RawJSON{text: string(data[start:p.i])}, p.i, nil
}

// CheckJSON returns the error ParseJSON gives for data, or nil when data
// is one JSON value, without decoding it.
func CheckJSON(data []byte) error {
	_, _, err := checkJSON(data)
	return err
}

// checkJSON scans data as one JSON value without decoding it, returning
// where the value starts and ends (spaces around it excluded), or the
// error ParseJSON gives for data.
func checkJSON(data []byte) (start, end int, err error) {
	p := jsonParser{data: data}
	p.space()
	start = p.i
	if err := p.skip(0); err != nil {
		if _, perr := ParseJSON(data); perr != nil {
			return 0, 0, perr // ParseJSON's words
		}
		return 0, 0, err
	}
	end = p.i
	p.space()
	if p.i != len(p.data) {
		return 0, 0, p.fail("unexpected data after the JSON value")
	}
	return start, end, nil
}

// String returns the JSON text (empty for the zero RawJSON).
func (r RawJSON) String() string { return r.text }

// Value decodes the JSON text as ParseJSON does (nil for the zero
// RawJSON).
func (r RawJSON) Value() (any, error) {
	if r.text == "" {
		return nil, nil
	}
	return ParseJSON([]byte(r.text))
}

// MarshalJSON returns the JSON text ("null" for the zero RawJSON).
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if r.text == "" {
		return []byte("null"), nil
	}
	return []byte(r.text), nil
}

// Decoded returns v with every RawJSON in it decoded (ParseJSON's
// types), for code that looks into argument values; v itself when it
// holds none. Maps and slices holding one are copied, never changed.
func Decoded(v any) any {
	d, _ := decoded(v)
	return d
}

// decoded is Decoded, reporting whether it found a RawJSON.
func decoded(v any) (any, bool) {
	switch x := v.(type) {
	case RawJSON:
		d, err := x.Value()
		if err != nil {
			return nil, true // cannot happen: a RawJSON's text is valid JSON
		}
		return d, true
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			d, changed := decoded(e)
			if !changed {
				continue
			}
			if out == nil {
				out = make(map[string]any, len(x))
				for kk, ee := range x {
					out[kk] = ee
				}
			}
			out[k] = d
		}
		if out != nil {
			return out, true
		}
	case []any:
		var out []any
		for i, e := range x {
			d, changed := decoded(e)
			if !changed {
				continue
			}
			if out == nil {
				out = slices.Clone(x)
			}
			out[i] = d
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
}

// DecodedArgs returns args with every RawJSON in its values decoded
// (see Decoded): args itself when it holds none.
func DecodedArgs(args map[string]any) map[string]any {
	if m, ok := Decoded(args).(map[string]any); ok {
		return m
	}
	return args
}

// ParseArgs parses data, a JSON object of a call's arguments, as
// ParseJSONObject does, except that a member the schema s does not
// describe whose value is an object or an array is kept as a RawJSON:
// validation passes such members on as given (lenient) or refuses them
// by name (strict), and the cache key is the same either way, so
// decoding them into maps would only cost. A member is described when s
// declares it among its properties, or when s describes members beyond
// them (additionalProperties or patternProperties holding a schema); a
// nil schema (no schema known) describes them all.
func ParseArgs(data []byte, s *Schema) (map[string]any, error) {
	p := argsParser(data, s, false)
	return p.documentObject()
}

// ParseArgsDeferred parses data, a JSON object of arguments, keeping every
// member's object or array value as a RawJSON: for a front-end that reads
// arguments before it knows the tool, which then calls DecodeDescribed
// with the tool's schema.
func ParseArgsDeferred(data []byte) (map[string]any, error) {
	p := jsonParser{data: data, keep: func(string) bool { return true }, arena: argsArena(data)}
	p.boxes = boxesFor(p.arena)
	return p.documentObject()
}

// DecodeDescribed returns args as ParseArgs(text, s) would have given
// them: the RawJSON values of members s describes decoded (in a new map),
// the others kept. It returns args itself when nothing needs decoding.
func DecodeDescribed(args map[string]any, s *Schema) map[string]any {
	keep := undescribed(s)
	var out map[string]any
	for k, v := range args {
		r, ok := v.(RawJSON)
		if !ok || keep != nil && keep(k) {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(args))
			for kk, vv := range args {
				out[kk] = vv
			}
		}
		out[k] = Decoded(r)
	}
	if out == nil {
		return args
	}
	return out
}

// argsArenaMin is the size of arguments from which their strings and
// numbers are cut from one copy of their text (argsArena).
const argsArenaMin = 16 << 10

// argsArena returns a copy of the text of a call's arguments when it is
// large enough that the strings and numbers parsed from it are best cut
// from one copy than each copied: a call of tens of thousands of keys
// costs one allocation instead of one per key and value. Those strings
// keep the whole text alive while any of them is, which is how long the
// arguments live.
func argsArena(data []byte) string {
	if len(data) < argsArenaMin {
		return ""
	}
	return string(data)
}

// boxesFor returns a boxCache for a parse that cuts its strings and
// numbers from arena (nil when there is none: small arguments, where
// the cache would cost more than it saves).
func boxesFor(arena string) *boxCache {
	if arena == "" {
		return nil
	}
	return new(boxCache)
}

// undescribed returns the test of the members s does not describe (nil
// when it describes them all: a nil schema, which says nothing, or one
// describing members beyond its properties).
func undescribed(s *Schema) func(string) bool {
	if s == nil || describesMore(s) {
		return nil
	}
	return func(k string) bool { _, ok := s.Properties[k]; return !ok }
}

// describesMore reports whether s describes members beyond its
// properties.
func describesMore(s *Schema) bool {
	if ap := strings.TrimSpace(string(s.AdditionalProperties)); ap != "" && ap[0] == '{' {
		return true
	}
	_, ok := s.Extra["patternProperties"]
	return ok
}

// rawValue is the value at p.i kept raw: a RawJSON when it is an object
// or an array, else decoded as value decodes it.
func (p *jsonParser) rawValue(depth int) (any, error) {
	if p.i >= len(p.data) || p.data[p.i] != '{' && p.data[p.i] != '[' {
		return p.value(depth)
	}
	start := p.i
	if err := p.skip(depth); err != nil {
		p.i = start
		if _, perr := p.value(depth); perr != nil {
			return nil, perr // the error value gives, word for word
		}
		return nil, err
	}
	return p.boxRaw(p.cut(start, p.i)), nil
}

// skip moves past the JSON value at p.i, accepting exactly what value
// accepts, without decoding it.
func (p *jsonParser) skip(depth int) error {
	if p.i >= len(p.data) {
		return p.fail("unexpected end of input")
	}
	switch c := p.data[p.i]; {
	case c == '{' || c == '[':
		if depth >= maxJSONDepth {
			return p.fail("nested too deeply")
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		p.i++
		p.space()
		if p.i < len(p.data) && p.data[p.i] == closer {
			p.i++
			return nil
		}
		for {
			p.space()
			if c == '{' {
				if p.i >= len(p.data) || p.data[p.i] != '"' {
					return p.fail("want a string key")
				}
				if err := p.skipStr(); err != nil {
					return err
				}
				p.space()
				if p.i >= len(p.data) || p.data[p.i] != ':' {
					return p.fail("want ':' after an object key")
				}
				p.i++
				p.space()
			}
			if err := p.skip(depth + 1); err != nil {
				return err
			}
			p.space()
			if p.i >= len(p.data) {
				return p.fail("unterminated")
			}
			switch p.data[p.i] {
			case ',':
				p.i++
			case closer:
				p.i++
				return nil
			default:
				return p.fail("want ',' or a closing bracket")
			}
		}
	case c == '"':
		return p.skipStr()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.scanNumber()
	case c == 't':
		_, err := p.literal("true", true)
		return err
	case c == 'f':
		_, err := p.literal("false", false)
		return err
	case c == 'n':
		_, err := p.literal("null", nil)
		return err
	}
	return p.fail("unexpected character")
}

// skipStr moves past the JSON string at p.i, checking its escapes as str
// does.
func (p *jsonParser) skipStr() error {
	p.i++ // opening quote
	d := p.data
	for p.i < len(d) {
		c := d[p.i]
		switch {
		case c == '"':
			p.i++
			return nil
		case c < 0x20:
			return p.fail("control character in a string")
		case c == '\\':
			if p.i+1 >= len(d) {
				return p.fail("unterminated escape")
			}
			e := d[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if !isHex4(d[p.i:]) {
					return p.fail("invalid \\u escape")
				}
				p.i += 4
			default:
				return p.fail("invalid escape")
			}
		default:
			p.i++
		}
	}
	return p.fail("unterminated string")
}

func isHex4(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	for _, c := range b[:4] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// rawCanon writes the canonical form of JSON text as Canonical writes the
// value ParseJSON decodes from it, streaming over the text: an object's
// members are written as they come, and rewritten in order only when
// they did not come sorted (or a key came twice: the last one is kept,
// as ParseJSON keeps it).
type rawCanon struct {
	p       jsonParser
	b       *bytes.Buffer
	keys    []byte      // the decoded keys of the open objects' members
	members []rawMember // the members of the open objects
	order   []int32
	merge   []int32 // the merge's scratch
	tmp     []byte
	str     []byte
	// top, when wanted, is set to the keys of the outermost object in
	// byte order, each once.
	wantTop bool
	depth0  int // the depth of the outermost value
	top     *sortedKeys
}

// sortedKeys holds an object's keys in byte order, each once: their
// bytes one after the other in text, the i-th ending at ends[i] (no
// pointer per key: nothing for the collector to scan).
type sortedKeys struct {
	text string
	ends []int32
}

// all yields the keys in order.
func (k *sortedKeys) all(yield func(string) bool) {
	start := int32(0)
	for _, end := range k.ends {
		if !yield(k.text[start:end]) {
			return
		}
		start = end
	}
}

// rawMember is a member of an object being written: its decoded key in
// keys and its canonical text ("key":value) in the output.
type rawMember struct {
	k0, k1 int
	m0, m1 int
}

func (c *rawCanon) key(m rawMember) []byte { return c.keys[m.k0:m.k1] }

var errCanonicalDepth = errors.New("canonical json: value nested too deeply")

// writeCanonicalRaw writes the canonical form of the RawJSON text at
// depth (as writeCanonical counts it).
func writeCanonicalRaw(b *bytes.Buffer, text string, depth int) error {
	_, err := writeCanonicalRawKeys(b, text, depth, false)
	return err
}

// minTopKeys is the fewest members of an object whose keys
// writeCanonicalRawKeys gives: below, walking the map costs little.
const minTopKeys = 64

// writeCanonicalRawKeys is writeCanonicalRaw, returning too, when keys is
// set and the text is an object of at least minTopKeys members, its keys
// in byte order, each once (the order its canonical form has: found
// while writing it).
func writeCanonicalRawKeys(b *bytes.Buffer, text string, depth int, keys bool) (*sortedKeys, error) {
	c := rawCanons.Get().(*rawCanon)
	defer c.release()
	c.wantTop = keys
	err := c.write(b, text, depth)
	return c.top, err
}

func (c *rawCanon) write(b *bytes.Buffer, text string, depth int) error {
	c.p, c.b, c.depth0 = jsonParser{data: unsafe.Slice(unsafe.StringData(text), len(text))}, b, depth
	if len(text) >= argsArenaMin {
		// Room for many members at once (no more than there are colons,
		// nor than a member's shortest text, `"":0,`, fits in the text;
		// nested objects' members leave the stack as each closes), grown
		// by few copies.
		n := min(strings.Count(text, ":"), len(text)/5)
		if cap(c.members) < n {
			c.members = make([]rawMember, 0, n)
		}
		if k := min(16*n, len(text)); cap(c.keys) < k {
			c.keys = make([]byte, 0, k)
		}
	}
	c.p.space()
	return c.value(depth)
}

// rawCanons keeps the canonical writer's scratch (its member stack,
// decoded keys and sort order) from one call to the next: a call of a
// megabyte of small keys needs megabytes of it, which freshly allocated
// cost more (zeroed, faulted in, collected) than the writing.
var rawCanons = sync.Pool{New: func() any { return new(rawCanon) }}

// maxPooledScratch is the most scratch bytes a rawCanon keeps in
// rawCanons: a rare huge call's scratch is left to the collector.
const maxPooledScratch = 32 << 20

// release gives c back to rawCanons, empty.
func (c *rawCanon) release() {
	size := cap(c.members)*int(unsafe.Sizeof(rawMember{})) + cap(c.keys) + 4*cap(c.order) + cap(c.tmp) + cap(c.str) + 4*cap(c.merge)
	if size > maxPooledScratch {
		return
	}
	c.reset()
	rawCanons.Put(c)
}

// reset empties c for another value, keeping its scratch.
func (c *rawCanon) reset() {
	c.p, c.b, c.wantTop, c.top = jsonParser{}, nil, false, nil
	c.members, c.keys, c.order, c.tmp, c.str, c.merge = c.members[:0], c.keys[:0], c.order[:0], c.tmp[:0], c.str[:0], c.merge[:0]
}

func (c *rawCanon) value(depth int) error {
	if depth > maxCanonicalDepth {
		return errCanonicalDepth
	}
	p, b := &c.p, c.b
	if p.i >= len(p.data) {
		return p.fail("unexpected end of input")
	}
	switch ch := p.data[p.i]; {
	case ch == '{':
		return c.object(depth)
	case ch == '[':
		p.i++
		b.WriteByte('[')
		p.space()
		if p.i < len(p.data) && p.data[p.i] == ']' {
			p.i++
			b.WriteByte(']')
			return nil
		}
		for n := 0; ; n++ {
			p.space()
			if n > 0 {
				b.WriteByte(',')
			}
			if err := c.value(depth + 1); err != nil {
				return err
			}
			p.space()
			if p.i >= len(p.data) {
				return p.fail("unterminated array")
			}
			switch p.data[p.i] {
			case ',':
				p.i++
			case ']':
				p.i++
				b.WriteByte(']')
				return nil
			default:
				return p.fail("want ',' or ']' in an array")
			}
		}
	case ch == '"':
		return c.string()
	case ch == '-' || (ch >= '0' && ch <= '9'):
		start := p.i
		if err := p.scanNumber(); err != nil {
			return err
		}
		return appendCanonicalNumber(b, p.data[start:p.i])
	case ch == 't':
		if _, err := p.literal("true", true); err != nil {
			return err
		}
		b.WriteString("true")
		return nil
	case ch == 'f':
		if _, err := p.literal("false", false); err != nil {
			return err
		}
		b.WriteString("false")
		return nil
	case ch == 'n':
		if _, err := p.literal("null", nil); err != nil {
			return err
		}
		b.WriteString("null")
		return nil
	}
	return p.fail("unexpected character")
}

// string writes the string at p.i as writeCanonicalString writes the
// string ParseJSON decodes from it: as it is when it has no escape and
// no byte that may start a surrogate's generalized UTF-8 (which are the
// only bytes, beside escapes, that Canonical writes otherwise).
func (c *rawCanon) string() error {
	p := &c.p
	d := p.data
	start := p.i
	for j := start + 1; j < len(d); j++ {
		switch d[j] {
		case '"':
			c.b.Write(d[start : j+1])
			p.i = j + 1
			return nil
		case '\\', 0xed:
			j = len(d)
		}
	}
	p.i++
	var err error
	if c.str, err = p.strRest(c.str[:0]); err != nil {
		return err
	}
	writeCanonicalString(c.b, unsafe.String(unsafe.SliceData(c.str), len(c.str)), true)
	return nil
}

func (c *rawCanon) object(depth int) error {
	p, b := &c.p, c.b
	mark := b.Len()
	base, kbase := len(c.members), len(c.keys)
	defer func() { c.members, c.keys = c.members[:base], c.keys[:kbase] }()
	p.i++ // {
	b.WriteByte('{')
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		b.WriteByte('}')
		return nil
	}
	sorted := true
	for {
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return p.fail("want a string key")
		}
		p.i++
		k0 := len(c.keys)
		if cap(c.keys)-k0 < 256 && cap(c.keys) >= 1024 {
			c.keys = append(make([]byte, 0, 2*cap(c.keys)), c.keys...) // doubled, as members
		}
		// A key of printable ASCII without escapes is its own decoded
		// and canonical text.
		plain := p.i
		for plain < len(p.data) && p.data[plain] >= 0x20 && p.data[plain] < utf8.RuneSelf && p.data[plain] != '"' && p.data[plain] != '\\' {
			plain++
		}
		if plain < len(p.data) && p.data[plain] == '"' {
			c.keys = append(c.keys, p.data[p.i:plain]...)
			p.i = plain + 1
		} else {
			var err error
			if c.keys, err = p.strRest(c.keys); err != nil {
				return err
			}
			plain = -1
		}
		m := rawMember{k0: k0, k1: len(c.keys)}
		if len(c.members) > base && bytes.Compare(c.key(c.members[len(c.members)-1]), c.key(m)) >= 0 {
			sorted = false
		}
		if len(c.members) > base {
			b.WriteByte(',')
		}
		m.m0 = b.Len()
		if plain >= 0 {
			b.Write(p.data[p.i-(m.k1-m.k0)-2 : p.i]) // with its quotes
		} else {
			writeCanonicalString(b, unsafe.String(unsafe.SliceData(c.keys[m.k0:m.k1]), m.k1-m.k0), true)
		}
		b.WriteByte(':')
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return p.fail("want ':' after an object key")
		}
		p.i++
		p.space()
		if err := c.value(depth + 1); err != nil {
			return err
		}
		m.m1 = b.Len()
		if len(c.members) == cap(c.members) {
			// Doubled, not grown by append's quarter for large slices: a
			// megabyte of small keys would otherwise be copied a dozen
			// times over.
			c.members = append(make([]rawMember, 0, max(2*cap(c.members), 64)), c.members...)
		}
		c.members = append(c.members, m)
		p.space()
		if p.i >= len(p.data) {
			return p.fail("unterminated object")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			ms := c.members[base:]
			keys := c.wantTop && depth == c.depth0 && len(ms) >= minTopKeys && len(c.keys)-kbase <= math.MaxInt32
			if !sorted {
				c.rewrite(mark, ms, keys)
			} else {
				b.WriteByte('}')
				if keys { // in order already, one after the other in c.keys
					c.top = &sortedKeys{text: string(c.keys[kbase:]), ends: make([]int32, len(ms))}
					for i, m := range ms {
						c.top.ends[i] = int32(m.k1 - kbase)
					}
				}
			}
			return nil
		default:
			return p.fail("want ',' or '}' in an object")
		}
	}
}

// rewrite writes again, from mark, the object of members in the order of
// their keys, each key once (its last member); with keys, it sets c.top
// to the keys written, in that order.
func (c *rawCanon) rewrite(mark int, ms []rawMember, keys bool) {
	order := c.order[:0]
	var runs []int // where each sorted run of members starts
	if len(ms) >= 64 {
		runs = append(runs, 0)
		for i := 1; i < len(ms) && len(runs) <= maxMergeRuns; i++ {
			if bytes.Compare(c.key(ms[i-1]), c.key(ms[i])) >= 0 {
				runs = append(runs, i)
			}
		}
	}
	if len(runs) > 0 && len(runs) <= maxMergeRuns {
		// A few sorted runs (a key or two out of place in a sorted
		// object): merged, the earlier run first among equal keys, so
		// that a repeated key's members stay in the order they came.
		for i := range ms {
			order = append(order, int32(i))
		}
		if cap(c.merge) < len(ms) {
			c.merge = make([]int32, len(ms))
		}
		mergeRuns(order, runs, c.merge, func(i, j int32) bool {
			return bytes.Compare(c.key(ms[i]), c.key(ms[j])) < 0
		})
	} else if len(ms) >= 64 {
		// Many: radix sorted as Canonical sorts a map's members, the
		// repeated keys' members then put in the order they came.
		keys := make([]jsonMember, len(ms))
		mo := make([]memberOrder, len(ms))
		for i := range ms {
			keys[i].k = unsafe.String(unsafe.SliceData(c.key(ms[i])), ms[i].k1-ms[i].k0)
			mo[i] = memberOrder{p: keyWord(keys[i].k, 0), i: int32(i)}
		}
		sortByWords(keys, mo, make([]memberOrder, len(ms)), 0)
		for _, o := range mo {
			order = append(order, o.i)
		}
		for i := 0; i < len(order); {
			j := i + 1
			for j < len(order) && keys[order[j]].k == keys[order[i]].k {
				j++
			}
			slices.Sort(order[i:j])
			i = j
		}
	} else {
		for i := range ms {
			order = append(order, int32(i))
		}
		slices.SortFunc(order, func(x, y int32) int {
			if d := bytes.Compare(c.key(ms[x]), c.key(ms[y])); d != 0 {
				return d
			}
			return int(x - y)
		})
	}
	c.order = order
	c.tmp = append(c.tmp[:0], c.b.Bytes()[mark:]...)
	c.b.Truncate(mark)
	c.b.WriteByte('{')
	var text strings.Builder
	var ends []int32
	if keys {
		text.Grow(len(c.keys)) // no more than all the open objects' keys
		ends = make([]int32, 0, len(order))
	}
	n := 0
	for i, o := range order {
		if i+1 < len(order) && bytes.Equal(c.key(ms[o]), c.key(ms[order[i+1]])) {
			continue // a later member of the same key wins
		}
		if n > 0 {
			c.b.WriteByte(',')
		}
		n++
		c.b.Write(c.tmp[ms[o].m0-mark : ms[o].m1-mark])
		if keys {
			text.Write(c.key(ms[o]))
			ends = append(ends, int32(text.Len()))
		}
	}
	c.b.WriteByte('}')
	if keys {
		c.top = &sortedKeys{text: text.String(), ends: ends}
	}
}

// maxMergeRuns is the most sorted runs an object's members are merged
// from; more are sorted.
const maxMergeRuns = 16

// appendCanonicalNumber writes the canonical form of the JSON number lit
// (CanonicalNumber's), without allocating for integers and plain
// decimals.
func appendCanonicalNumber(b *bytes.Buffer, lit []byte) error {
	d := lit
	neg := len(d) > 0 && d[0] == '-'
	if neg {
		d = d[1:]
	}
	if alreadyCanonical(d) {
		b.Write(lit)
		return nil
	}
	if plainInteger(unsafe.String(unsafe.SliceData(lit), len(lit))) {
		b.Write(lit)
		return nil
	}
	dot, exp := -1, false
	for i, ch := range d { // one pass: bytes.IndexAny costs more than the number on short literals
		switch ch {
		case '.':
			if dot < 0 {
				dot = i
			}
		case 'e', 'E':
			exp = true
		}
	}
	if dot < 0 || exp || dot == 0 || dot+1 == len(d) || dot > 21 {
		return appendNumberTo(b, lit)
	}
	intPart, frac := d[:dot], bytes.TrimRight(d[dot+1:], "0")
	if len(intPart) > 1 && intPart[0] == '0' || !allDigits(unsafe.String(unsafe.SliceData(intPart), len(intPart))) ||
		!allDigits(unsafe.String(unsafe.SliceData(frac), len(frac))) {
		return appendNumberTo(b, lit)
	}
	if intPart[0] == '0' {
		z := 0
		for z < len(frac) && frac[z] == '0' {
			z++
		}
		switch {
		case len(frac) == 0:
			b.WriteByte('0') // -0.0 is 0
			return nil
		case z >= 6:
			return appendNumberTo(b, lit)
		}
	}
	if neg {
		b.WriteByte('-')
	}
	b.Write(intPart)
	if len(frac) > 0 {
		b.WriteByte('.')
		b.Write(frac)
	}
	return nil
}

// appendNumberTo writes lit's canonical form (CanonicalNumber) to b.
func appendNumberTo(b *bytes.Buffer, lit []byte) error {
	out, err := appendNumber(b.AvailableBuffer(), unsafe.String(unsafe.SliceData(lit), len(lit)))
	if err != nil {
		return err
	}
	b.Write(out)
	return nil
}

// alreadyCanonical reports whether the digits d of a number (its sign
// cut) are their own canonical form, as most numbers a client sends are:
// an integer of at most 21 digits, or a decimal of at most 21 digits
// before the dot and a fraction not ending in 0, neither with a leading
// zero. One pass over d: the general path (appendCanonicalNumber's) takes
// several, which on an array of numbers cost a third of the call.
func alreadyCanonical[T string | []byte](d T) bool {
	n := len(d)
	if n == 0 || d[0] < '1' || d[0] > '9' {
		return false
	}
	dot := -1
	for i := 1; i < n; i++ {
		switch ch := d[i]; {
		case ch >= '0' && ch <= '9':
		case ch == '.' && dot < 0:
			dot = i
		default:
			return false
		}
	}
	if dot < 0 {
		return n <= 21
	}
	return dot <= 21 && dot+1 < n && d[n-1] != '0'
}

// SplitJSONObject reads the JSON object at the start of data (after
// spaces) into its members' values as they are written, without decoding
// them: each value is a subslice of data (not a copy), checked as
// ParseJSON checks it. Keys are decoded as ParseJSON decodes them; a
// repeated key keeps its last value. It returns the index in data after
// the object, for the caller to say what may follow it, and the error
// ParseJSON would give for the object, or "want a JSON object" when
// data holds another value.
func SplitJSONObject(data []byte) (map[string]json.RawMessage, int, error) {
	p := jsonParser{data: data}
	p.space()
	if p.i >= len(p.data) || p.data[p.i] != '{' {
		if err := CheckJSON(data); err != nil {
			return nil, 0, err
		}
		return nil, 0, errors.New("want a JSON object")
	}
	start := p.i
	out := map[string]json.RawMessage{}
	p.i++
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		return out, p.i + 1, nil
	}
	for {
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			break
		}
		k, err := p.str()
		if err != nil {
			break
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			break
		}
		p.i++
		p.space()
		v0 := p.i
		if p.skip(1) != nil {
			break
		}
		out[k] = json.RawMessage(p.data[v0:p.i:p.i])
		p.space()
		if p.i >= len(p.data) {
			break
		}
		switch p.data[p.i] {
		case ',':
			p.i++
			continue
		case '}':
			return out, p.i + 1, nil
		}
		break
	}
	// Malformed: ParseJSON words the error.
	q := jsonParser{data: data, i: start}
	if _, err := q.value(0); err != nil {
		return nil, 0, err
	}
	return nil, 0, p.fail("invalid object") // not reached: skip accepts what value accepts
}

// maxAsIs is the longest object or array text rawCanonicalAsIs looks at:
// past it, the canonical writer's cost is spread over enough bytes.
const maxAsIs = 256

// rawCanonicalAsIs reports whether text, an object or array the parser
// has checked, is already in the form the canonical writer gives it, so
// that it may be copied as it is: no white space; plain keys (nothing to
// escape) in strictly increasing byte order; plain strings; numbers
// already in canonical form; true, false and null; nested at most 32
// deep. It answers false for anything else, and for texts longer than
// maxAsIs, which the writer then rewrites: false is always safe.
func rawCanonicalAsIs(text string) bool {
	if len(text) > maxAsIs {
		return false
	}
	i, ok := asIsValue(text, 0, 0)
	return ok && i == len(text)
}

// asIsValue scans the value at t[i:] as rawCanonicalAsIs checks it and
// returns where it ends.
func asIsValue(t string, i, depth int) (int, bool) {
	if i >= len(t) || depth > 32 {
		return i, false
	}
	switch c := t[i]; c {
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i++
		if i < len(t) && t[i] == closer {
			return i + 1, true
		}
		prev, first := "", true
		for {
			if c == '{' {
				k, end, ok := asIsString(t, i)
				if !ok || !first && k <= prev || end >= len(t) || t[end] != ':' {
					return i, false
				}
				prev, first = k, false
				i = end + 1
			}
			var ok bool
			if i, ok = asIsValue(t, i, depth+1); !ok || i >= len(t) {
				return i, false
			}
			switch t[i] {
			case ',':
				i++
			case closer:
				return i + 1, true
			default:
				return i, false
			}
		}
	case '"':
		_, end, ok := asIsString(t, i)
		return end, ok
	case 't':
		return i + 4, strings.HasPrefix(t[i:], "true")
	case 'f':
		return i + 5, strings.HasPrefix(t[i:], "false")
	case 'n':
		return i + 4, strings.HasPrefix(t[i:], "null")
	}
	j := i
	if t[j] == '-' {
		j++
	}
	end := j
	for end < len(t) && (t[end] >= '0' && t[end] <= '9' || t[end] == '.' || t[end] == 'e' || t[end] == 'E' || t[end] == '+' || t[end] == '-') {
		end++
	}
	return end, alreadyCanonical(t[j:end])
}

// asIsString returns the plain string quoted at t[i] and where its
// closing quote ends.
func asIsString(t string, i int) (string, int, bool) {
	if i >= len(t) || t[i] != '"' {
		return "", i, false
	}
	j := strings.IndexByte(t[i+1:], '"')
	if j < 0 {
		return "", i, false
	}
	s := t[i+1 : i+1+j]
	return s, i + j + 2, plainString(s)
}
