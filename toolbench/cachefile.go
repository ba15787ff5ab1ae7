package toolbench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	toolenv "github.com/toolenv/toolenv"
)

// cacheFileEntry is one member of a StableToolBench cache file as read:
// its key and its value as JSON, with Python's non-finite floats made
// null.
type cacheFileEntry struct {
	Key   string
	Value json.RawMessage
	// NonFinite says the value held NaN, Infinity or -Infinity.
	NonFinite bool
	// Err is why the value cannot be read; Value is nil then.
	Err error
}

// readCacheFile reads a cache file's top-level object the way Python's
// json.load reads it, member by member: NaN, Infinity and -Infinity are
// read (as null); a member whose value is not JSON is returned with its
// Err and the others still are; a repeated key keeps its last value (in
// its first place). A file that is not an object, or whose structure
// breaks (cut short), returns the members before the break and an error
// saying where it broke (with the key of the member it broke in, if any).
func readCacheFile(data []byte) (entries []cacheFileEntry, brokenKey string, err error) {
	s := &jscan{b: data}
	s.b = bytes.TrimPrefix(s.b, []byte("\xef\xbb\xbf"))
	s.ws()
	if !s.eat('{') {
		return nil, "", fmt.Errorf("not a JSON object (at byte %d)", s.i)
	}
	at := map[string]int{}
	s.ws()
	if s.eat('}') {
		return nil, "", s.trailing()
	}
	for {
		s.ws()
		if s.i >= len(s.b) {
			return entries, "", errors.New("the file ends before the object closes (cut short?)")
		}
		if s.b[s.i] != '"' {
			return entries, "", fmt.Errorf("expected a key string at byte %d", s.i)
		}
		start := s.i
		if !s.skipString() {
			return entries, "", fmt.Errorf("the key at byte %d never ends (cut short?)", start)
		}
		key, err := jsonString(s.b[start:s.i])
		if err != nil {
			return entries, "", fmt.Errorf("the key at byte %d is not a JSON string: %v", start, err)
		}
		s.ws()
		if !s.eat(':') {
			return entries, key, fmt.Errorf("expected ':' after the key at byte %d", s.i)
		}
		s.ws()
		vstart := s.i
		if !s.skipValue() {
			return entries, key, fmt.Errorf("the file ends inside this entry's value (from byte %d; cut short?)", vstart)
		}
		e := cacheFileEntry{Key: key}
		e.Value, e.NonFinite, e.Err = pythonJSON(bytes.TrimRight(s.b[vstart:s.i], " \t\n\r"))
		if i, seen := at[key]; seen {
			entries[i] = e
		} else {
			at[key] = len(entries)
			entries = append(entries, e)
		}
		s.ws()
		switch {
		case s.eat(','):
		case s.eat('}'):
			return entries, "", s.trailing()
		case s.i >= len(s.b):
			return entries, "", errors.New("the file ends before the object closes (cut short?)")
		default:
			return entries, "", fmt.Errorf("expected ',' or '}' at byte %d", s.i)
		}
	}
}

// jsonString decodes the JSON string quoted (quotes included) as
// json.Unmarshal does; one without escapes, control characters or
// invalid UTF-8 (the common case) is its bytes.
func jsonString(quoted []byte) (string, error) {
	if inner := quoted[1 : len(quoted)-1]; plainJSONString(inner) {
		return string(inner), nil
	}
	var out string
	err := json.Unmarshal(quoted, &out)
	return out, err
}

