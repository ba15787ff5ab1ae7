package episode

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/toolenv/toolenv"
)

// genString makes a string of the characters encoding/json treats
// specially: quotes, backslashes, control characters, HTML characters,
// U+2028 and U+2029, multi-byte characters and bytes that are not UTF-8.
func genString(r *rand.Rand) string {
	pieces := []string{"a", "Z", "0", " ", `"`, `\`, "/", "<", ">", "&", "\x00", "\x1f", "\b", "\f", "\n", "\r", "\t", "\u007f", "é", "日本", "😀", "\u2028", "\u2029", "\xff", "\xed\xa0\x80", "\xc3", "k1", "arguments"}
	var b strings.Builder
	for range r.IntN(8) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// genValue makes a value of the kinds a call's arguments hold.
func genValue(r *rand.Rand, depth int) any {
	switch r.IntN(10) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2, 3:
		return genString(r)
	case 4:
		return json.Number([]string{"0", "-0", "1.50", "1e400", "-12.5E-7", "12345678901234567890", "01", "1.", "+1", "", "NaN", ".5", "1e", "-"}[r.IntN(14)])
	case 5:
		return r.Float64() * 1e6
	case 6:
		// An object or array kept as text (toolenv.RawJSON), as the
		// parse keeps an undocumented argument's.
		text := []string{`{"b":1, "a":[1,2]}`, `[ "<x>" ]`, `{}`, `[1.50]`, `{"\u2028":"&"}`}[r.IntN(5)]
		in := toolenv.ObjectSchema()
		in.SetProp("q", &toolenv.Schema{Type: "string"})
		m, err := toolenv.ParseArgs([]byte(`{"v":`+text+`}`), in)
		if err != nil {
			panic(err)
		}
		return m["v"]
	case 7:
		if depth < 3 {
			m := map[string]any{}
			for range r.IntN(4) {
				m[genString(r)] = genValue(r, depth+1)
			}
			return m
		}
		return "deep"
	case 8:
		if depth < 3 {
			var a []any
			for range r.IntN(4) {
				a = append(a, genValue(r, depth+1))
			}
			return a
		}
		return 1
	}
	return int64(r.IntN(1000) - 500)
}

// TestArgsMapEncodesAsEncodingJSON: over generated arguments, argsMap
// writes the bytes encoding/json writes for the same map[string]any, and
// fails where it fails.
func TestArgsMapEncodesAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 6))
	for i := range 3000 {
		m := map[string]any{}
		for range r.IntN(12) {
			m[genString(r)] = genValue(r, 0)
		}
		if i%100 == 0 {
			for k := range 300 { // many keys, as the cost benchmarks send
				m["k"+strings.Repeat("x", k%7)+string(rune('a'+k%26))] = genValue(r, 2)
			}
		}
		checkArgsMap(t, m)
	}
	checkArgsMap(t, nil)
	checkArgsMap(t, map[string]any{})
}

func checkArgsMap(t *testing.T, m map[string]any) {
	t.Helper()
	want, werr := json.Marshal(m)
	// MarshalJSON itself: encoding/json would compact and escape what it
	// returns again, hiding a difference.
	got, gerr := argsMap(m).MarshalJSON()
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%#v: encoding/json error %v, argsMap error %v", m, werr, gerr)
	}
	if werr == nil && !bytes.Equal(got, want) {
		t.Fatalf("%#v:\nargsMap      %s\nencoding/json %s", m, got, want)
	}
}

// FuzzArgsMapAsEncodingJSON: any key and string or number value encode as
// encoding/json encodes them.
func FuzzArgsMapAsEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "a", "<&>", "\u2028", "\xff", `"\`, "1.5e3", "-0", "01"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, k, v string) {
		checkArgsMap(t, map[string]any{k: v, k + "n": json.Number(v), "z" + k: []any{v}})
	})
}

// BenchmarkArchiveArgs is a recorded call of 60,000 keys out of order
// written as an ended episode's archive writes it, against encoding/json
// writing the same arguments as a plain map.
//
//	go test ./episode -run '^$' -bench ArchiveArgs -benchmem
func BenchmarkArchiveArgs(b *testing.B) {
	m := map[string]any{}
	for i := range 60000 {
		m["x"+strconv.Itoa(1000000+(i*7919)%1000003)] = json.Number("1")
	}
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(struct{ A map[string]any }{m}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("entry", func(b *testing.B) {
		ce := callEntry{Name: "t", Args: m}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(&ce); err != nil {
				b.Fatal(err)
			}
		}
	})
}
