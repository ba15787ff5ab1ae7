package episode

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/toolenv/toolenv"
)

// argsMap is a call's arguments as an episode records them. It encodes
// to the same bytes as encoding/json gives a map[string]any, without
// its reflection, its keys radix sorted (toolenv.SortedMembers): an
// action of 60,000 keys took encoding/json 21 ms to write into the
// episode's archive, more than the step that took it.
type argsMap map[string]any

// MarshalJSON writes m as encoding/json writes a map[string]any: keys
// in byte order, strings escaped as it escapes them (HTML characters,
// U+2028 and U+2029 included, invalid UTF-8 as U+FFFD), numbers as sent;
// any other value through encoding/json itself.
func (m argsMap) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	keys, values := toolenv.SortedMembers(m)
	b := make([]byte, 0, 2+16*len(m))
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendJSONValue(b, values[i]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendJSONValue appends v as encoding/json encodes it.
func appendJSONValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		return appendJSONString(b, x), nil
	case json.Number:
		if validNumber(string(x)) {
			return append(b, x...), nil
		}
	}
	raw, err := json.Marshal(v) // everything else, and its errors, as encoding/json has them
	if err != nil {
		return nil, err
	}
	return append(b, raw...), nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes a string
// (with HTML escaping, its default).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// validNumber reports whether s is a JSON number.
func validNumber(s string) bool {
	digits := func(s string) string {
		for len(s) > 0 && s[0] >= '0' && s[0] <= '9' {
			s = s[1:]
		}
		return s
	}
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	switch {
	case s == "":
		return false
	case s[0] == '0':
		s = s[1:]
	case s[0] >= '1' && s[0] <= '9':
		s = digits(s[1:])
	default:
		return false
	}
	if len(s) >= 2 && s[0] == '.' && s[1] >= '0' && s[1] <= '9' {
		s = digits(s[2:])
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			s = s[1:]
		}
		if s == "" || s[0] < '0' || s[0] > '9' {
			return false
		}
		s = digits(s)
	}
	return s == ""
}
