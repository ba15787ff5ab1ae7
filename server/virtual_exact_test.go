package server

import (
	"testing"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

// TestVirtualExactKey: the key is Python's str() of the dict
// StableToolBench's server makes of tool_input.
func TestVirtualExactKey(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"tool_input":{"length":7}}`, `{'length': 7}`},
		{`{"tool_input":{"length":"7"}}`, `{'length': '7'}`},
		{`{"tool_input":"{\"length\": \"7\"}"}`, `{'length': '7'}`},
		{`{"tool_input":{"unit":"m","length":7}}`, `{'unit': 'm', 'length': 7}`},
		{`{"tool_input":{"length":7,"unit":"m"}}`, `{'length': 7, 'unit': 'm'}`},
		{`{"tool_input":{"x":7.0,"y":1e5,"z":12345678901234567890}}`, `{'x': 7.0, 'y': 100000.0, 'z': 12345678901234567890}`},
		{`{"tool_input":{"n":null,"b":false,"l":[1,"a",{"k":true}]}}`, `{'n': None, 'b': False, 'l': [1, 'a', {'k': True}]}`},
		{`{"tool_input":{"a":1,"b":2,"a":3}}`, `{'a': 3, 'b': 2}`},
		{`{"tool_input":{"s":"it's \"q\""}}`, `{'s': 'it\'s "q"'}`},
		{`{"tool_input":{"s":"é\u0000\n"}}`, `{'s': 'é\x00\n'}`},
		{`{"tool_input":""}`, `{}`},
		{`{"tool_input":"  "}`, `{}`},
		{`{"tool_input":{}}`, `{}`},
		{`{"category":"c","tool_input":{"q":1},"api_name":"a"}`, `{'q': 1}`},
		{`{"tool_input":[1]}`, ``},
		{`{"tool_input":"[1]"}`, ``},
		{`{"tool_input":"{bad"}`, ``},
		{`{"tool_input":7}`, ``},
		{`{"other":1}`, ``},
		{`not json`, ``},
		{`[{"tool_input":{}}]`, ``},
	} {
		if got := VirtualExactKey([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.body, got, tc.want)
		}
	}
}

// FuzzVirtualExactKey: any body gives a key that reads back as a Python
// dict literal, or no key; it never panics.
func FuzzVirtualExactKey(f *testing.F) {
	for _, s := range []string{`{"tool_input":{"length":7}}`, `{"tool_input":"{\"a\": [1, 2.5, null]}"}`, `{"tool_input":{"a":{"b":{"c":"\ud800"}}}}`, `{"tool_input":""}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		k := VirtualExactKey(body)
		if k == "" {
			return
		}
		v, err := pyfmt.Parse(k, pyfmt.ParseOptions{FloatValues: true})
		if err != nil {
			t.Fatalf("key %q of %q does not read back: %v", k, body, err)
		}
		if _, ok := v.(map[string]any); !ok {
			if _, ok := v.(pyfmt.Dict); !ok {
				t.Fatalf("key %q reads back as %T, not a dict", k, v)
			}
		}
	})
}