// plainJSONString says whether the bytes between a JSON string's quotes
// decode to themselves: no escape, no control character, valid UTF-8.
func plainJSONString(inner []byte) bool {
	ascii := true
	for _, c := range inner {
		if c < 0x20 || c == '\\' || c == '"' {
			return false
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	return ascii || utf8.Valid(inner)
}

// pythonJSON checks that raw is one JSON value as Python's json.loads
// reads it and returns it as standard JSON: NaN, Infinity and -Infinity
// outside strings become null (nonFinite says some did).
func pythonJSON(raw []byte) (out json.RawMessage, nonFinite bool, err error) {
	out = raw
	if bytes.Contains(raw, []byte("NaN")) || bytes.Contains(raw, []byte("Infinity")) {
		var b bytes.Buffer
		s := &jscan{b: raw}
		last := 0
		for s.i < len(s.b) {
			switch c := s.b[s.i]; {
			case c == '"':
				if !s.skipString() {
					s.i = len(s.b)
				}
				continue
			case bytes.HasPrefix(s.b[s.i:], []byte("NaN")):
				b.Write(s.b[last:s.i])
				b.WriteString("null")
				s.i += 3
			case bytes.HasPrefix(s.b[s.i:], []byte("-Infinity")):
				b.Write(s.b[last:s.i])
				b.WriteString("null")
				s.i += 9
			case bytes.HasPrefix(s.b[s.i:], []byte("Infinity")):
				b.Write(s.b[last:s.i])
				b.WriteString("null")
				s.i += 8
			default:
				s.i++
				continue
			}
			last, nonFinite = s.i, true
		}
		if nonFinite {
			b.Write(s.b[last:])
			out = b.Bytes()
		}
	}
	if !validJSON(out) {
		var v any
		err := json.Unmarshal(out, &v)
		if err == nil {
			err = errors.New("not one JSON value")
		}
		return nil, false, fmt.Errorf("the value is not JSON: %v", err)
	}
	return out, nonFinite, nil
}

// jscan walks JSON text without decoding it.
type jscan struct {
	b []byte
	i int
}

func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jscan) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// trailing is the error for anything but space after the object.
func (s *jscan) trailing() error {
	s.ws()
	if s.i < len(s.b) {
		return fmt.Errorf("unexpected data after the object at byte %d", s.i)
	}
	return nil
}

// skipString moves past the string starting at s.i; false if it never
// ends.
func (s *jscan) skipString() bool {
	for j := s.i + 1; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			j++
		case '"':
			s.i = j + 1
			return true
		}
	}
	return false
}

// skipValue moves past the value starting at s.i without checking it
// (pythonJSON does): to the ',' or '}' that ends it at the top level.
// False if the text ends first (a value cut short).
func (s *jscan) skipValue() bool {
	depth := 0
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			if !s.skipString() {
				return false
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return true
			}
			depth--
		case ',':
			if depth == 0 {
				return true
			}
		}
		s.i++
	}
	return false
}

// entryValue reads a cache entry's value, {"error": …, "response": …}, as
// toolenv.DecodeJSON reads it into a struct of an Error any and a
// Response json.RawMessage: the error text (a string as is, other JSON
// as its encoding, null or absent as "") and the response's JSON. ok is
// false when the value is not of that shape (or its response is absent).
// raw is one JSON value (pythonJSON checked it).
func entryValue(raw []byte) (errText string, resp json.RawMessage, ok bool) {
	if errText, resp, ok := entryValueFast(raw); ok {
		return errText, resp, true
	}
	return entryValueDecoded(raw)
}

// entryValueDecoded is entryValue through encoding/json
// (toolenv.DecodeJSON), for any shape.
func entryValueDecoded(raw []byte) (errText string, resp json.RawMessage, ok bool) {
	var val struct {
		Error    any             `json:"error"`
		Response json.RawMessage `json:"response"`
	}
	if err := toolenv.DecodeJSON(raw, &val); err != nil || val.Response == nil {
		return "", nil, false
	}
	if val.Error != nil {
		if s, ok := val.Error.(string); ok {
			errText = s
		} else {
			b, _ := json.Marshal(val.Error)
			errText = string(b)
		}
	}
	return errText, val.Response, true
}

