package pyfmt

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	toolenv "github.com/toolenv/toolenv"
)

// FuzzParse: under every option, Parse never panics or hangs, fails only
// with a *SyntaxError, agrees with ParsePrefix, and reads nothing without
// Calls that it reads differently with them; with FloatValues, what Repr
// writes of a value parses back to the same value (StableToolBench's
// cache keys round trip).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{'a': 1}`, `{"b": [1, (2,), {'c': None}]}`, `'\U0001f600'`, `-1.5e-3`, `{'x': 'a\\\'b'}`,
		`{'a': [1, 2.5, -3e2], "b": (True, None)}`, `f(a=g(b=[1]))`, `r"\d"`, `'\U0001F600'`, `0x10`, strings.Repeat("[", 300),
		`'''x'''`, `{True: 1, 2.50: None}`, `1_000.5_0`, `'\0127'`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var plain any
		plainOK := false
		for _, opt := range []ParseOptions{{}, {Calls: true}, {FloatValues: true}, {Calls: true, FloatValues: true}} {
			v, err := Parse(s, opt)
			pv, n, perr := ParsePrefix(s, opt)
			if n < 0 || n > len(s) {
				t.Fatalf("ParsePrefix(%q) used %d bytes", s, n)
			}
			if err != nil {
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("Parse(%q, %+v): %v is not a *SyntaxError", s, opt, err)
				}
				continue
			}
			if perr != nil || !reflect.DeepEqual(v, pv) || strings.TrimSpace(s[n:]) != "" {
				t.Fatalf("Parse(%q, %+v) = %#v, but ParsePrefix = %#v, %d, %v", s, opt, v, pv, n, perr)
			}
			switch {
			case opt == ParseOptions{}:
				plain, plainOK = v, true
			case opt == ParseOptions{Calls: true} && plainOK && !reflect.DeepEqual(v, plain):
				t.Fatalf("Parse(%q) = %#v, but with calls %#v", s, plain, v)
			}
			if opt.Calls {
				continue
			}
			if b, err := json.Marshal(v); err != nil || !json.Valid(b) {
				t.Fatalf("Parse(%q) gave a value that is not JSON: %v", s, err)
			}
			if !opt.FloatValues {
				continue // floats keep their digits, exponents of any size
			}
			c1, err := toolenv.Canonical(v)
			if err != nil {
				t.Fatalf("Parse(%q) gave a value toolenv.Canonical rejects: %v", s, err)
			}
			if !utf8.ValidString(s) {
				// A byte that is not UTF-8 is kept by Parse (Canonical
				// keeps it apart) but has no Python repr: Repr writes
				// U+FFFD, as str() of the decoded text would.
				continue
			}
			// What Repr writes must parse back to the same value.
			v2, err := Parse(Repr(v), opt)
			if err != nil {
				t.Fatalf("Repr output %q does not parse: %v", Repr(v), err)
			}
			if c2, _ := toolenv.Canonical(v2); string(c1) != string(c2) {
				t.Fatalf("round trip changed %s into %s", c1, c2)
			}
		}
	})
}

// FuzzParseLoose: the tolerant parser never panics or hangs, returns an
// offset inside the text, and what it returns always encodes to valid
// JSON and a Python repr.
func FuzzParseLoose(f *testing.F) {
	for _, s := range []string{`{"a": 1}`, `[1, 2,`, `{'k': (1,)}`, `{"s": "a"b"}`, `tru`, `-`, `{"a": "NoneTy`, `[[[[`} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, text string, keep bool) {
		v, end, _, err := ParseLoose(text, LooseOptions{KeepPartial: keep})
		if end < 0 || end > len(text) {
			t.Fatalf("end %d out of range for %d bytes", end, len(text))
		}
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("ParseLoose(%q): %v is not a *SyntaxError", text, err)
			}
			return
		}
		// Python's json.dumps writes floats out of range as Infinity,
		// which is not JSON; everything else is.
		if d := Dumps(v); !json.Valid([]byte(d)) && finite(v) {
			t.Fatalf("Dumps gave invalid JSON %q from %q", d, text)
		}
		_ = Repr(v)
	})
}

// finite reports whether every number in v is within float64's range.
func finite(v any) bool {
	switch x := v.(type) {
	case json.Number:
		return !strings.HasSuffix(Number(string(x)), "inf")
	case []any:
		for _, e := range x {
			if !finite(e) {
				return false
			}
		}
	case Dict:
		for _, it := range x {
			if !finite(it.Value) {
				return false
			}
		}
	}
	return true
}

