package server

import (
	"strings"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

// VirtualExactKey returns the key StableToolBench's cache files give the
// call in a /virtual body: str() of the dict json.loads makes of
// tool_input (the object, or the JSON text a string holds) — its members
// in the client's order, a repeated key once where it first stood with
// its last value, values typed as sent and written as Python writes them
// ("{'length': 7}" and "{'length': '7'}" differ). An empty string is
// "{}", as for StableToolBench. It returns "" when tool_input is missing
// or not a JSON object; such a call is keyed canonically only.
func VirtualExactKey(body []byte) string {
	top, err := pyfmt.OrderedDecoder{Unique: true}.Decode(body)
	if err != nil {
		return ""
	}
	obj, ok := top.(pyfmt.Dict)
	if !ok {
		return ""
	}
	ti, ok := obj.Get("tool_input")
	if !ok {
		return ""
	}
	if s, isString := ti.(string); isString {
		s = strings.TrimSpace(s)
		if s == "" {
			return "{}"
		}
		if s[0] != '{' {
			return ""
		}
		if ti, err = (pyfmt.OrderedDecoder{Unique: true}).Decode([]byte(s)); err != nil {
			return ""
		}
	}
	if _, ok := ti.(pyfmt.Dict); !ok {
		return ""
	}
	return pyfmt.Repr(ti)
}
