package fidelity

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

// Text is the text of a response that BLEU and the embeddings compare:
// the payload as the API served it — the content of a JSON string (most
// StableToolBench responses are text, often JSON in a string), any other
// JSON value as written, members in their order and non-ASCII kept — and
// the error message when there is no payload. JSON (also JSON inside a
// string) is laid out anew as Python's json.dumps lays it out by default
// (", " and ": " between members, nothing else between tokens): the
// whitespace between tokens is layout, not content, and a simulator
// writes it differently from the API.
func Text(body json.RawMessage, errMsg string) string {
	b := bytes.TrimSpace(body)
	if len(b) == 0 || string(b) == `""` || string(b) == "null" {
		return errMsg
	}
	if b[0] == '"' {
		var s string
		if json.Unmarshal(b, &s) != nil {
			return string(b)
		}
		inner := strings.TrimSpace(s)
		if inner == "" || inner[0] != '{' && inner[0] != '[' {
			return s
		}
		b = []byte(inner)
	}
	var compact bytes.Buffer
	if json.Compact(&compact, b) != nil {
		return string(b)
	}
	return pySeparators(compact.Bytes())
}

// pySeparators puts a space after every comma and colon of compact JSON
// that is not inside a string.
func pySeparators(compact []byte) string {
	var out strings.Builder
	out.Grow(len(compact) + len(compact)/8)
	inString, escaped := false, false
	for _, c := range compact {
		out.WriteByte(c)
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ',' || c == ':'):
			out.WriteByte(' ')
		}
	}
	return out.String()
}

// Envelope is a response in the {"error": ..., "response": ...} form of
// MirrorAPI's prompts and StableToolBench's server, written as Python's
// json.dumps writes it: what the judges are shown.
func Envelope(body json.RawMessage, errMsg string) string {
	var resp any = ""
	if b := bytes.TrimSpace(body); len(b) > 0 {
		if v, err := pyfmt.DecodeOrdered(b); err == nil {
			resp = v
		} else {
			resp = string(b)
		}
	}
	return pyfmt.Dumps(pyfmt.Dict{{Key: "error", Value: errMsg}, {Key: "response", Value: resp}})
}
