package toolbench

import (
	"bytes"
	"reflect"

	sjson "github.com/segmentio/encoding/json"

	toolenv "github.com/toolenv/toolenv"
)

// fastDecodeMaxDepth is the deepest nesting decodeDoc hands to
// segmentio's decoder, which recurses without a limit (a file of ten
// million '[' would exhaust the stack); deeper files go to encoding/json,
// which refuses nesting beyond 10,000 levels with an error.
const fastDecodeMaxDepth = 1000

// decodeDoc decodes one documentation file into v as toolenv.DecodeJSON
// does (numbers kept as json.Number, one value and nothing after it), with
// segmentio's decoder: decoding is most of loading ToolBench's 50,000
// APIs, and it decodes these files in about a third of encoding/json's
// time (TestDecodeDocMatchesEncodingJSON checks that both give the same
// values). A file that does not decode is decoded again by
// toolenv.DecodeJSON, so errors read as encoding/json's do.
func decodeDoc(data []byte, v any) error {
	_, err := decodeDocBy(data, v, false)
	return err
}

// decodeDocBy is decodeDoc, and tells whether the fast decoder's reading
// stood. With zeroCopy, strings, numbers and raw values the fast decoder
// reads may point into data rather than be copies.
func decodeDocBy(data []byte, v any, zeroCopy bool) (fast bool, err error) {
	if nestsAtMost(data, fastDecodeMaxDepth) {
		flags := sjson.UseNumber
		if zeroCopy {
			flags |= sjson.ZeroCopy
		}
		rest, err := sjson.Parse(data, v, flags)
		if err == nil && len(rest) == 0 {
			return true, nil
		}
		// Both decoders are meant to fail alike; should they not,
		// encoding/json's reading stands, from a fresh value.
		reflect.ValueOf(v).Elem().SetZero()
	}
	return false, toolenv.DecodeJSON(data, v)
}

// nestsAtMost reports whether the JSON text data nests arrays and objects
// at most max deep (brackets inside strings do not count). Most files
// hold fewer brackets than max in all, which bytes.Count tells at once.
func nestsAtMost(data []byte, max int) bool {
	if bytes.Count(data, []byte{'{'})+bytes.Count(data, []byte{'['}) <= max {
		return true
	}
	depth, inString := 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > max {
				return false
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return true
}
