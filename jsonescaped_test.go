package toolenv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// escapeJSONText writes text as a JSON string the ways clients escape
// it, and some ways they should not: every character plain or as a \u
// escape (either case of hex digits), a character beyond the BMP as a
// surrogate pair, '/' escaped or not, bytes that are not UTF-8 kept
// raw, and now and then a lone surrogate, a high surrogate before a
// character that is not a low one, an unknown escape, bad hex digits, a
// raw control character or spaces around the string.
func escapeJSONText(r *rand.Rand, b *bytes.Buffer, text []byte) {
	if r.IntN(10) == 0 {
		b.WriteString([]string{" ", "\n", "\t\r\n "}[r.IntN(3)])
	}
	b.WriteByte('"')
	hex := "%04x"
	if r.IntN(3) == 0 {
		hex = "%04X"
	}
	for i := 0; i < len(text); {
		c, size := utf8.DecodeRune(text[i:])
		raw := text[i : i+size]
		i += size
		if r.IntN(60) == 0 { // something odd between two characters
			switch r.IntN(8) {
			case 0:
				fmt.Fprintf(b, `\u`+hex, 0xd800+r.IntN(0x400)) // a lone high surrogate
			case 1:
				fmt.Fprintf(b, `\u`+hex, 0xdc00+r.IntN(0x400)) // a lone low surrogate
			case 2:
				fmt.Fprintf(b, `\u`+hex+`\u0041`, 0xdbff) // high, then not low
			case 3:
				b.WriteString([]string{`\x`, `\'`, `\U0041`, `\a`}[r.IntN(4)]) // not JSON escapes
			case 4:
				b.WriteString([]string{`\u12g4`, `\u00`, `\u-123`, `\u 123`}[r.IntN(4)]) // bad hex
			case 5:
				b.WriteByte(byte(r.IntN(0x20))) // a raw control character
			case 6:
				b.WriteString([]string{"\xff", "\xed\xa0\x80", "\xc3", "\xf0\x9f\x98"}[r.IntN(4)]) // not UTF-8
			case 7:
				b.WriteString(`\/\\\"`)
			}
		}
		switch {
		case c == utf8.RuneError && size == 1:
			b.Write(raw) // a byte that is not UTF-8, kept raw
		case c == '"' || c == '\\':
			if r.IntN(8) == 0 {
				fmt.Fprintf(b, `\u`+hex, c)
			} else {
				b.WriteByte('\\')
				b.WriteRune(c)
			}
		case c < 0x20:
			if e, ok := map[rune]string{'\n': `\n`, '\t': `\t`, '\r': `\r`, '\b': `\b`, '\f': `\f`}[c]; ok && r.IntN(3) > 0 {
				b.WriteString(e)
			} else {
				fmt.Fprintf(b, `\u`+hex, c)
			}
		case c == '/' && r.IntN(2) == 0:
			b.WriteString(`\/`)
		case c > 0xffff && r.IntN(2) == 0:
			c -= 0x10000
			fmt.Fprintf(b, `\u`+hex+`\u`+hex, 0xd800+(c>>10), 0xdc00+(c&0x3ff))
		case r.IntN(12) == 0:
			if c > 0xffff {
				b.Write(raw)
			} else {
				fmt.Fprintf(b, `\u`+hex, c)
			}
		default:
			b.Write(raw)
		}
	}
	b.WriteByte('"')
	switch r.IntN(20) {
	case 0:
		b.WriteString([]string{" ", "\n\t"}[r.IntN(2)])
	case 1:
		b.WriteString([]string{"x", `"`, ",1", "}"}[r.IntN(4)]) // data after the string
	}
}

