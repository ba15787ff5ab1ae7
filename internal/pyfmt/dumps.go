package pyfmt

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Dumps returns json.dumps(v) as Python writes it by default: ", " and
// ": " separators, non-ASCII escaped as \uXXXX, numbers as Python prints
// the int or float they are (a float out of range as Infinity, which is
// not JSON, as Python does), Dicts in their order and maps with sorted
// keys, Tuples as lists. A json.RawMessage is written as the value it
// decodes to; a value of any other type as encoding/json encodes it.
func Dumps(v any) string {
	var b strings.Builder
	dumpsStyle.write(&b, v)
	return b.String()
}

// JSONDumps re-encodes the JSON text raw the way Python's json.dumps does
// by default after json.loads: object keys in the order they appear, and
// otherwise as Dumps writes values.
func JSONDumps(raw []byte) (string, error) {
	v, err := DecodeOrdered(raw)
	if err != nil {
		return "", fmt.Errorf("pyfmt: %w", err)
	}
	return Dumps(v), nil
}

// dumpsNumber is json.dumps of a number Python prints as repr: the same,
// but for the floats JSON cannot hold, which it writes as JavaScript
// does.
func dumpsNumber(repr string) string {
	switch repr {
	case "inf":
		return "Infinity"
	case "-inf":
		return "-Infinity"
	case "nan":
		return "NaN"
	}
	return repr
}

// JSONString returns s as a JSON string the way Python's json.dumps
// writes it with ensure_ascii: every non-ASCII character as \uXXXX
// (surrogate pairs above U+FFFF), a lone surrogate in the generalized
// UTF-8 that Loads keeps it in as its escape (\ud800), other invalid
// UTF-8 as \ufffd.
func JSONString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i, r := range s {
		if u, ok := SurrogateAt(s, i); ok {
			fmt.Fprintf(&b, `\u%04x`, u) // a lone surrogate, as Loads keeps it
			continue
		}
		if r == utf8.RuneError && i > 0 && isSurrogateTail(s, i) {
			continue
		}
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || r == 0x7f: // json.dumps escapes all but ' ' to '~'
			fmt.Fprintf(&b, `\u%04x`, r)
		case r < 0x80:
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		}
	}
	b.WriteByte('"')
	return b.String()
}

// isSurrogateTail reports whether s[i] is the second or third byte of a
// lone surrogate that SurrogateAt reads (ranging over s yields U+FFFD for
// each of its bytes).
func isSurrogateTail(s string, i int) bool {
	for k := 1; k <= 2 && i-k >= 0; k++ {
		if _, ok := SurrogateAt(s, i-k); ok {
			return true
		}
	}
	return false
}
