package simulate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"unicode/utf8"
)

// object is a JSON object that keeps its members in order: API
// documentation, templates and responses are shown to models and written
// back in the order they were written, as Python's dicts keep them.
type object []member

// member is one key and value of an object.
type member struct {
	Key   string
	Value any
}

// get returns the value of key and whether it is present.
func (o object) get(key string) (any, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// tuple is a Python tuple, for Python-repr output only.
type tuple []any

// decodeOrdered decodes one JSON value into object, []any, string,
// json.Number, bool or nil, keeping object member order.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

const maxDepth = 200

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("JSON nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := object{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				o = append(o, member{k, v})
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return a, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

// fromMap converts a decoded map (arguments) to an ordered object: keys in
// the order of first, then the rest sorted.
func fromMap(m map[string]any, first []string) object {
	o := make(object, 0, len(m))
	seen := make(map[string]bool, len(m))
	for _, k := range first {
		if v, ok := m[k]; ok && !seen[k] {
			o = append(o, member{k, ordered(v)})
			seen[k] = true
		}
	}
	rest := make([]string, 0, len(m)-len(o))
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		o = append(o, member{k, ordered(m[k])})
	}
	return o
}

// ordered converts nested maps to sorted objects so that output is
// deterministic.
func ordered(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return fromMap(x, nil)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = ordered(e)
		}
		return out
	}
	return v
}

// encodeJSON writes v as compact JSON without HTML escaping. Objects keep
// their order; maps are sorted.
func encodeJSON(v any) []byte {
	var b bytes.Buffer
	writeJSON(&b, v, ",", ":")
	return b.Bytes()
}

// encodePyJSON writes v the way Python's json.dumps does by default:
// ", " and ": " separators, non-ASCII escaped.
func encodePyJSON(v any) string {
	var b bytes.Buffer
	writeJSON(&b, v, ", ", ": ")
	return asciiEscape(b.String())
}

func writeJSON(b *bytes.Buffer, v any, comma, colon string) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		writeJSONString(b, x)
	case json.Number:
		b.WriteString(x.String())
	case float64:
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case object:
		b.WriteByte('{')
		for i, m := range x {
			if i > 0 {
				b.WriteString(comma)
			}
			writeJSONString(b, m.Key)
			b.WriteString(colon)
			writeJSON(b, m.Value, comma, colon)
		}
		b.WriteByte('}')
	case map[string]any:
		writeJSON(b, fromMap(x, nil), comma, colon)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(comma)
			}
			writeJSON(b, e, comma, colon)
		}
		b.WriteByte(']')
	case tuple:
		writeJSON(b, []any(x), comma, colon)
	case json.RawMessage:
		if v, err := decodeOrdered(x); err == nil {
			writeJSON(b, v, comma, colon)
		} else {
			writeJSONString(b, string(x))
		}
	default:
		data, err := json.Marshal(x)
		if err != nil {
			writeJSONString(b, fmt.Sprint(x))
			return
		}
		b.Write(data)
	}
}

func writeJSONString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				if c < 0x20 {
					fmt.Fprintf(b, `\u%04x`, c)
				} else {
					b.WriteByte(c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\ufffd")
		} else if r == '\u2028' || r == '\u2029' {
			fmt.Fprintf(b, `\u%04x`, r)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// asciiEscape escapes every non-ASCII character of JSON text as \uXXXX
// (surrogate pairs above the BMP), as Python's ensure_ascii does. It is
// applied to whole JSON texts: non-ASCII only occurs inside strings.
func asciiEscape(s string) string {
	var b bytes.Buffer
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}