// FuzzReprJSON: the one-pass ReprJSON accepts exactly the JSON values
// encoding/json accepts and writes what Repr writes of json.loads's dict
// (OrderedDecoder with Unique), repeated keys included.
func FuzzReprJSON(f *testing.F) {
	for _, s := range []string{
		`{"b": 1, "a": "x"}`, `{"a": 1, "a": 2, "b": 3}`, `{"x": [1.0, 1e5, -0, 1E-7, 12345678901234567890]}`,
		`{"s": "it's \"q\" \\ \n \u00e9 \ud83d\ude00 \ud800 \u200f \u00a0"}`, `[true, false, null, {}]`, `"plain"`,
		`{"a": {"b": {"c": [[]]}}}`, ` {"k" : 1 } `, `{"a":1,}`, `01`, `NaN`, "\"\xff\xfe\"", `{"a": 1} x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ReprJSON(data)
		v, refErr := OrderedDecoder{Unique: true}.Decode(data)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("ReprJSON error %v, encoding/json error %v, for %q", err, refErr, data)
		}
		if err != nil {
			return
		}
		want := Repr(v)
		if strings.Contains(want, `\U0010`) {
			return // the stand-ins below would be ambiguous
		}
		if lone, ok := loneSurrogatesAsPrivateUse(data); ok {
			// encoding/json makes a lone surrogate U+FFFD; json.loads
			// keeps it and str() writes its escape. Read it as a
			// character of plane 16 instead and write that back as the
			// surrogate's escape.
			v, err := OrderedDecoder{Unique: true}.Decode(lone)
			if err != nil {
				t.Fatalf("%q with lone surrogates as U+10xxxx: %v", data, err)
			}
			want = planeSixteenEscape.ReplaceAllString(Repr(v), `\u$1`)
		}
		if got != want {
			t.Fatalf("ReprJSON(%q) = %s, want %s", data, got, want)
		}
	})
}

// planeSixteenEscape is Repr's escape of what loneSurrogatesAsPrivateUse
// makes of a lone surrogate.
var planeSixteenEscape = regexp.MustCompile(`\\U0010(d[89a-f][0-9a-f]{2})`)

// loneSurrogatesAsPrivateUse rewrites each escaped lone surrogate \udXXX
// of JSON text as the escaped pair of U+10DXXX, reporting whether there
// was one.
func loneSurrogatesAsPrivateUse(data []byte) ([]byte, bool) {
	hex4 := func(i int) int {
		if i+4 > len(data) {
			return -1
		}
		n, err := strconv.ParseUint(string(data[i:i+4]), 16, 16)
		if err != nil {
			return -1
		}
		return int(n)
	}
	var out []byte
	found := false
	for i := 0; i < len(data); {
		if data[i] != '\\' || i+1 >= len(data) {
			out = append(out, data[i])
			i++
			continue
		}
		if data[i+1] != 'u' {
			out = append(out, data[i:i+2]...)
			i += 2
			continue
		}
		u := hex4(i + 2)
		if u < 0xd800 || u > 0xdfff {
			out = append(out, data[i:i+2]...)
			i += 2
			continue
		}
		if u <= 0xdbff && i+7 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
			if lo := hex4(i + 8); lo >= 0xdc00 && lo <= 0xdfff {
				out = append(out, data[i:i+12]...)
				i += 12
				continue
			}
		}
		v := 0xf0000 | u // U+10xxxx less 0x10000, as a pair encodes it
		out = fmt.Appendf(out, `\u%04x\u%04x`, 0xd800+v>>10, 0xdc00+v&0x3ff)
		found = true
		i += 6
	}
	return out, found
}

// FuzzStrPlain: a quoted string read by str's shortcut (its own text when
// nothing in it needs decoding) is read exactly as strDecoded reads it,
// character by character: same value, same error, same end.
func FuzzStrPlain(f *testing.F) {
	for _, s := range []string{`'abc'`, `"a'b"`, `'é'`, "'\xff'", `'a\nb'`, "'a\nb'", `'''x'''`, `''`, `'`, `'ab`, `"x" rest`, `'日本' + 'x'`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || s[0] != '\'' && s[0] != '"' {
			return
		}
		for _, raw := range []bool{false, true} {
			p := &parser{s: s}
			v, err := p.str(raw)
			q := &parser{s: s}
			delim := s[:1]
			if strings.HasPrefix(s, strings.Repeat(delim, 3)) {
				delim = strings.Repeat(delim, 3)
			}
			wv, werr := q.strDecoded(delim, raw)
			if v != wv || p.pos != q.pos || (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
				t.Fatalf("str(%q, raw %v) = %#v, %v at %d; decoded %#v, %v at %d", s, raw, v, err, p.pos, wv, werr, q.pos)
			}
		}
	})
}
