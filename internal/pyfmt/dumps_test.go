package pyfmt

import (
	"encoding/json"
	"testing"
)

func TestJSONDumps(t *testing.T) {
	in := `{"a":"café 😀","b":[1,2.50,1e20,null,true],"c":{"x":"\"q\"\n\b\f"}}`
	want := `{"a": "caf\u00e9 \ud83d\ude00", "b": [1, 2.5, 1e+20, null, true], "c": {"x": "\"q\"\n\b\f"}}`
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

func TestDumps(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{Dict{{Key: "error", Value: ""}, {Key: "response", Value: Tuple{json.Number("1"), "é"}}}, `{"error": "", "response": [1, "\u00e9"]}`},
		{map[string]any{"b": 1, "a": nil}, `{"a": null, "b": 1}`},
		{json.RawMessage(`{"z":1,"a":2}`), `{"z": 1, "a": 2}`},
		{float64(3), `3`},
		{0.5, `0.5`},
		// Python: json.dumps([json.loads("1e700"), -float("inf")]).
		{[]any{json.Number("1e700"), json.Number("-1e700")}, `[Infinity, -Infinity]`},
		{struct {
			A int `json:"a"`
		}{1}, `{"a": 1}`},
	}
	for _, tt := range tests {
		if got := Dumps(tt.in); got != tt.want {
			t.Errorf("Dumps(%#v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestDecodeOrdered(t *testing.T) {
	v, err := DecodeOrdered([]byte(` {"b": [1, {"x": null}], "a": "s", "b": 2.0} `))
	if err != nil {
		t.Fatal(err)
	}
	want := Dict{{Key: "b", Value: []any{json.Number("1"), Dict{{Key: "x", Value: nil}}}}, {Key: "a", Value: "s"}, {Key: "b", Value: json.Number("2.0")}}
	if Repr(v) != Repr(want) {
		t.Errorf("DecodeOrdered = %s, want %s", Repr(v), Repr(want))
	}
	if got, _ := v.(Dict).Get("a"); got != "s" {
		t.Errorf("Get(a) = %v", got)
	}
	if _, ok := v.(Dict).Get("missing"); ok {
		t.Error("Get(missing) found a value")
	}
	v, end, err := DecodeOrderedPrefix(`{"a": 1} and more`)
	if err != nil || end != 8 || Repr(v) != `{'a': 1}` {
		t.Errorf("DecodeOrderedPrefix = %v, %d, %v", v, end, err)
	}
	for _, bad := range []string{`{"a": 1} x`, `{"a":`, `[1]]`} {
		if _, err := DecodeOrdered([]byte(bad)); err == nil {
			t.Errorf("DecodeOrdered(%q) succeeded", bad)
		}
	}
	deep := make([]byte, 0, 600)
	for range 300 {
		deep = append(deep, '[')
	}
	for range 300 {
		deep = append(deep, ']')
	}
	if _, err := DecodeOrdered(deep); err == nil {
		t.Error("300 nested lists decoded; want the depth limit")
	}
}
