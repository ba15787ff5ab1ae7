package toolbench

import (
	"bytes"
	"unicode/utf8"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

// ToolInputKey returns the key StableToolBench's server looks a /virtual
// request up under in its cache: str(tool_input), where tool_input is the
// request's object, or the string holding one json.loads-ed, and "" (or
// no tool_input) is {}. The key keeps the client's own key order and
// value types ("{'b': 1, 'a': '2'}"), which is how StableToolBench tells
// recorded calls apart. ok is false when body is not a JSON object or its
// tool_input is none of these (such a request is rejected anyway).
func ToolInputKey(body []byte) (key string, ok bool) {
	raw, found := lastMember(body, "tool_input")
	if !found {
		return "", false
	}
	return ToolInputKeyOf(raw)
}

// ToolInputKeyOf is ToolInputKey given the raw JSON value of the
// request's tool_input member (the last one, as json.loads keeps), or nil
// when the request has none.
func ToolInputKeyOf(raw []byte) (key string, ok bool) {
	switch {
	case raw == nil || string(raw) == "null":
		return "{}", true
	case len(raw) == 0:
		return "", false
	case !utf8.Valid(raw):
		// Python cannot read bytes that are not UTF-8: no key of
		// StableToolBench's stands for such input, and one made up here
		// would be shared with other inputs. The call keeps its own
		// canonical key.
		return "", false
	case raw[0] == '{':
		// An escaped lone surrogate is the surrogate, as json.loads
		// reads it (ReprJSON).
		k, err := pyfmt.ReprJSON(raw)
		return k, err == nil
	case raw[0] == '"':
		if notText(raw) {
			// A lone surrogate escaped in the string itself is a raw
			// surrogate in the text json.loads then reads, which
			// UnquoteJSON does not keep.
			return "", false
		}
		s, err := pyfmt.UnquoteJSON(raw)
		if err != nil {
			return "", false
		}
		t := bytes.TrimSpace(s)
		if len(t) == 0 {
			return "{}", true
		}
		if t[0] != '{' {
			return "", false
		}
		k, err := pyfmt.ReprJSON(t)
		return k, err == nil
	}
	return "", false
}

// notText reports whether JSON text holds bytes that are not UTF-8 or
// an escaped lone surrogate (\ud800 not followed by \udc00-\udfff, or
// a low surrogate alone).
func notText(b []byte) bool {
	if !utf8.Valid(b) {
		return true
	}
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return false
		}
		i += j
		if i+1 >= len(b) {
			return false
		}
		if b[i+1] != 'u' {
			i += 2 // an escape of one character (\\ among them)
			continue
		}
		switch r := hex4(b, i+2); {
		case r >= 0xdc00 && r <= 0xdfff:
			return true
		case r >= 0xd800 && r <= 0xdbff:
			if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				if lo := hex4(b, i+8); lo >= 0xdc00 && lo <= 0xdfff {
					i += 12
					continue
				}
			}
			return true
		}
		i += 2
	}
}

// hex4 reads four hexadecimal digits at b[i:], or -1.
func hex4(b []byte, i int) int {
	if i+4 > len(b) {
		return -1
	}
	n := 0
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int(c-'A'+10)
		default:
			return -1
		}
	}
	return n
}

// lastMember returns the raw value of the last member named name of the
// JSON object in body (json.loads keeps the last), nil when there is no
// such member; found is false when body is not an object.
func lastMember(body []byte, name string) (raw []byte, found bool) {
	s := &jscan{b: bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))}
	s.ws()
	if !s.eat('{') {
		return nil, false
	}
	s.ws()
	if s.eat('}') {
		return nil, true
	}
	want := `"` + name + `"`
	for {
		s.ws()
		start := s.i
		if s.i >= len(s.b) || s.b[s.i] != '"' || !s.skipString() {
			return nil, false
		}
		k := s.b[start:s.i]
		match := string(k) == want
		if !match && bytes.IndexByte(k, '\\') >= 0 {
			dk, err := pyfmt.UnquoteJSON(k)
			match = err == nil && string(dk) == name
		}
		s.ws()
		if !s.eat(':') {
			return nil, false
		}
		s.ws()
		vstart := s.i
		if !s.skipValue() {
			return nil, false
		}
		if match {
			raw = bytes.TrimRight(s.b[vstart:s.i], " \t\r\n")
		}
		s.ws()
		switch {
		case s.eat(','):
		case s.eat('}'):
			return raw, true
		default:
			return nil, false
		}
	}
}
