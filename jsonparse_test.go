package toolenv

import (
	"bytes"
	"testing"
)

// stdDecode is encoding/json with UseNumber, rejecting trailing data.
func stdDecode(data []byte) (any, error) {
	var v any
	err := DecodeJSON(data, &v)
	return v, err
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
			a, _ := Canonical(got)
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
		a, errA := Canonical(got)
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
