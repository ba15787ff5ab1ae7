package pyfmt

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func TestDecodeRepaired(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		opt      ParseOptions
		want     any
		repaired bool
		err      string // part of the error; "" for none
	}{
		{"JSON", `{"a": [1, 2.50]}`, ParseOptions{}, map[string]any{"a": []any{json.Number("1"), json.Number("2.50")}}, false, ""},
		{"trailing commas", "{\"a\": [1, 2,\n], }", ParseOptions{}, map[string]any{"a": []any{json.Number("1"), json.Number("2")}}, true, ""},
		{"Python dict", `{'a': True, 'b': None, 'c': 2.50}`, ParseOptions{}, map[string]any{"a": true, "b": nil, "c": json.Number("2.50")}, true, ""},
		{"Python floats as json.loads made them", `{'c': 2.50}`, ParseOptions{FloatValues: true}, map[string]any{"c": json.Number("2.5")}, true, ""},
		{"Python calls", `[f(a=1)]`, ParseOptions{Calls: true}, []any{&Call{Name: "f", Keywords: map[string]any{"a": json.Number("1")}, Order: []string{"a"}}}, true, ""},
		{"calls need Calls", `[f(a=1)]`, ParseOptions{}, nil, false, "invalid character"},
		{"the error is the JSON one, after the commas", `{"a": 1,, }`, ParseOptions{}, nil, false, `invalid character '}' looking for beginning of object key`},
		{"trailing data", `{"a": 1} {"b": 2}`, ParseOptions{}, nil, false, "unexpected data after the JSON value"},
		{"empty", ``, ParseOptions{}, nil, false, "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, repaired, err := DecodeRepaired(tt.in, tt.opt)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("DecodeRepaired(%q) = %v, %v, %v; want an error containing %q", tt.in, v, repaired, err, tt.err)
				}
				if v != nil || repaired {
					t.Errorf("DecodeRepaired(%q) failed with %v, %v", tt.in, v, repaired)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeRepaired(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(v, tt.want) || repaired != tt.repaired {
				t.Errorf("DecodeRepaired(%q) = %#v, %v; want %#v, %v", tt.in, v, repaired, tt.want, tt.repaired)
			}
		})
	}
}

// FuzzDecodeRepaired: DecodeRepaired never panics; it reads valid JSON
// as toolenv.DecodeJSON does, unrepaired; what it repairs, JSON rejects;
// and when it fails, so does Parse.
func FuzzDecodeRepaired(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2,],}`, `{'a': (1,)}`, `[f(a=1)]`, `{"a": 1} x`, `[1,,]`, `"\ud800"`, `{"a": ",]"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, opt := range []ParseOptions{{}, {Calls: true, FloatValues: true}} {
			v, repaired, err := DecodeRepaired(s, opt)
			var want any
			jerr := toolenv.DecodeJSON([]byte(s), &want)
			switch {
			case jerr == nil:
				if err != nil || repaired || !reflect.DeepEqual(v, want) {
					t.Fatalf("DecodeRepaired(%q) = %#v, %v, %v; DecodeJSON reads %#v", s, v, repaired, err, want)
				}
			case err == nil:
				if !repaired {
					t.Fatalf("DecodeRepaired(%q) read %#v from text JSON rejects without saying it repaired it", s, v)
				}
			default:
				if _, perr := Parse(s, opt); perr == nil {
					t.Fatalf("DecodeRepaired(%q) failed (%v) where Parse reads it", s, err)
				}
			}
		}
	})
}
