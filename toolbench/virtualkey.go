package toolbench

import (
	"bytes"

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
	switch {
	case raw == nil || string(raw) == "null":
		return "{}", true
	case len(raw) == 0:
		return "", false
	case raw[0] == '{':
		k, err := pyfmt.ReprJSON(raw)
		return k, err == nil
	case raw[0] == '"':
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
