package toolbench

import (
	"bytes"
	"encoding/json"
	"strings"
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

// entryValueSeeds are values of the shapes StableToolBench writes and of
// the ones its fast path must leave to encoding/json.
var entryValueSeeds = []string{
	`{"error": "", "response": "x"}`, `{"response": {"a": [1, 2.5e3, "b"] }, "error": "boom"}`,
	`{ "error" : null , "response" : 1 }`, `{"error": "", "response": null}`, `{"error": ""}`,
	`{"Error": "e", "response": "x"}`, `{"error": "a", "error": "b", "response": "x"}`,
	`{"error": "\u00e9\n", "response": "x"}`, `{"error": 42, "response": "x"}`,
	`{"error": {"code": 1}, "response": []}`, `{"error": "", "response": "x", "extra": 1}`,
	`{"error": "", "response": "x", "response": "y"}`, `{"error": "é ü", "response": "\ud800"}`,
	"{\"error\": \"\xff\", \"response\": 1}", `{"error":"","response":{}}`, `{}`, `[]`, `"s"`,
	`{"error": "", "respons\u0065": "x"}`, `{"error": true, "response": false}`,
}

// TestEntryValueAsDecoded: entryValue reads every value exactly as
// encoding/json did (same error text, same response bytes, same
// refusals), on the shapes StableToolBench writes and on the ones its
// fast path hands to encoding/json.
func TestEntryValueAsDecoded(t *testing.T) {
	for _, s := range entryValueSeeds {
		checkEntryValue(t, []byte(s))
	}
}

// FuzzEntryValue: entryValue agrees with encoding/json on any JSON value.
func FuzzEntryValue(f *testing.F) {
	for _, s := range entryValueSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		raw = bytes.TrimRight(raw, " \t\r\n")
		if !json.Valid(raw) {
			return // pythonJSON hands entryValue JSON only
		}
		checkEntryValue(t, raw)
	})
}

func checkEntryValue(t *testing.T, raw []byte) {
	t.Helper()
	e, r, ok := entryValue(raw)
	we, wr, wok := entryValueDecoded(raw)
	if e != we || !bytes.Equal(r, wr) || ok != wok {
		t.Errorf("entryValue(%s) = %q, %s, %v; encoding/json reads %q, %s, %v", raw, e, r, ok, we, wr, wok)
	}
}

// FuzzValidJSON: validJSON agrees with json.Valid on any input.
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `""`, `0`, `-0.5e+10`, `01`, `1.`, `.5`, `-`, `1e`, `true`, `tru`, `nul`, ` {"a": [1, 2, {"b": null}]} `,
		`{"a" 1}`, `{"a":1,}`, `[1,]`, `[,1]`, `"\u12G4"`, `"\x"`, "\"a\tb\"", "\"\xff\xfe\"", `"\ud800"`, `{"a":1}{`,
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		`{"error": "", "response": "{\"id\": 1, \"msg\": \"x\"}"}`, "\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}
