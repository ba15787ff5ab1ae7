package toolbench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// compactRef is what compactJSON gave before its fast way:
// encoding/json.Compact, or the text itself when that fails.
func compactRef(raw []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}

var compactCases = []string{
	`{"a": 1, "b": [1, 2, {"c": "d e"}]}`,
	"{\n  \"results\": [\n    {\"name\": \"x\\\"y\", \"n\": -1.5e3}\n  ],\n  \"ok\": true\n}",
	` "a string with  spaces \\ and \" quotes" `,
	"{\"tab\":\"a\tb\"}",          // a raw control character in a string: invalid
	"{\"nl\":\"a\nb\"}",           // likewise
	`{"tab": "a\tb"}`,             // an escaped one: valid
	`{"a": 1,}`,                   // trailing comma
	`{"a": "unterminated}`,        // no closing quote
	`{"a" 1}`,                     // no colon
	`[1, 2] [3]`,                  // two values
	`nul`,                         // a bare word
	`{"u": "\u00e9\ud83d\ude00"}`, // escapes
	"{\"bad\": \"\xff\xfe\"}",     // invalid UTF-8 in a string
	`{"a": 01}`,                   // a leading zero
	`{"a": 1.}`,                   // a number without digits after the point
	`{"a": "\x"}`,                 // an invalid escape
	`[` + strings.Repeat(`[`, 50) + strings.Repeat(`]`, 50) + `]`,
	`{"k": tru}`,
	"\ufeff{}", // a byte order mark
	`{}`,
	`[]`,
	`""`,
	`  123  `,
}

// TestCompactJSONMatchesEncodingJSON: the builder's fast compaction gives
// exactly encoding/json.Compact's text, or the input when that rejects it.
// A builder told its raw values are valid JSON (LoadCollection's, whose
// docs a decoder read) gives the same for every valid text.
func TestCompactJSONMatchesEncodingJSON(t *testing.T) {
	b, trusting := newBuilder(1), newBuilder(1)
	trusting.validJSON = true
	for _, c := range compactCases {
		if got, want := b.compactJSON(json.RawMessage(c)), compactRef([]byte(c)); !bytes.Equal(got, want) {
			t.Errorf("compactJSON(%q) = %q, want %q", c, got, want)
		}
		if json.Valid([]byte(c)) {
			if got, want := trusting.compactJSON(json.RawMessage(c)), compactRef([]byte(c)); !bytes.Equal(got, want) {
				t.Errorf("compactJSON(%q) of valid JSON = %q, want %q", c, got, want)
			}
		}
	}
}

func FuzzCompactJSON(f *testing.F) {
	for _, c := range compactCases {
		f.Add(c)
	}
	b, trusting := newBuilder(1), newBuilder(1)
	trusting.validJSON = true
	f.Fuzz(func(t *testing.T, c string) {
		if got, want := b.compactJSON(json.RawMessage(c)), compactRef([]byte(c)); !bytes.Equal(got, want) {
			t.Fatalf("compactJSON(%q) = %q, want %q", c, got, want)
		}
		if json.Valid([]byte(c)) {
			if got, want := trusting.compactJSON(json.RawMessage(c)), compactRef([]byte(c)); !bytes.Equal(got, want) {
				t.Fatalf("compactJSON(%q) of valid JSON = %q, want %q", c, got, want)
			}
		}
	})
}
