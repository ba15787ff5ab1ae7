package simulate

import (
	"encoding/json"
	"testing"
)

// The expected strings were produced by CPython 3 (repr of the same
// values), so these tests pin toolenv's prompts to what StableToolBench's
// Python servers send.
func TestPyFloat(t *testing.T) {
	cases := map[float64]string{
		0.1: "0.1", 1.0: "1.0", 1e16: "1e+16", 1e15: "1000000000000000.0", 123456789.125: "123456789.125",
		1.5e-05: "1.5e-05", 0.0001: "0.0001", 1e-05: "1e-05", -2.5: "-2.5", 3.14159: "3.14159", 1e100: "1e+100",
		5e-324: "5e-324", 0.3: "0.3",
	}
	for f, want := range cases {
		if got := pyFloat(f); got != want {
			t.Errorf("pyFloat(%v) = %q, want %q", f, got, want)
		}
	}
	if got := pyNumber("5"); got != "5" {
		t.Errorf("pyNumber(5) = %q", got)
	}
	if got := pyNumber("5.0"); got != "5.0" {
		t.Errorf("pyNumber(5.0) = %q", got)
	}
	if got := pyNumber("1e3"); got != "1000.0" {
		t.Errorf("pyNumber(1e3) = %q", got)
	}
}

func TestPyString(t *testing.T) {
	cases := map[string]string{
		"plain":            `'plain'`,
		"it's":             `"it's"`,
		`say "hi"`:         `'say "hi"'`,
		`both ' and "`:     `'both \' and "'`,
		"tab\there":        `'tab\there'`,
		"new\nline":        `'new\nline'`,
		"\x00\x7f":         `'\x00\x7f'`,
		"café":             `'café'`,
		"\u00a0nbsp":       `'\xa0nbsp'`,
		"zero\u200bwidth":  `'zero\u200bwidth'`,
		"emoji 😀":          `'emoji 😀'`,
		"\ue000private":    `'\ue000private'`,
		`back\slash`:       `'back\\slash'`,
		"\u2028sep":        `'\u2028sep'`,
		"invalid \xff end": `'invalid ` + "\ufffd" + ` end'`,
	}
	for in, want := range cases {
		if got := pyString(in); got != want {
			t.Errorf("pyString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestPyReprContainers(t *testing.T) {
	v := object{
		{"a", []any{json.Number("1"), json.Number("2.0"), nil, true}},
		{"b", tuple{"x"}},
		{"c", tuple{"x", "y"}},
	}
	want := `{'a': [1, 2.0, None, True], 'b': ('x',), 'c': ('x', 'y')}`
	if got := pyRepr(v); got != want {
		t.Errorf("pyRepr = %s, want %s", got, want)
	}
	m := map[string]any{"z": "1", "a": map[string]any{"k": false}}
	if got := pyRepr(m); got != `{'a': {'k': False}, 'z': '1'}` {
		t.Errorf("pyRepr(map) = %s", got)
	}
}
