package toolenv

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// stdDecode is encoding/json with UseNumber, rejecting trailing data.
func stdDecode(data []byte) (any, error) {
	var v any
	err := DecodeJSON(data, &v)
	return v, err
}

// asStd turns what ParseJSON gives into what encoding/json gives: every
// byte that is not UTF-8 (and each lone surrogate ParseJSON keeps) as
// U+FFFD. ok is false when that makes two keys of an object one (which
// of them encoding/json keeps depends on their order).
func asStd(v any) (out any, ok bool) {
	switch x := v.(type) {
	case string:
		return stdString(x), true
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			if out[i], ok = asStd(e); !ok {
				return nil, false
			}
		}
		return out, true
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if out[stdString(k)], ok = asStd(e); !ok {
				return nil, false
			}
		}
		return out, len(out) == len(x)
	}
	return v, true
}

func stdString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if isWTF8Surrogate(s[i:]) {
			b.WriteRune(utf8.RuneError)
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r)
		i += size
	}
	return b.String()
}

// TestStringsThatAreNotUTF8StayApart: a byte that is not UTF-8, a lone
// surrogate escape and U+FFFD itself are three values and three cache
// keys (encoding/json makes all three U+FFFD), and their canonical forms
// read back as themselves.
func TestStringsThatAreNotUTF8StayApart(t *testing.T) {
	inputs := []string{"{\"q\": \"a\xffb\"}", "{\"q\": \"a\xfeb\"}", `{"q": "a\ud800b"}`, `{"q": "a\udfffb"}`, `{"q": "a\ufffdb"}`, "{\"q\": \"a\xef\xbf\xbdb\"}",
		`{"q": "a\ud83d\ude00b"}`, "{\"q\": \"a\xed\xa0\x80b\"}", "{\"\xff\": 1, \"\xfe\": 2}"}
	want := []string{"a\xffb", "a\xfeb", "a\xed\xa0\x80b", "a\xed\xbf\xbfb", "a\ufffdb", "a\ufffdb", "a😀b", "a\xed\xa0\x80b"}
	keys := map[string]string{}
	for i, in := range inputs {
		m, err := ParseJSONObject([]byte(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if i < len(want) && m["q"] != want[i] {
			t.Errorf("%q parsed to %q, want %q", in, m["q"], want[i])
		}
		if i == len(inputs)-1 && len(m) != 2 {
			t.Errorf("%q: keys %q merged", in, m)
		}
		k, err := CacheKey("c/t", m)
		if err != nil {
			t.Fatal(err)
		}
		keys[k] = keys[k] + " " + in
		c, _ := Canonical(m)
		again, err := CanonicalizeJSON(c)
		if err != nil || !bytes.Equal(again, c) {
			t.Errorf("%q: canonical %q reads back as %q (%v)", in, c, again, err)
		}
		if !utf8.Valid(bytes.ReplaceAll(c, []byte{0xff}, nil)) && i != 1 && i != 8 {
			t.Errorf("%q: canonical %q is not UTF-8 apart from the input's bad byte", in, c)
		}
	}
	// The raw three bytes of a surrogate are the surrogate (the same
	// code point written as generalized UTF-8), and the raw and escaped
	// U+FFFD are one character: 9 inputs, 7 keys.
	if len(keys) != 7 {
		t.Fatalf("%d keys for %d inputs: %q", len(keys), len(inputs), keys)
	}
	if c, _ := Canonical(map[string]any{"q": "a\xed\xa0\x80b"}); string(c) != `{"q":"a\ud800b"}` {
		t.Errorf("a lone surrogate is written %s", c)
	}
	if got := AppendJSONString(nil, "a\xff\xed\xa0\x80"); string(got) != "\"a\ufffd\ufffd\ufffd\ufffd\"" {
		t.Errorf("AppendJSONString (the wire form) = %q, want every bad byte as U+FFFD", got)
	}
}

func TestParseJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`{"a":1,"b":[true,false,null],"c":{"d":"e\u00e9\n\"x\""}}`, ` [ ] `, `{}`, `"\ud83d\ude00"`, `"\ud800"`, `"\udc00x"`,
		`-0`, `1.5e-3`, `12345678901234567890123`, `{"a":1,"a":2}`, "\"\xff\"", `"a\/b"`,
		`01`, `1.`, `.5`, `-`, `1e`, `+1`, `tru`, `nul`, `{"a" 1}`, `[1,]`, `{"a":1,}`, `{,}`, `"\x"`, "\"\t\"", `[1]x`, ``, `  `,
	} {
		got, gerr := ParseJSON([]byte(s))
		want, werr := stdDecode([]byte(s))
		if (gerr == nil) != (werr == nil) {
			t.Errorf("%q: ParseJSON err=%v, encoding/json err=%v", s, gerr, werr)
			continue
		}
		if gerr == nil {
			std, _ := asStd(got)
			a, _ := Canonical(std)
			b, _ := Canonical(want)
			if !bytes.Equal(a, b) {
				t.Errorf("%q: ParseJSON=%s encoding/json=%s", s, a, b)
			}
		}
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\u0041"]}`, `"\ud83d\ude00"`, `[{"":null}]`, "\"\xe2\x82\"", `{"a":1,"a":{"b":true}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gerr := ParseJSON(data)
		want, werr := stdDecode(data)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: ParseJSON err=%v, encoding/json err=%v", data, gerr, werr)
		}
		if gerr != nil {
			return
		}
		std, ok := asStd(got)
		if !ok {
			return // keys only bad bytes told apart: encoding/json keeps one of them
		}
		a, errA := Canonical(std)
		b, errB := Canonical(want)
		if (errA == nil) != (errB == nil) || !bytes.Equal(a, b) {
			t.Fatalf("%q: ParseJSON=%s (%v) encoding/json=%s (%v)", data, a, errA, b, errB)
		}
	})
}

func BenchmarkParseJSON(b *testing.B) {
	data := []byte(`{"category":"Data","tool_name":"theclique","api_name":"songkick_concert","tool_input":"{\"id_conc\": \"40698227-lumineers\", \"limit\": 5}","strip":"","toolbench_key":"k"}`)
	b.Run("ParseJSON", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := ParseJSON(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := stdDecode(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