// genEscapedArgs returns the text of arguments (a JSON object, most of
// the time valid: genJSON's values, with escapes and non-UTF-8 bytes of
// their own) written as a JSON string by escapeJSONText, and now and
// then broken at a random place, as a whole.
func genEscapedArgs(r *rand.Rand) []byte {
	var text bytes.Buffer
	if r.IntN(8) == 0 {
		genJSON(r, &text, r.IntN(4)) // any value, not only an object
	} else {
		text.WriteByte('{')
		for i := range r.IntN(6) {
			if i > 0 {
				text.WriteByte(',')
			}
			genString(r, &text)
			text.WriteByte(':')
			genJSON(r, &text, r.IntN(4))
		}
		text.WriteByte('}')
	}
	var b bytes.Buffer
	escapeJSONText(r, &b, text.Bytes())
	out := b.Bytes()
	if r.IntN(6) == 0 && len(out) > 0 {
		at := r.IntN(len(out))
		switch r.IntN(3) {
		case 0:
			out = out[:at] // cut short
		case 1:
			out = append(out[:at:at], out[at+1:]...) // a byte left out
		case 2:
			alphabet := "\"\\u{}[]:, \x00\x1f\xffd8"
			out[at] = alphabet[r.IntN(len(alphabet))]
		}
	}
	return out
}

// checkUnquoteAgrees holds UnquoteJSON to ParseJSON on lit: the same
// error word for word, or the same bytes as the string ParseJSON gives
// (and an error where that is not a string), in a slice that shares
// nothing with lit.
func checkUnquoteAgrees(t *testing.T, lit []byte) {
	t.Helper()
	got, err := UnquoteJSON(lit)
	v, perr := ParseJSON(lit)
	s, isString := v.(string)
	switch {
	case perr != nil:
		if err == nil || err.Error() != perr.Error() {
			t.Fatalf("%q: UnquoteJSON %q %v, ParseJSON's error %v", lit, got, err, perr)
		}
	case !isString:
		if err == nil {
			t.Fatalf("%q: UnquoteJSON %q for %T, want an error", lit, got, v)
		}
	case err != nil || string(got) != s:
		t.Fatalf("%q: UnquoteJSON %q %v, ParseJSON %q", lit, got, err, s)
	case len(got) > 0 && len(lit) > 0 && &got[:cap(got)][cap(got)-1] == &lit[:cap(lit)][cap(lit)-1]:
		t.Fatalf("%q: UnquoteJSON's result shares lit's memory", lit)
	}
}

// TestUnquoteJSONAsParseJSON: over generated escaped arguments and
// every prefix of some of them, UnquoteJSON decodes exactly what
// ParseJSON decodes, with its errors.
func TestUnquoteJSONAsParseJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 8))
	var valid, broken int
	for i := range 20000 {
		lit := genEscapedArgs(r)
		checkUnquoteAgrees(t, lit)
		if _, err := ParseJSON(lit); err == nil {
			valid++
		} else {
			broken++
		}
		if i%200 == 0 {
			for n := range len(lit) {
				checkUnquoteAgrees(t, lit[:n]) // broken at every position
			}
		}
	}
	if valid < 5000 || broken < 2000 {
		t.Fatalf("the generator made %d valid and %d broken strings; it no longer makes enough of both", valid, broken)
	}
	for _, lit := range []string{``, ` `, `"`, `"\`, `"\u`, `"\ud800`, `"\ud800\`, `"\ud800\udc00"`, `"\ud800\udbff"`, `"\udc00\ud800"`,
		`1`, `null`, `{}`, `[""]`, `"a" "b"`, " \"x\"\n", "\"\x7f\"", "\"\t\"", `"\u0000"`, `"\/"`, `"\u00e9\u00E9"`} {
		checkUnquoteAgrees(t, []byte(lit))
	}
}

// checkOwnedAgrees holds ParseArgsOwned to ParseArgs on data for schema s.
func checkOwnedAgrees(t *testing.T, data []byte, s *Schema) {
	t.Helper()
	want, werr := ParseArgs(data, s)
	owned := bytes.Clone(data)
	got, err := ParseArgsOwned(owned, s)
	if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() || !reflect.DeepEqual(got, want) {
		t.Fatalf("%.300q: ParseArgsOwned %v %v, ParseArgs %v %v", data, got, err, want, werr)
	}
}

