package pyfmt

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	calls := ParseOptions{Calls: true}
	values := ParseOptions{FloatValues: true}
	tests := []struct {
		name string
		in   string
		opt  ParseOptions
		want any
	}{
		{"literals", `{'a': [1, 2.5, -3e2], "b": (True, None), 'c': 'it\'s', 'd': """x
y"""}`, calls, map[string]any{"a": []any{json.Number("1"), json.Number("2.5"), json.Number("-3e2")}, "b": []any{true, nil}, "c": "it's", "d": "x\ny"}},
		{"float values", `[-3e2, 1e5, 0.10000000000000001, 1.5, 5., .5, 7]`, values,
			[]any{json.Number("-300.0"), json.Number("100000.0"), json.Number("0.1"), json.Number("1.5"), json.Number("5.0"), json.Number("0.5"), json.Number("7")}},
		{"raw string", `r'C:\x'`, calls, `C:\x`},
		{"escapes", `'\u00e9\x41'`, calls, "éA"},
		// Python: '\n\x07\x0bA', a backslash-newline continues the line.
		{"python escapes", "'\\012\\a\\v\\x41\\q\\\nz'", ParseOptions{}, "\n\a\vA\\qz"},
		{"prefixes", `[u'a', b"b", f'c', R'\d']`, ParseOptions{}, []any{"a", "b", "c", `\d`}},
		{"underscores", `1_000`, calls, json.Number("1000")},
		{"trailing point", `5.`, calls, json.Number("5.0")},
		{"leading zeros", `[007, 00.5, 00e1]`, ParseOptions{}, []any{json.Number("7"), json.Number("0.5"), json.Number("0e1")}},
		{"out of range kept", `1e999`, ParseOptions{}, json.Number("1e999")},
		{"JSON words", `[true, false, null]`, ParseOptions{}, []any{true, false, nil}},
		// Keys as json.dumps writes them.
		{"dict keys", `{1: 'a', True: 'b', None: 'c', 2.50: 'd'}`, values, map[string]any{"1": "a", "true": "b", "null": "c", "2.5": "d"}},
		{"trailing commas", ` { 'sp' :  1 , } `, ParseOptions{}, map[string]any{"sp": json.Number("1")}},
		{"invalid UTF-8", "'a\xffb'", ParseOptions{}, "a\ufffdb"},
		// Python keeps the backslash of an unknown escape, also before a
		// non-ASCII character: '0\\Ӏ'.
		{"backslash before non-ASCII", `'0\Ӏ'`, ParseOptions{}, `0\Ӏ`},
		{"call", `[f(1, a='x', b=g(c=[2]), a=3)]`, calls, []any{&Call{Name: "f", Positional: []any{json.Number("1")},
			Keywords: map[string]any{"a": json.Number("3"), "b": &Call{Name: "g", Keywords: map[string]any{"c": []any{json.Number("2")}}, Order: []string{"c"}}},
			Order:    []string{"a", "b"}}}},
		{"dotted call", `api.v1-get(q=1)`, calls, &Call{Name: "api.v1-get", Keywords: map[string]any{"q": json.Number("1")}, Order: []string{"q"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in, tt.opt)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	bad := []string{
		``, `{`, `{'a' 1}`, `{'a': }`, `{'a': inf}`, `{'a': nan}`, `{'a': -inf}`, `{1, 2}`, `'unterminated`, `'open`,
		`{'a': 1} extra`, `[1 2]`, `[1, 2`, `{'a': Truex}`, `'\x4'`, `'\U00110000'`, `f(a=)`, `1e`, `--1`, `.`, `{[1]: 2}`,
		"'line\nbreak'", `f(1)`, `f(q == 1)`, strings.Repeat("[", 300) + strings.Repeat("]", 300),
	}
	for _, s := range bad {
		for _, opt := range []ParseOptions{{}, {Calls: true}, {FloatValues: true}} {
			if s == `f(1)` && opt.Calls {
				continue
			}
			v, err := Parse(s, opt)
			if err == nil {
				t.Errorf("Parse(%q, %+v) = %#v, want an error", s, opt, v)
				continue
			}
			var se *SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(s) {
				t.Errorf("Parse(%q) error %v is not a *SyntaxError with an offset in the text", s, err)
			}
		}
	}
	if _, err := Parse(`1e999`, ParseOptions{FloatValues: true}); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("Parse(1e999) with float values: %v, want out of range", err)
	}
}

func TestParsePrefix(t *testing.T) {
	v, n, err := ParsePrefix(`{'a': 1} and then prose`, ParseOptions{})
	if err != nil || n != 8 || !reflect.DeepEqual(v, map[string]any{"a": json.Number("1")}) {
		t.Errorf("ParsePrefix = %#v, %d, %v", v, n, err)
	}
	if _, _, err := ParsePrefix(`prose first`, ParseOptions{}); err == nil {
		t.Error("ParsePrefix read prose")
	}
}
