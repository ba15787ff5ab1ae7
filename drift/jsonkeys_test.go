package drift

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRenameKeys(t *testing.T) {
	tests := []struct {
		name, in, path, from, to, want string
	}{
		{"top level, order and spacing kept", `{ "b": 1,  "a": [1, 2.50] }`, "", "a", "z", `{ "b": 1,  "z": [1, 2.50] }`},
		{"in array elements", `{"results":[{"isbn":"1"},{"isbn":"2","x":{"isbn":3}}]}`, "results[]", "isbn", "code", `{"results":[{"code":"1"},{"code":"2","x":{"isbn":3}}]}`},
		{"top-level array", `[{"a":1},{"a":2}]`, "[]", "a", "b", `[{"b":1},{"b":2}]`},
		{"nested object", `{"data":{"item":{"k":true}}}`, "data.item", "k", "key", `{"data":{"item":{"key":true}}}`},
		{"escaped key", `{"caf\u00e9":1}`, "", "café", "cafe", `{"cafe":1}`},
		{"target exists: left alone", `{"a":1,"b":2}`, "", "a", "b", `{"a":1,"b":2}`},
		{"other path untouched", `{"a":{"a":1}}`, "x", "a", "b", `{"a":{"a":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := renameKeys([]byte(tt.in), tt.path, tt.from, tt.to)
			if !ok || string(got) != tt.want {
				t.Errorf("got %s (%v), want %s", got, ok, tt.want)
			}
		})
	}
	if _, ok := renameKeys([]byte(`{"a":1`), "", "a", "b"); ok {
		t.Error("truncated JSON accepted")
	}
}

// FuzzRenameKeys checks that renaming never breaks JSON, only ever
// changes the key asked for, and is undone by the reverse rename.
func FuzzRenameKeys(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[{"a":{"b":[1,2]}},{"a":null}]`, `{"results":[{"a":"x\"y"}]}`, `"text"`, `3.5e10`, `{"a":1,"b":2}`} {
		f.Add(s, "a", "")
		f.Add(s, "a", "[]")
		f.Add(s, "a", "results[]")
	}
	f.Fuzz(func(t *testing.T, in, key, path string) {
		if !json.Valid([]byte(in)) || key == "" || key == "zz_new" {
			return
		}
		out, ok := renameKeys([]byte(in), path, key, "zz_new")
		if !ok {
			t.Fatalf("valid JSON %q rejected", in)
		}
		if !json.Valid(out) {
			t.Fatalf("%q became invalid JSON %q", in, out)
		}
		if strings.Contains(in, "zz_new") {
			return // the reverse rename would touch keys that were there before
		}
		back, ok := renameKeys(out, path, "zz_new", key)
		if !ok || string(back) != in {
			t.Fatalf("%q → %q → %q", in, out, back)
		}
	})
}
