package pyfmt

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The expected strings below were printed by CPython 3 (repr, json.dumps
// and str of a dict) for the same inputs, so these tests pin toolenv's
// strings to what StableToolBench's and MirrorAPI's Python code writes.

func TestFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{100, "100.0"},
		{1e16, "1e+16"},
		{1e15, "1000000000000000.0"},
		{1.5e-05, "1.5e-05"},
		{1e-05, "1e-05"},
		{0.0001, "0.0001"},
		{0.1, "0.1"},
		{0.3, "0.3"},
		{1.0, "1.0"},
		{-2.5, "-2.5"},
		{3.14159, "3.14159"},
		{123456789.125, "123456789.125"},
		{123456789012345.6, "123456789012345.6"},
		{1234567890123456.7, "1234567890123456.8"},
		{-0.5, "-0.5"},
		{2.5e-300, "2.5e-300"},
		{1e100, "1e+100"},
		{0.30000000000000004, "0.30000000000000004"},
		{5e-324, "5e-324"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Float(tt.in); got != tt.want {
				t.Errorf("Float(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNumber(t *testing.T) {
	tests := map[string]string{
		"500": "500", "500.0": "500.0", "1e2": "100.0", "1e3": "1000.0", "-0": "0", "007": "7", "-12": "-12",
		"5": "5", "5.0": "5.0", "12345678901234567890": "12345678901234567890", "1e999": "inf", "-1e999": "-inf",
	}
	for in, want := range tests {
		if got := Number(in); got != want {
			t.Errorf("Number(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReprString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `'plain'`},
		{"it's", `"it's"`},
		{`say "hi"`, `'say "hi"'`},
		{`both ' and "`, `'both \' and "'`},
		{"tab\there\nnl", `'tab\there\nnl'`},
		{"new\nline", `'new\nline'`},
		{"café \u00a0nb", `'café \xa0nb'`},
		{"\u00a0nbsp", `'\xa0nbsp'`},
		{"zw\u200b", `'zw\u200b'`},
		{"\x7f\x01", `'\x7f\x01'`},
		{"\x00\x7f", `'\x00\x7f'`},
		{"emoji 😀", `'emoji 😀'`},
		{"\ue000private", `'\ue000private'`},
		{"\u2028sep", `'\u2028sep'`},
		{`back\slash`, `'back\\slash'`},
		{"invalid \xff end", `'invalid ` + "\ufffd" + ` end'`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := ReprString(tt.in); got != tt.want {
				t.Errorf("ReprString(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestReprOrdered(t *testing.T) {
	var o Dict
	o.Set("name", "Finish")
	o.Set("arguments", "{\n  \"a\": \"it's\"\n}")
	o.Set("response", "x")
	o.Set("response", "") // replaced where it stands
	want := `{'name': 'Finish', 'arguments': '{\n  "a": "it\'s"\n}', 'response': ''}`
	if got := Repr(&o); got != want {
		t.Errorf("Repr = %s\nwant %s", got, want)
	}
	if got := Str([]any{json.Number("1"), "a", nil, true, map[string]any{"k": json.Number("2.0")}}); got != `[1, 'a', None, True, {'k': 2.0}]` {
		t.Errorf("Str(list) = %s", got)
	}
}

func TestReprContainers(t *testing.T) {
	v := Dict{
		{Key: "a", Value: []any{json.Number("1"), json.Number("2.0"), nil, true}},
		{Key: "b", Value: Tuple{"x"}},
		{Key: "c", Value: Tuple{"x", "y"}},
	}
	want := `{'a': [1, 2.0, None, True], 'b': ('x',), 'c': ('x', 'y')}`
	if got := Repr(v); got != want {
		t.Errorf("Repr = %s, want %s", got, want)
	}
	m := map[string]any{"z": "1", "a": map[string]any{"k": false}}
	if got := Repr(m); got != `{'a': {'k': False}, 'z': '1'}` {
		t.Errorf("Repr(map) = %s", got)
	}
	tests := []struct {
		in   any
		want string
	}{
		{json.RawMessage(`{"b": 1, "a": [1.50]}`), `{'b': 1, 'a': [1.5]}`},
		{json.RawMessage(`not json`), `'not json'`},
		{[]string{"a", "it's"}, `['a', "it's"]`},
		{float64(5), `5`},
		{2.5, `2.5`},
		{1e16, `1e+16`},
		{int64(-3), `-3`},
		{struct{ A int }{1}, `'{1}'`},
	}
	for _, tt := range tests {
		if got := Repr(tt.in); got != tt.want {
			t.Errorf("Repr(%#v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestFormat(t *testing.T) {
	got := Format("Query:\n{query}\nAnswer:\n{answer} {{x}} {missing}", map[string]string{"query": "q", "answer": "{a}"})
	if want := "Query:\nq\nAnswer:\n{a} {x} {missing}"; got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
}

// TestReprJSONLoneSurrogates holds ReprJSON to what Python wrote for
// JSON with escaped lone surrogates (testdata/python_str_surrogates.json,
// from a run of Python 3.11): json.loads keeps such a surrogate and str()
// writes it as its escape, in keys and values, with repeated keys merged.
func TestReprJSONLoneSurrogates(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "python_str_surrogates.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			JSON      string `json:"json"`
			PythonStr string `json:"python_str"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range doc.Cases {
		got, err := ReprJSON([]byte(c.JSON))
		if err != nil || got != c.PythonStr {
			t.Errorf("ReprJSON(%s) = %q, %v; Python wrote %q", c.JSON, got, err, c.PythonStr)
		}
	}
}

// TestReprJSONBytesNotUTF8: a byte that is not UTF-8 is U+FFFD, as
// encoding/json reads it, even where its bytes would spell a surrogate
// in WTF-8; only an escape makes a surrogate.
func TestReprJSONBytesNotUTF8(t *testing.T) {
	for in, want := range map[string]string{
		"{\"q\": \"a\xffb\"}":                        "{'q': 'a\ufffdb'}",
		"{\"q\": \"\xed\xa0\x80\"}":                  "{'q': '\ufffd\ufffd\ufffd'}",
		"{\"q\": \"\xed\xa0\x80\\n\"}":               "{'q': '\ufffd\ufffd\ufffd\\n'}",
		"{\"\xed\xa0\x80\": 1, \"\xed\xa0\x81\": 2}": "{'\ufffd\ufffd\ufffd': 2}",
	} {
		if got, err := ReprJSON([]byte(in)); err != nil || got != want {
			t.Errorf("ReprJSON(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestReprJSONManyKeys: objects with more keys than keyIndex scans are
// written in order, a repeated key (at any distance) keeps its first
// place and its last value, as json.loads builds the dict.
func TestReprJSONManyKeys(t *testing.T) {
	for _, n := range []int{3, keyIndexScan, keyIndexScan + 1, 200} {
		for _, dup := range []int{-1, 0, n / 2, n - 1} {
			var in, want strings.Builder
			in.WriteString("{")
			want.WriteString("{")
			for i := range n {
				if i > 0 {
					in.WriteString(", ")
					want.WriteString(", ")
				}
				fmt.Fprintf(&in, `"k%d": %d`, i, i)
				v := i
				if i == dup {
					v = -1
				}
				fmt.Fprintf(&want, `'k%d': %d`, i, v)
			}
			if dup >= 0 {
				fmt.Fprintf(&in, `, "k%d": -1`, dup)
			}
			in.WriteString("}")
			want.WriteString("}")
			got, err := ReprJSON([]byte(in.String()))
			if err != nil || got != want.String() {
				t.Fatalf("n=%d dup=%d: %q (%v)\nwant %q", n, dup, got, err, want.String())
			}
		}
	}
}

// TestKeyIndexIsAMapBeyondTheScan: past keyIndexScan keys, a lookup is a
// map lookup, not a scan of every key read (which made an object of n
// keys cost O(n²): 3.9 s for 60,000).
func TestKeyIndexIsAMapBeyondTheScan(t *testing.T) {
	var x keyIndex
	for i := range 10000 {
		k := []byte(fmt.Sprintf("k%d", i))
		if x.find(k) >= 0 {
			t.Fatalf("%s found before it was added", k)
		}
		if got := x.add(k); got != i {
			t.Fatalf("add(%s) = %d", k, got)
		}
		if (x.m != nil) != (i+1 > keyIndexScan) {
			t.Fatalf("after %d keys: map %v", i+1, x.m != nil)
		}
	}
	if x.find([]byte("k9999")) != 9999 || x.find([]byte("k3")) != 3 || x.find([]byte("nope")) != -1 {
		t.Fatal("lookups are wrong")
	}
}
