package pyfmt

import (
	"bytes"
	"errors"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ReprJSON returns str(json.loads(data)) as Python writes it: the JSON
// value in Python's repr, object members in the order they were written
// (a repeated key keeps its first place and its last value, as json.loads
// builds a dict), ints with their exact digits, floats as Python prints
// them. It is what StableToolBench keys its cache with: str(tool_input).
// An escaped lone surrogate (\ud800 not followed by \udc00-\udfff, or
// a low surrogate alone) is the surrogate, as json.loads reads it, and
// Python's repr writes it as its escape ('\ud800'); bytes of data that
// are not UTF-8 are each U+FFFD, as encoding/json reads them.
// It reads data in one pass; an error means data is not one JSON value
// (NaN and Infinity, which json.loads also reads, are errors here).
func ReprJSON(data []byte) (string, error) {
	r := &reprReader{s: data, surrogates: true}
	var b strings.Builder
	b.Grow(len(data) + 8)
	r.ws()
	err := r.value(&b, 0)
	if errors.Is(err, errRepeatedKey) {
		// Rare: read it again, merging repeated keys.
		r = &reprReader{s: data, surrogates: true, merge: true}
		b.Reset()
		r.ws()
		err = r.value(&b, 0)
	}
	if err != nil {
		return "", err
	}
	r.ws()
	if r.i != len(r.s) {
		return "", errors.New("unexpected data after the JSON value")
	}
	return b.String(), nil
}

// objectMerged writes the object at r as value does, but a repeated key
// is kept once, where it first stood, with the value it was last given:
// the dict json.loads builds.
func (r *reprReader) objectMerged(b *strings.Builder, depth int) error {
	type item struct {
		key   []byte
		value string
	}
	var items []item
	var seen keyIndex
	err := r.members(func(k []byte) error {
		var v strings.Builder
		if err := r.value(&v, depth+1); err != nil {
			return err
		}
		if at := seen.find(k); at >= 0 {
			items[at].value = v.String()
		} else {
			seen.add(k)
			items = append(items, item{k, v.String()})
		}
		return nil
	})
	if err != nil {
		return err
	}
	b.WriteByte('{')
	for n, it := range items {
		if n > 0 {
			b.WriteString(", ")
		}
		writeReprString(b, it.key)
		b.WriteString(": ")
		b.WriteString(it.value)
	}
	b.WriteByte('}')
	return nil
}

// members reads the object at r ('{' first): for each member its key,
// then member reads the value. It leaves r after the '}'.
func (r *reprReader) members(member func(key []byte) error) error {
	r.i++ // '{'
	r.ws()
	if r.i < len(r.s) && r.s[r.i] == '}' {
		r.i++
		return nil
	}
	for {
		r.ws()
		k, err := r.strBytes()
		if err != nil {
			return err
		}
		r.ws()
		if r.i >= len(r.s) || r.s[r.i] != ':' {
			return errBadJSON
		}
		r.i++
		r.ws()
		if err := member(k); err != nil {
			return err
		}
		r.ws()
		if r.i >= len(r.s) {
			return errBadJSON
		}
		if r.s[r.i] == '}' {
			r.i++
			return nil
		}
		if r.s[r.i] != ',' {
			return errBadJSON
		}
		r.i++
	}
}

// keyIndex holds the keys of one object read so far: scanned while they
// are few (most objects), in a map beyond, so that checking an object of
// n keys for repeats costs O(n), not O(n²) (a tool_input of 60,000 keys
// took seconds).
type keyIndex struct {
	keys [][]byte
	m    map[string]int
}

// keyIndexScan is the most keys a keyIndex scans.
const keyIndexScan = 16

// find returns the position of k among the keys added, or -1.
func (x *keyIndex) find(k []byte) int {
	if x.m != nil {
		if i, ok := x.m[string(k)]; ok {
			return i
		}
		return -1
	}
	for i, seen := range x.keys {
		if bytes.Equal(seen, k) {
			return i
		}
	}
	return -1
}

// add appends k (not yet added) and returns its position.
func (x *keyIndex) add(k []byte) int {
	x.keys = append(x.keys, k)
	n := len(x.keys) - 1
	switch {
	case x.m != nil:
		x.m[string(k)] = n
	case len(x.keys) > keyIndexScan:
		x.m = make(map[string]int, 2*len(x.keys))
		for i, key := range x.keys {
			x.m[string(key)] = i
		}
	}
	return n
}

// errRepeatedKey sends ReprJSON to the slow path that merges repeated
// keys as json.loads does.
var errRepeatedKey = errors.New("repeated object key")

var errBadJSON = errors.New("not valid JSON")

type reprReader struct {
	s []byte
	i int
	// surrogates keeps an escaped lone surrogate as the surrogate, in
	// the generalized UTF-8 (WTF-8) that writeReprString reads back,
	// and makes raw bytes that are not UTF-8 U+FFFD, so that every
	// surrogate in a string read stands for an escape; otherwise a
	// lone surrogate is U+FFFD and raw bytes are kept.
	surrogates bool
	// merge reads objects with objectMerged, which merges repeated keys
	// as json.loads does; otherwise a repeated key is errRepeatedKey.
	merge bool
}

func (r *reprReader) ws() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *reprReader) value(b *strings.Builder, depth int) error {
	if depth > maxDepth {
		return errors.New("JSON nested too deeply")
	}
	if r.i >= len(r.s) {
		return errBadJSON
	}
	switch c := r.s[r.i]; {
	case c == '{' && r.merge:
		return r.objectMerged(b, depth)
	case c == '{':
		b.WriteByte('{')
		var keys keyIndex
		err := r.members(func(k []byte) error {
			if keys.find(k) >= 0 {
				return errRepeatedKey
			}
			if keys.add(k) > 0 {
				b.WriteString(", ")
			}
			writeReprString(b, k)
			b.WriteString(": ")
			return r.value(b, depth+1)
		})
		if err != nil {
			return err
		}
		b.WriteByte('}')
		return nil
	case c == '[':
		r.i++
		b.WriteByte('[')
		r.ws()
		if r.i < len(r.s) && r.s[r.i] == ']' {
			r.i++
			b.WriteByte(']')
			return nil
		}
		for n := 0; ; n++ {
			if n > 0 {
				b.WriteString(", ")
			}
			r.ws()
			if err := r.value(b, depth+1); err != nil {
				return err
			}
			r.ws()
			if r.i >= len(r.s) {
				return errBadJSON
			}
			if r.s[r.i] == ']' {
				r.i++
				b.WriteByte(']')
				return nil
			}
			if r.s[r.i] != ',' {
				return errBadJSON
			}
			r.i++
		}
	case c == '"':
		s, err := r.strBytes()
		if err != nil {
			return err
		}
		writeReprString(b, s)
		return nil
	case c == '-' || (c >= '0' && c <= '9'):
		start := r.i
		if !r.number() {
			return errBadJSON
		}
		writeNumber(b, r.s[start:r.i])
		return nil
	}
	for _, w := range [...]struct{ json, py string }{{"true", "True"}, {"false", "False"}, {"null", "None"}} {
		if strings.HasPrefix(string(r.s[r.i:min(len(r.s), r.i+len(w.json))]), w.json) {
			r.i += len(w.json)
			b.WriteString(w.py)
			return nil
		}
	}
	return errBadJSON
}

