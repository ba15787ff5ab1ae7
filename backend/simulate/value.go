package simulate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// maxDepth bounds the nesting of response shapes.
const maxDepth = 200

// fromMap converts a decoded map (arguments) to an ordered object: keys in
// the order of first, then the rest sorted.
func fromMap(m map[string]any, first []string) pyfmt.Dict {
	o := make(pyfmt.Dict, 0, len(m))
	seen := make(map[string]bool, len(m))
	for _, k := range first {
		if v, ok := m[k]; ok && !seen[k] {
			o = append(o, pyfmt.Item{Key: k, Value: ordered(v)})
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
		o = append(o, pyfmt.Item{Key: k, Value: ordered(m[k])})
	}
	return o
}

// ordered converts nested maps to sorted objects so that output is
// deterministic.
func ordered(v any) any {
	switch x := v.(type) {
	case toolenv.RawJSON: // an argument kept as text: as the value it holds
		return ordered(toolenv.Decoded(x))
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
	writeJSON(&b, v)
	return b.Bytes()
}

func writeJSON(b *bytes.Buffer, v any) {
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
	case pyfmt.Dict:
		b.WriteByte('{')
		for i, m := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, m.Key)
			b.WriteByte(':')
			writeJSON(b, m.Value)
		}
		b.WriteByte('}')
	case toolenv.RawJSON: // an argument kept as text: as the value it holds
		writeJSON(b, toolenv.Decoded(x))
	case map[string]any:
		writeJSON(b, fromMap(x, nil))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	case pyfmt.Tuple:
		writeJSON(b, []any(x))
	case json.RawMessage:
		if v, err := pyfmt.DecodeOrdered(x); err == nil {
			writeJSON(b, v)
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