// TestParseArgsOwnedAsParseArgs: over generated arguments (some large
// enough that their strings are cut from the text), with and without a
// schema, ParseArgsOwned gives what ParseArgs gives.
func TestParseArgsOwnedAsParseArgs(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 9))
	in := ObjectSchema()
	in.SetProp("q", &Schema{Type: "string"})
	in.SetProp("o", &Schema{Type: "object"})
	for i := range 3000 {
		var b bytes.Buffer
		b.WriteByte('{')
		if i%10 == 0 { // over argsArenaMin: strings cut from the text
			fmt.Fprintf(&b, `"pad":"%s",`, strings.Repeat("p\\u00e9", argsArenaMin/7))
		}
		for j := range 1 + r.IntN(6) {
			if j > 0 {
				b.WriteByte(',')
			}
			switch r.IntN(4) {
			case 0:
				b.WriteString(`"q"`)
			case 1:
				b.WriteString(`"o"`)
			default:
				genString(r, &b)
			}
			b.WriteByte(':')
			genJSON(r, &b, r.IntN(4))
		}
		b.WriteByte('}')
		data := b.Bytes()
		if r.IntN(5) == 0 {
			data = data[:r.IntN(len(data))]
		}
		for _, s := range []*Schema{nil, in} {
			checkOwnedAgrees(t, data, s)
		}
	}
}

// FuzzUnquoteJSON holds UnquoteJSON to ParseJSON, and what it decodes
// to ParseArgsOwned and ParseArgs alike.
func FuzzUnquoteJSON(f *testing.F) {
	for _, s := range []string{`"{\"q\": \"x\"}"`, `"{\"s\": \"\\ud800\", \"\u00e9\": \"\ud83d\ude00\"}"`, `"\ud800\u0041"`,
		"\"{\\\"k\\\": \\\"\xff\\\"}\"", `"{\"n\": [1e400, -0.0, 12345678901234567890]}"`, `"\u12g4"`, ` "{}" `, `"{\"a\": 1}" x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		checkUnquoteAgrees(t, lit)
		if text, err := UnquoteJSON(lit); err == nil {
			checkOwnedAgrees(t, text, nil)
		}
	})
}

func ExampleUnquoteJSON() {
	// StableToolBench sends a call's arguments as JSON inside a string.
	text, _ := UnquoteJSON([]byte(`"{\"q\": \"caf\u00e9\", \"tags\": [\"a\\\"b\"]}"`))
	args, _ := ParseArgsOwned(text, nil)
	fmt.Println(string(text))
	fmt.Println(args["q"], args["tags"])
	_, err := UnquoteJSON([]byte(`"{\x}"`))
	fmt.Println(strings.Contains(err.Error(), "invalid escape"))
	// Output:
	// {"q": "café", "tags": ["a\"b"]}
	// café [a"b]
	// true
}

// BenchmarkUnquoteJSON decodes about 1 MB of arguments sent inside a
// JSON string, laid out as many small keys, deep objects and strings
// with escapes.
//
//	go test -run '^$' -bench UnquoteJSON
func BenchmarkUnquoteJSON(b *testing.B) {
	for _, shape := range []struct{ name, member string }{
		{"keys", `"k%07d": 1`},
		{"deep", `"d%05d": {"n": {"n": {"n": {"n": [1, "x", true]}}}}`},
		{"strings", `"s%05d": "lorem ipsum é日本 \"quoted\"\n\t\ud83d\ude00"`},
	} {
		var text bytes.Buffer
		text.WriteByte('{')
		for i := 0; text.Len() < 1<<20; i++ {
			if i > 0 {
				text.WriteByte(',')
			}
			fmt.Fprintf(&text, shape.member, i)
		}
		text.WriteByte('}')
		lit := []byte(strconvQuoteJSON(text.String()))
		b.Run(shape.name, func(b *testing.B) {
			b.SetBytes(int64(len(lit)))
			for b.Loop() {
				if _, err := UnquoteJSON(lit); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// strconvQuoteJSON is s as a JSON string (AppendJSONString).
func strconvQuoteJSON(s string) string { return string(AppendJSONString(nil, s)) }

func ExampleParseArgsOwned() {
	in := ObjectSchema()
	in.SetProp("q", &Schema{Type: "string"})
	text := []byte(`{"q": "news", "extra": {"b": 2.50}}`) // not changed afterwards
	args, _ := ParseArgsOwned(text, in)
	fmt.Printf("%v %T\n", args["q"], args["extra"])
	// Output:
	// news toolenv.RawJSON
}