// number moves past a JSON number, reporting whether it is one.
func (r *reprReader) number() bool {
	n, ok := scanNumber(r.s, r.i)
	if !ok || n.cut {
		return false
	}
	r.i = n.end
	return true
}

// numberScan is where the JSON number at an offset ends (scanNumber).
type numberScan struct {
	end, intEnd int  // the number's end, its integer part's end
	float       bool // it has a fraction or an exponent
	// cut: a '.' or an exponent marker follows without its digits (the
	// number ends before it: Python reads "1." as 1 and extra data).
	cut bool
}

// scanNumber reads the JSON number at s[i:] as Python's NUMBER_RE does:
// -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?. ok is false when no integer part
// starts there.
func scanNumber[S string | []byte](s S, i int) (n numberScan, ok bool) {
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if digits() == 0 {
		return n, false
	}
	n.intEnd = i
	if i < len(s) && s[i] == '.' {
		if i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
			i++
			digits()
			n.float = true
		} else {
			n.cut = true
		}
	}
	if !n.cut && i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		save := i
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			i, n.cut = save, true
		} else {
			n.float = true
		}
	}
	n.end = i
	return n, true
}

// strBytes reads a JSON string: the text between the quotes when it has no
// escapes, else the decoded text. Lone surrogates and raw bytes that are
// not UTF-8 are read as the surrogates field says.
func (r *reprReader) strBytes() ([]byte, error) {
	if r.i >= len(r.s) || r.s[r.i] != '"' {
		return nil, errBadJSON
	}
	r.i++
	start := r.i
	// The common case: no escapes.
	for r.i < len(r.s) {
		c := r.s[r.i]
		if c == '"' {
			s := r.s[start:r.i]
			r.i++
			if r.surrogates && !utf8.Valid(s) {
				s = []byte(fixUTF8(string(s)))
			}
			return s, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		r.i++
	}
	var b bytes.Buffer
	b.Write(r.s[start:r.i])
	if r.surrogates && !utf8.Valid(b.Bytes()) {
		fixed := fixUTF8(b.String())
		b.Reset()
		b.WriteString(fixed)
	}
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == '"':
			r.i++
			return b.Bytes(), nil
		case c < 0x20:
			return nil, errBadJSON
		case c == '\\':
			if r.i+1 >= len(r.s) {
				return nil, errBadJSON
			}
			r.i++
			switch e := r.s[r.i]; e {
			case '"', '\\', '/':
				b.WriteByte(e)
				r.i++
			case 'b':
				b.WriteByte('\b')
				r.i++
			case 'f':
				b.WriteByte('\f')
				r.i++
			case 'n':
				b.WriteByte('\n')
				r.i++
			case 'r':
				b.WriteByte('\r')
				r.i++
			case 't':
				b.WriteByte('\t')
				r.i++
			case 'u':
				r.i++
				u, ok := r.hex4()
				if !ok {
					return nil, errBadJSON
				}
				if utf16.IsSurrogate(u) {
					// A pair makes one character; a lone half is U+FFFD.
					save := r.i
					if r.i+1 < len(r.s) && r.s[r.i] == '\\' && r.s[r.i+1] == 'u' {
						r.i += 2
						if u2, ok := r.hex4(); ok {
							if dec := utf16.DecodeRune(u, u2); dec != utf8.RuneError {
								b.WriteRune(dec)
								continue
							}
						}
					}
					r.i = save
					if r.surrogates {
						w := surrogateBytes(u)
						b.Write(w[:])
					} else {
						b.WriteRune(utf8.RuneError)
					}
					continue
				}
				b.WriteRune(u)
			default:
				return nil, errBadJSON
			}
		case c >= utf8.RuneSelf && r.surrogates:
			u, size := utf8.DecodeRune(r.s[r.i:])
			b.WriteRune(u) // U+FFFD for a byte that is not UTF-8
			r.i += size
		default:
			b.WriteByte(c)
			r.i++
		}
	}
	return nil, errBadJSON
}

