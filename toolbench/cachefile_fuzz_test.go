package toolbench

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzReadCacheFile: reading a cache file never panics; every entry it
// returns without an error holds one JSON value; a file that is standard
// JSON is read exactly as encoding/json reads it (same keys, same value
// bytes, the last of a repeated key); and a file that differs from one
// only by NaN/Infinity/-Infinity values is read with those values null.
func FuzzReadCacheFile(f *testing.F) {
	for _, s := range []string{
		`{}`, ` {"{'a': 1}": {"error": "", "response": "x"}} `,
		`{"{'a': 1}": {"error": "", "response": {"p": NaN, "q": [Infinity, -Infinity]}}, "{'b': 2}": {"response": 1}}`,
		`{"k": 1, "k": 2}`, `{"k": [1, 2}, "j": 3}`, `{"k": {"cut": [1`, `{"a": "NaN \" Infinity"}`,
		"\xef\xbb\xbf{\"k\": null}", `{"k": }`, `[1]`, `{"k": 1} x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, _, err := readCacheFile(data)
		for _, e := range entries {
			if e.Err == nil && !json.Valid(e.Value) {
				t.Fatalf("entry %q: value %q is not JSON", e.Key, e.Value)
			}
			if e.Err != nil && e.Value != nil {
				t.Fatalf("entry %q has both an error and a value", e.Key)
			}
		}
		var std map[string]json.RawMessage
		if json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &std) != nil || !bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) {
			return
		}
		if err != nil {
			t.Fatalf("standard JSON object rejected: %v", err)
		}
		if len(entries) != len(std) {
			t.Fatalf("%d entries, encoding/json reads %d", len(entries), len(std))
		}
		for _, e := range entries {
			want, ok := std[e.Key]
			if !ok || e.Err != nil || e.NonFinite {
				t.Fatalf("entry %q: %+v; encoding/json reads %s", e.Key, e, want)
			}
			var a, b any
			if json.Unmarshal(e.Value, &a) != nil || json.Unmarshal(want, &b) != nil || !jsonEqual(a, b) {
				t.Fatalf("entry %q: %s, encoding/json reads %s", e.Key, e.Value, want)
			}
		}
	})
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
