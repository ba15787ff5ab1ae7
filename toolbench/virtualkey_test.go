package toolbench

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

func TestToolInputKey(t *testing.T) {
	tests := []struct {
		body, want string
		ok         bool
	}{
		{`{"category": "D", "tool_input": "{\"b\": 1, \"a\": \"2\"}"}`, `{'b': 1, 'a': '2'}`, true},
		{`{"tool_input": {"b": 1.0, "a": [true, null]}, "api_name": "x"}`, `{'b': 1.0, 'a': [True, None]}`, true},
		{`{"tool_input": ""}`, `{}`, true},
		{`{"tool_input": " \n"}`, `{}`, true},
		{`{"api_name": "x"}`, `{}`, true},
		{`{"tool_input": "{\"q\": 1, \"q\": 2}"}`, `{'q': 2}`, true},
		{`{"tool_input": {"a": 1}, "tool_input": {"b": 2}}`, `{'b': 2}`, true},
		{`{"tool\u005finput": {"é": "O'Brien"}}`, `{'é': "O'Brien"}`, true},
		{`{"tool_input": "[1]"}`, ``, false},
		{`{"tool_input": 5}`, ``, false},
		{`{"tool_input": "{\"a\": NaN}"}`, ``, false},
		{`[]`, ``, false},
		{`{"tool_input": }`, ``, false},
		// No key of StableToolBench's stands for text that is not UTF-8:
		// the call keeps its canonical key.
		{"{\"tool_input\": {\"q\": \"a\xffb\"}}", ``, false},
		// An escaped lone surrogate is the surrogate, as json.loads
		// reads it, and str() writes its escape.
		{`{"tool_input": {"q": "a\ud800b"}}`, `{'q': 'a\ud800b'}`, true},
		{`{"tool_input": {"q": "a\udc00"}}`, `{'q': 'a\udc00'}`, true},
		{`{"tool_input": {"q": "a\ud800\u0041"}}`, `{'q': 'a\ud800A'}`, true},
		{`{"tool_input": "{\"q\": \"a\\ud800b\"}"}`, `{'q': 'a\ud800b'}`, true},
		// A lone surrogate in the string itself is a raw surrogate in the
		// text json.loads reads next: no key.
		{`{"tool_input": "{\"q\": \"a\ud800b\"}"}`, ``, false},
		{`{"tool_input": {"q": "\ud83d\ude00 \\ud800 \ufffd"}}`, `{'q': '😀 \\ud800 �'}`, true},
		{"{\"api_name\": \"\xff\", \"tool_input\": {\"q\": 1}}", `{'q': 1}`, true},
	}
	for _, tt := range tests {
		got, ok := ToolInputKey([]byte(tt.body))
		if got != tt.want || ok != tt.ok {
			t.Errorf("ToolInputKey(%s) = %q, %v; want %q, %v", tt.body, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzToolInputKey: the key of any body is what json.loads and str()
// make of its tool_input (checked against the ordered decoder and Repr),
// and reading never panics.
func FuzzToolInputKey(f *testing.F) {
	for _, s := range []string{
		`{"tool_input": "{\"b\": 1, \"a\": \"2\"}"}`, `{"tool_input": {"x": [1, {"y": "z"}]}}`, `{"tool_input": ""}`,
		`{"a": 1, "tool_input": {"k": 1}, "tool_input": "{\"k\": 2}"}`, `{"tool_input": "{\"k\": 1e5}"}`, `{}`, `{"tool_input": null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		key, ok := ToolInputKey(body)
		v, err := pyfmt.OrderedDecoder{Unique: true}.Decode(body)
		d, isObj := v.(pyfmt.Dict)
		if err != nil || !isObj {
			return
		}
		ti, present := d.Get("tool_input")
		raw, _ := lastMember(body, "tool_input")
		if !utf8.Valid(raw) || len(raw) > 0 && raw[0] == '"' && notText(raw) {
			if ok {
				t.Fatalf("ToolInputKey(%q) = %q for text that is not UTF-8 or a string holding a lone surrogate", body, key)
			}
			return
		}
		// reprOf is str() of the dict: Repr of the decoded value, but
		// ReprJSON when a lone surrogate is escaped in the text, which
		// encoding/json reads as U+FFFD (FuzzReprJSON and
		// TestReprJSONLoneSurrogates hold ReprJSON to Python there).
		reprOf := func(text []byte, v any) string {
			if notText(text) {
				k, err := pyfmt.ReprJSON(text)
				if err != nil {
					t.Fatalf("ReprJSON(%q): %v", text, err)
				}
				return k
			}
			return pyfmt.Repr(v)
		}
		var want string
		wantOK := true
		switch x := ti.(type) {
		case nil:
			want = "{}"
		case pyfmt.Dict:
			want = reprOf(raw, x)
		case string:
			s := bytes.TrimSpace([]byte(x))
			if len(s) == 0 {
				want = "{}"
				break
			}
			inner, err := pyfmt.OrderedDecoder{Unique: true}.Decode(s)
			if _, isDict := inner.(pyfmt.Dict); err != nil || !isDict {
				wantOK = false
				break
			}
			want = reprOf(s, inner)
		default:
			wantOK = false
		}
		if !present {
			want, wantOK = "{}", true
		}
		if ok != wantOK || (ok && key != want) {
			t.Fatalf("ToolInputKey(%q) = %q, %v; want %q, %v", body, key, ok, want, wantOK)
		}
		if ok && strings.TrimSpace(key) == "" {
			t.Fatal("empty key")
		}
	})
}

func BenchmarkToolInputKey(b *testing.B) {
	body := []byte(`{"category": "Finance", "tool_name": "stock_quotes", "api_name": "get_quote", "tool_input": "{\"symbol\": \"AAPL\", \"interval\": \"1d\", \"limit\": 5}", "strip": "", "toolbench_key": ""}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, ok := ToolInputKey(body); !ok {
			b.Fatal("no key")
		}
	}
}