// surrogateBytes is the surrogate u (U+D800 to U+DFFF) in the
// generalized UTF-8 that encodes it as any other code point of three
// bytes (WTF-8); SurrogateAt reads it back.
func surrogateBytes(u rune) [3]byte {
	return [3]byte{0xed, 0x80 | byte(u>>6)&0x3f, 0x80 | byte(u)&0x3f}
}

// SurrogateAt returns the lone surrogate that starts at s[i:], if one
// does: Loads keeps one in the three bytes of generalized UTF-8
// (WTF-8) that surrogateBytes writes, a Python character of its own.
func SurrogateAt[S string | []byte](s S, i int) (rune, bool) {
	if i+2 < len(s) && s[i] == 0xed && s[i+1] >= 0xa0 && s[i+1] <= 0xbf && s[i+2] >= 0x80 && s[i+2] <= 0xbf {
		return 0xd000 | rune(s[i+1]&0x3f)<<6 | rune(s[i+2]&0x3f), true
	}
	return 0, false
}

// writeNumber writes Number(lit) without allocating for the common ints.
func writeNumber(b *strings.Builder, lit []byte) {
	plainInt := len(lit) > 0 && lit[0] != '-' && (lit[0] != '0' || len(lit) == 1)
	for _, c := range lit {
		if c < '0' || c > '9' {
			plainInt = false
			break
		}
	}
	if plainInt {
		b.Write(lit)
		return
	}
	b.WriteString(Number(string(lit)))
}

func (r *reprReader) hex4() (rune, bool) {
	v, ok := hex4(r.s, r.i)
	if ok {
		r.i += 4
	}
	return v, ok
}

// hex4 reads the four hex digits at s[i:] (of a \uXXXX escape).
func hex4[S string | []byte](s S, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var v rune
	for k := i; k < i+4; k++ {
		c := s[k]
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			v |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return v, true
}

// fixUTF8 replaces each byte of invalid UTF-8 with U+FFFD, as
// encoding/json decodes a string.
func fixUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // RuneError for an invalid byte
		i += size
	}
	return b.String()
}

// UnquoteJSON decodes one JSON string (with its quotes, nothing around
// them): its escapes decoded, a lone surrogate as U+FFFD, and invalid
// UTF-8 left as it is (encoding/json would make each such byte U+FFFD).
// The result may share data's memory.
func UnquoteJSON(data []byte) ([]byte, error) {
	r := &reprReader{s: data}
	s, err := r.strBytes()
	if err != nil {
		return nil, err
	}
	if r.i != len(r.s) {
		return nil, errors.New("unexpected data after the JSON string")
	}
	return s, nil
}