// entryValueFast is entryValue for the values StableToolBench writes: an
// object of exactly the members "error" (a string without escapes, or
// null) and "response" (any value but null), in either order, spelled
// exactly so. It reads nothing else (ok false): entryValue's decoder then
// applies encoding/json's rules (case-insensitive names, repeated members,
// escapes, null). The response is raw's own bytes, not a copy.
func entryValueFast(raw []byte) (errText string, resp json.RawMessage, ok bool) {
	s := &jscan{b: raw}
	s.ws()
	if !s.eat('{') {
		return "", nil, false
	}
	var haveErr bool
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return "", nil, false
		}
		kstart := s.i
		if !s.skipString() {
			return "", nil, false
		}
		name := s.b[kstart+1 : s.i-1]
		s.ws()
		if !s.eat(':') {
			return "", nil, false
		}
		s.ws()
		vstart := s.i
		if !s.skipValue() {
			return "", nil, false
		}
		v := bytes.TrimRight(s.b[vstart:s.i], " \t\n\r")
		switch string(name) {
		case "error":
			if haveErr || len(v) == 0 {
				return "", nil, false
			}
			haveErr = true
			switch {
			case string(v) == "null":
			case v[0] == '"' && len(v) >= 2 && plainJSONString(v[1:len(v)-1]):
				errText = string(v[1 : len(v)-1])
			default:
				return "", nil, false
			}
		case "response":
			if resp != nil || len(v) == 0 || string(v) == "null" {
				return "", nil, false
			}
			resp = v
		default:
			return "", nil, false
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		if !s.eat('}') {
			return "", nil, false
		}
		s.ws()
		if s.i != len(s.b) || resp == nil {
			return "", nil, false
		}
		return errText, resp, true
	}
}

// maxJSONDepth is encoding/json's nesting limit: deeper values are not
// valid to it.
const maxJSONDepth = 10000

// validJSON reports whether b is one JSON value, surrounded by space, as
// json.Valid does (it is its faster twin, fuzzed against it: strings are
// scanned by a tight loop; as in encoding/json, bytes that are not UTF-8
// are allowed in them).
func validJSON(b []byte) bool {
	v := jsonValidator{jscan{b: b}}
	v.ws()
	if !v.value(0) {
		return false
	}
	v.ws()
	return v.i == len(v.b)
}

// jsonValidator checks JSON text as it walks it.
type jsonValidator struct{ jscan }

// seq checks the object or array at v (its opening byte first, one level
// below depth) whose elements elem checks, up to its closing byte.
func (v *jsonValidator) seq(depth int, closing byte, elem func() bool) bool {
	if depth+1 > maxJSONDepth {
		return false
	}
	v.i++
	v.ws()
	if v.i < len(v.b) && v.b[v.i] == closing {
		v.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		v.ws()
		if v.i >= len(v.b) {
			return false
		}
		switch v.b[v.i] {
		case ',':
			v.i++
			v.ws()
		case closing:
			v.i++
			return true
		default:
			return false
		}
	}
}

func (v *jsonValidator) value(depth int) bool {
	if v.i >= len(v.b) {
		return false
	}
	switch c := v.b[v.i]; {
	case c == '"':
		return v.str()
	case c == '{':
		return v.seq(depth, '}', func() bool {
			if v.i >= len(v.b) || v.b[v.i] != '"' || !v.str() {
				return false
			}
			v.ws()
			if v.i >= len(v.b) || v.b[v.i] != ':' {
				return false
			}
			v.i++
			v.ws()
			return v.value(depth + 1)
		})
	case c == '[':
		return v.seq(depth, ']', func() bool { return v.value(depth + 1) })
	case c == '-' || c >= '0' && c <= '9':
		return v.number()
	case c == 't':
		return v.literal("true")
	case c == 'f':
		return v.literal("false")
	case c == 'n':
		return v.literal("null")
	}
	return false
}

func (v *jsonValidator) literal(word string) bool {
	if !bytes.HasPrefix(v.b[v.i:], []byte(word)) {
		return false
	}
	v.i += len(word)
	return true
}

// str moves past the string at v.i (its opening quote).
func (v *jsonValidator) str() bool {
	i := v.i + 1
	for i < len(v.b) {
		c := v.b[i]
		switch {
		case c == '"':
			v.i = i + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if i+1 >= len(v.b) {
				return false
			}
			switch v.b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(v.b) {
					return false
				}
				for _, h := range v.b[i+2 : i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				i += 6
			default:
				return false
			}
		default:
			i++
		}
	}
	return false
}

// number moves past the number at v.i: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (v *jsonValidator) number() bool {
	b, i := v.b, v.i
	if b[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		digits()
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	v.i = i
	return true
}
