package pyfmt

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestOrderedDecoder(t *testing.T) {
	nested := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name string
		dec  OrderedDecoder
		in   string
		want string // Repr of the value; "" for an error
	}{
		{"repeated key kept each time", OrderedDecoder{}, `{"b": 1, "a": 2, "b": 3}`, `{'b': 1, 'a': 2, 'b': 3}`},
		{"unique: first place, last value", OrderedDecoder{Unique: true}, `{"b": 1, "a": 2, "b": 3}`, `{'b': 3, 'a': 2}`},
		{"unique nested", OrderedDecoder{Unique: true}, `[{"x": {"k": 1, "k": [], "j": 0}}]`, `[{'x': {'k': [], 'j': 0}}]`},
		{"empty containers", OrderedDecoder{}, `{"a": {}, "b": []}`, `{'a': {}, 'b': []}`},
		{"scalar at the limit", OrderedDecoder{MaxDepth: 2}, `[[1]]`, `[[1]]`},
		{"scalar past the limit", OrderedDecoder{MaxDepth: 2}, `[[[1]]]`, ""},
		{"container at the limit", OrderedDecoder{MaxDepth: 2}, `[[[]]]`, `[[[]]]`},
		{"default limit 256", OrderedDecoder{}, nested(257), `` + strings.Repeat("[", 257) + strings.Repeat("]", 257)},
		{"default limit 256 exceeded", OrderedDecoder{}, nested(258), ""},
		{"larger limit", OrderedDecoder{MaxDepth: 1000}, nested(300), strings.Repeat("[", 300) + strings.Repeat("]", 300)},
		{"trailing data", OrderedDecoder{}, `{"a": 1} x`, ""},
		{"truncated", OrderedDecoder{Unique: true}, `{"a":`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := tt.dec.Decode([]byte(tt.in))
			if tt.want == "" {
				if err == nil {
					t.Fatalf("Decode(%q) = %s, want an error", tt.in, Repr(v))
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode(%q): %v", tt.in, err)
			}
			if got := Repr(v); got != tt.want {
				t.Errorf("Decode(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestOrderedDecoderPrefix(t *testing.T) {
	v, end, err := OrderedDecoder{MaxDepth: 1, Unique: true}.DecodePrefix(`{"a": 1, "a": 2} {"b"`)
	if err != nil || end != 16 || Repr(v) != `{'a': 2}` {
		t.Errorf("DecodePrefix = %v, %d, %v", v, end, err)
	}
	if _, _, err := (OrderedDecoder{MaxDepth: 1}).DecodePrefix(`[[1]] tail`); err == nil {
		t.Error("DecodePrefix read a value nested past MaxDepth")
	}
}

// FuzzOrderedDecoder: Decode accepts what encoding/json accepts (but for
// nesting past MaxDepth) and reads the same values in document order;
// Unique keeps each key once with the value encoding/json keeps; and
// DecodePrefix reads the same value and stops after it.
func FuzzOrderedDecoder(f *testing.F) {
	for _, s := range []string{
		`{"b": [1, {"x": null}], "a": "s", "b": 2.0}`, `[]`, `{}`, `"\u00e9\ud83d"`, `1e400`, `{"a":1,}`,
		`[1,]`, `{"a" 1}`, `nul`, `[` + strings.Repeat(`{"k":[`, 40) + `0` + strings.Repeat(`]}`, 40) + `]`, ` 1 2`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, dec := range []OrderedDecoder{{}, {Unique: true}, {MaxDepth: 3}, {MaxDepth: 3, Unique: true}} {
			v, err := dec.Decode([]byte(s))
			valid := json.Valid([]byte(s))
			if err != nil {
				if valid && !strings.Contains(err.Error(), "nested too deeply") {
					t.Fatalf("%+v.Decode(%q): %v, but encoding/json accepts it", dec, s, err)
				}
				continue
			}
			if !valid {
				t.Fatalf("%+v.Decode(%q) = %s, but encoding/json rejects it", dec, s, Repr(v))
			}
			var want any
			d := json.NewDecoder(bytes.NewReader([]byte(s)))
			d.UseNumber()
			if err := d.Decode(&want); err != nil {
				t.Fatal(err)
			}
			if got := plain(v); !reflect.DeepEqual(got, want) {
				t.Fatalf("%+v.Decode(%q) = %#v, encoding/json reads %#v", dec, s, got, want)
			}
			if dec.Unique && repeatsKey(v) {
				t.Fatalf("%+v.Decode(%q) = %s repeats a key", dec, s, Repr(v))
			}
			pv, end, err := dec.DecodePrefix(s)
			if err != nil || strings.TrimSpace(s[end:]) != "" || !reflect.DeepEqual(pv, v) {
				t.Fatalf("%+v.DecodePrefix(%q) = %s, %d, %v; Decode read %s", dec, s, Repr(pv), end, err, Repr(v))
			}
		}
	})
}

// plain turns Dicts into maps, the last value of a repeated key winning,
// as encoding/json decodes.
func plain(v any) any {
	switch x := v.(type) {
	case Dict:
		m := make(map[string]any, len(x))
		for _, it := range x {
			m[it.Key] = plain(it.Value)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

func repeatsKey(v any) bool {
	switch x := v.(type) {
	case Dict:
		seen := map[string]bool{}
		for _, it := range x {
			if seen[it.Key] || repeatsKey(it.Value) {
				return true
			}
			seen[it.Key] = true
		}
	case []any:
		for _, e := range x {
			if repeatsKey(e) {
				return true
			}
		}
	}
	return false
}
