package toolbench

import (
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func TestParsePyLiteral(t *testing.T) {
	tests := []struct{ in, wantJSON string }{
		{`{}`, `{}`},
		{`{'query': 'messi', 'limit': 5}`, `{"limit":5,"query":"messi"}`},
		{`{'a': True, 'b': False, 'c': None}`, `{"a":true,"b":false,"c":null}`},
		{`{'f': 1.5, 'g': 1e+20, 'h': -2.0, 'i': 1e-05}`, `{"f":1.5,"g":100000000000000000000,"h":-2,"i":0.00001}`},
		{`{"it's": "say \"hi\"", 'p': 'a\\b\n\tc'}`, `{"it's":"say \"hi\"","p":"a\\b\n\tc"}`},
		{`{'u': 'caf\xe9 \u4e2d \U0001f600'}`, `{"u":"café 中 😀"}`},
		{`{'l': [1, 'x', [], (2, 3), (4,)], 'd': {'n': {}}}`, `{"d":{"n":{}},"l":[1,"x",[],[2,3],[4]]}`},
		{`{'big': 123456789012345678901234567890}`, `{"big":123456789012345678901234567890}`},
		{`{'raw': 'é中'}`, `{"raw":"é中"}`},
		{` { 'sp' :  1 , } `, `{"sp":1}`},
		{`{1: 'int key'}`, `{"1":"int key"}`},
	}
	for _, tt := range tests {
		v, err := ParsePyLiteral(tt.in)
		if err != nil {
			t.Errorf("ParsePyLiteral(%s): %v", tt.in, err)
			continue
		}
		got, _ := toolenv.Canonical(v)
		want, _ := toolenv.CanonicalizeJSON([]byte(tt.wantJSON))
		if string(got) != string(want) {
			t.Errorf("ParsePyLiteral(%s) = %s, want %s", tt.in, got, want)
		}
	}
	for _, bad := range []string{``, `{`, `{'a' 1}`, `{'a': inf}`, `{'a': nan}`, `{'a': -inf}`, `{1, 2}`, `'unterminated`, `{'a': 1} extra`, `[1 2]`, `{'a': Truex}`, `'\x4'`} {
		if v, err := ParsePyLiteral(bad); err == nil {
			t.Errorf("ParsePyLiteral(%q) = %v, want an error", bad, v)
		}
	}
}

func TestPyRepr(t *testing.T) {
	tests := []struct {
		json string
		want string
	}{
		{`{"query":"messi","limit":5}`, `{'limit': 5, 'query': 'messi'}`},
		{`{"a":true,"b":null,"c":[1,2.5,1e20,0.00001,3.0]}`, `{'a': True, 'b': None, 'c': [1, 2.5, 1e+20, 1e-05, 3.0]}`},
		{`{"q":"it's"}`, `{'q': "it's"}`},
		{`{"q":"it's \"x\""}`, `{'q': 'it\'s "x"'}`},
		{`{"q":"tab\there\u0001\u00e9\u200b"}`, `{'q': 'tab\there\x01é\u200b'}`},
	}
	for _, tt := range tests {
		var v any
		if err := toolenv.DecodeJSON([]byte(tt.json), &v); err != nil {
			t.Fatal(err)
		}
		if got := PyRepr(v); got != tt.want {
			t.Errorf("PyRepr(%s) = %s, want %s", tt.json, got, tt.want)
		}
	}
}
