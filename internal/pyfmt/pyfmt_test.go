package pyfmt

import (
	"encoding/json"
	"testing"
)

// The expected strings below were printed by CPython 3 (repr, json.dumps
// and str of a dict) for the same inputs.

func TestFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{100, "100.0"},
		{1e16, "1e+16"},
		{1.5e-05, "1.5e-05"},
		{0.0001, "0.0001"},
		{123456789012345.6, "123456789012345.6"},
		{1234567890123456.7, "1234567890123456.8"},
		{-0.5, "-0.5"},
		{2.5e-300, "2.5e-300"},
		{0.30000000000000004, "0.30000000000000004"},
		{5e-324, "5e-324"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Float(tt.in); got != tt.want {
				t.Errorf("Float(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNumber(t *testing.T) {
	tests := map[string]string{"500": "500", "500.0": "500.0", "1e2": "100.0", "-0": "0", "007": "7", "-12": "-12", "12345678901234567890": "12345678901234567890"}
	for in, want := range tests {
		if got := Number(in); got != want {
			t.Errorf("Number(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReprString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"it's", `"it's"`},
		{`say "hi"`, `'say "hi"'`},
		{`both ' and "`, `'both \' and "'`},
		{"tab\there\nnl", `'tab\there\nnl'`},
		{"café \u00a0nb", `'café \xa0nb'`},
		{"zw\u200b", `'zw\u200b'`},
		{"\x7f\x01", `'\x7f\x01'`},
		{"emoji 😀", `'emoji 😀'`},
		{`back\slash`, `'back\\slash'`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := ReprString(tt.in); got != tt.want {
				t.Errorf("ReprString(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestJSONDumps(t *testing.T) {
	in := `{"a":"café 😀","b":[1,2.50,1e20,null,true],"c":{"x":"\"q\"\n"}}`
	want := `{"a": "caf\u00e9 \ud83d\ude00", "b": [1, 2.5, 1e+20, null, true], "c": {"x": "\"q\"\n"}}`
	got, err := JSONDumps([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("JSONDumps:\n got %s\nwant %s", got, want)
	}
	if _, err := JSONDumps([]byte(`{"a":1} x`)); err == nil {
		t.Error("trailing data accepted")
	}
}

func TestReprOrdered(t *testing.T) {
	var o Ordered
	o.Set("name", "Finish")
	o.Set("arguments", "{\n  \"a\": \"it's\"\n}")
	o.Set("response", "")
	want := `{'name': 'Finish', 'arguments': '{\n  "a": "it\'s"\n}', 'response': ''}`
	if got := Repr(&o); got != want {
		t.Errorf("Repr = %s\nwant %s", got, want)
	}
	if got := Str([]any{json.Number("1"), "a", nil, true, map[string]any{"k": json.Number("2.0")}}); got != `[1, 'a', None, True, {'k': 2.0}]` {
		t.Errorf("Str(list) = %s", got)
	}
}

func TestFormat(t *testing.T) {
	got := Format("Query:\n{query}\nAnswer:\n{answer} {{x}} {missing}", map[string]string{"query": "q", "answer": "{a}"})
	if want := "Query:\nq\nAnswer:\n{a} {x} {missing}"; got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
}
