package toolenv

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// stdInput is data as encoding/json must read it to give what ParseJSON
// gives, under the one documented difference: ParseJSON reads the
// three-byte generalized UTF-8 form of a surrogate (ED A0-BF 80-BF) as
// that surrogate, one character (as Python's "surrogatepass" does),
// where encoding/json reads three bytes that are not UTF-8. Each such
// sequence becomes one byte that is not UTF-8 (0xFF), which
// encoding/json reads as one U+FFFD, as asStd writes the surrogate.
// Everything else is left as it is, so the comparison still covers every
// other byte, escape and error.
func stdInput(data []byte) []byte {
	if !bytes.Contains(data, []byte{0xed}) {
		return data
	}
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); {
		if isWTF8Surrogate(string(data[i:min(i+3, len(data))])) {
			out = append(out, 0xff)
			i += 3
			continue
		}
		out = append(out, data[i])
		i++
	}
	return out
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
	f.Add([]byte("\"\xed\xbb\xbb\""))
	f.Add([]byte("\"\xed\xa0\x80\xed\xb0\x80\\udc00\\ud800\xed\xb0\x80\""))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gerr := ParseJSON(data)
		want, werr := stdDecode(stdInput(data))
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

// TestSurrogatesInGeneralizedUTF8 holds the one documented difference
// between ParseJSON and encoding/json, and that it keeps distinct values
// distinct: a surrogate's raw three bytes are that surrogate (as its
// escape is), a high surrogate followed by a low one in raw bytes stays
// two surrogates, and every value's canonical form reads back as itself.
func TestSurrogatesInGeneralizedUTF8(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // the value, as Go bytes
		group    int    // inputs of one group are one value (one key)
	}{
		{"raw lone low", "\"\xed\xbb\xbb\"", "\xed\xbb\xbb", 1},
		{"escaped lone low", `"\udefb"`, "\xed\xbb\xbb", 1},
		{"three U+FFFD", `"\ufffd\ufffd\ufffd"`, "\ufffd\ufffd\ufffd", 2},
		{"one U+FFFD", `"\ufffd"`, "\ufffd", 3},
		{"raw pair", "\"\xed\xa0\x80\xed\xb0\x80\"", "\xed\xa0\x80\xed\xb0\x80", 4},
		{"escaped high, raw low", "\"\\ud800\xed\xb0\x80\"", "\xed\xa0\x80\xed\xb0\x80", 4},
		{"raw high, escaped low", "\"\xed\xa0\x80\\udc00\"", "\xed\xa0\x80\xed\xb0\x80", 4},
		{"escaped pair", `"\ud800\udc00"`, "\U00010000", 5},
		{"U+10000", "\"\U00010000\"", "\U00010000", 5},
		{"two bad bytes", "\"\xed\xa0\"", "\xed\xa0", 6},
	}
	keys := map[string]int{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := ParseJSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if v != tt.want {
				t.Fatalf("ParseJSON(%q) = %q, want %q", tt.in, v, tt.want)
			}
			k, err := CacheKey("c/t", map[string]any{"q": v})
			if err != nil {
				t.Fatal(err)
			}
			if g, ok := keys[k]; ok && g != tt.group {
				t.Errorf("%q shares a key with group %d", tt.in, g)
			}
			keys[k] = tt.group
			c, err := Canonical(v)
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseJSON(c)
			if err != nil || back != v {
				t.Errorf("canonical %q reads back as %q (%v), want %q", c, back, err, v)
			}
			if !json.Valid(c) {
				t.Errorf("canonical %q is not JSON", c)
			}
		})
	}
	if len(keys) != 6 {
		t.Errorf("%d keys, want 6 (one per value)", len(keys))
	}
}

// TestDistinctHintSizesForDistinctKeys: the map of an object's members is
// made for as many entries as it has members when its keys are
// distinct, and for about as many as it has distinct keys when the
// first ones repeat (one key sent 100,000 times).
func TestDistinctHintSizesForDistinctKeys(t *testing.T) {
	for _, tt := range []struct {
		name     string
		key      func(i int) string
		n        int
		min, max int
	}{
		{"few", func(i int) string { return "r" }, 4 * distinctSample, 4 * distinctSample, 4 * distinctSample},
		{"distinct", func(i int) string { return fmt.Sprint("k", i) }, 100000, 100000, 100000},
		{"one key", func(i int) string { return "r" }, 100000, 1, 400},
		{"two keys in turn", func(i int) string { return fmt.Sprint(i % 2) }, 100000, 2, 800},
		{"distinct later", func(i int) string { return fmt.Sprint(max(i-distinctSample, 0)) }, 100000, 1, 400},
	} {
		p := jsonParser{}
		ms := members{p: &p}
		for i := range tt.n {
			ms.add(tt.key(i), nil)
		}
		if got := ms.distinctHint(); got < tt.min || got > tt.max {
			t.Errorf("%s: distinctHint = %d, want %d to %d", tt.name, got, tt.min, tt.max)
		}
	}
}
