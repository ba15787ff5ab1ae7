package toolenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/internal/argshapes"
)

// checkParsedAgrees holds the cache key written from the parser's members
// (ParseArgsText, Call.ArgsFromParse) to the ones written before, on
// data: ParseArgsText accepts what ParseArgs accepts with the same error
// words and gives the same map, and CanonicalOf gives, byte for byte,
// Canonical of the map, errors included, and the key written from the
// text (ArgsFromText) wherever that has one, with the same sorted keys.
func checkParsedAgrees(t *testing.T, data []byte) {
	t.Helper()
	in := ObjectSchema()
	in.SetProp("q", &Schema{Type: "string"})
	in.SetProp("a", &Schema{Type: "object"})
	for _, s := range []*Schema{nil, in} {
		for _, owned := range []bool{false, true} {
			want, werr := ParseArgs(data, s)
			pa, err := ParseArgsText(bytes.Clone(data), s, owned)
			if fmt.Sprint(err) != fmt.Sprint(werr) {
				t.Fatalf("%.300q (owned %v): ParseArgsText err=%v, ParseArgs err=%v", data, owned, err, werr)
			}
			if werr != nil {
				continue
			}
			if !reflect.DeepEqual(pa.Args, want) {
				t.Fatalf("%.300q (owned %v): ParseArgsText's map differs from ParseArgs's", data, owned)
			}
			var call Call
			call.ArgsFromParse(pa)
			if !reflect.DeepEqual(call.Args, want) {
				t.Fatalf("%.300q: ArgsFromParse did not set the arguments", data)
			}
			got, gerr := call.CanonicalOf(call.Args)
			if gerr != nil {
				got = "error: " + gerr.Error()
			}
			if c := canonOf(pa.Args); got != c {
				t.Fatalf("%.300q: CanonicalOf from the members = %s, Canonical of the map = %s", data, got, c)
			}
			var text Call
			text.ArgsFromText(want, data)
			fromText, terr := text.CanonicalOf(want)
			if terr != nil {
				fromText = "error: " + terr.Error()
			}
			// (The text's writer also fails on a value nested too deeply
			// that a later member of the same key replaces, which the
			// map does not hold: there the members follow the map.)
			if terr == nil && got != fromText {
				t.Fatalf("%.300q: CanonicalOf from the members = %s, from the text = %s", data, got, fromText)
			}
			keys, ok := call.SortedKeys(call.Args)
			tkeys, tok := text.SortedKeys(want)
			if terr == nil && ok != tok || gerr != nil && ok {
				t.Fatalf("%.300q: SortedKeys of %d members: ok=%v, from the text ok=%v", data, len(want), ok, tok)
			}
			if ok && (!slices.Equal(slices.Collect(keys), slices.Sorted(maps.Keys(want))) || tok && !slices.Equal(slices.Collect(keys), slices.Collect(tkeys))) {
				t.Fatalf("%.300q: SortedKeys = %q, want %q", data, slices.Collect(keys), slices.Sorted(maps.Keys(want)))
			}
		}
	}
}

// argKeys and argValues are keys and values that look alike: the same
// text escaped or not, not UTF-8, surrogates, numbers of one value
// written otherwise.
var (
	argKeys   = []string{`"q"`, `"a"`, `"\u0071"`, `"k"`, `"é"`, `"\u00e9"`, "\"\xff\"", `"\ud800"`, "\"\xed\xa0\x80\"", `""`, `"k\u0000"`, `"\\"`}
	argValues = []string{`1`, `1.0`, `"1"`, `1e0`, `10e-1`, `-0`, `0`, `-0.0`, `"\u0031"`, `null`, `true`, `"é"`, "\"\xff\xfe\"", `"\ud800"`,
		`12345678901234567890123`, `12345678901234567890124`, `1e400`, `0.0000001`, `{}`, `[]`, `{"b":1,"b":2}`, `{"a":[1,{"a":1.50}]}`}
)

// genArgs writes an adversarial JSON object of arguments: few or many
// members (from 64 the keys are sorted by order), keys escaped, repeated
// (with values that differ), out of order or not UTF-8, values that look
// alike (1, 1.0, "1", 1e0, -0), nested deeply (past the canonical form's
// limit of 512 at times), huge arrays and strings that are not UTF-8.
func genArgs(r *rand.Rand, b *bytes.Buffer) {
	n := r.IntN(8)
	if r.IntN(3) == 0 {
		n = 60 + r.IntN(300)
	}
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteString([]string{",", ", ", ",\n\t"}[r.IntN(3)])
		}
		genMember(r, b, i)
	}
	b.WriteByte('}')
}

// genMember writes the i-th member of genArgs's object.
func genMember(r *rand.Rand, b *bytes.Buffer, i int) {
	switch k := r.IntN(10); {
	case k < 3:
		b.WriteString(argKeys[r.IntN(len(argKeys))])
	case k < 4:
		genString(r, b)
	default:
		fmt.Fprintf(b, `"k%05d"`, i+r.IntN(3)-1) // in order, now and then repeated or swapped
	}
	b.WriteString([]string{":", " : "}[r.IntN(2)])
	switch k := r.IntN(80); {
	case k == 0: // deep: around the canonical form's limit
		d := 505 + r.IntN(12)
		b.WriteString(strings.Repeat(`{"d":[`, d/2) + "1" + strings.Repeat("]}", d/2))
	case k == 1: // a huge array of numbers that look alike
		b.WriteByte('[')
		for j := range 2000 + r.IntN(2000) {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(argValues[r.IntN(8)])
		}
		b.WriteByte(']')
	case k < 10:
		genJSON(r, b, 1+r.IntN(4))
	default:
		b.WriteString(argValues[r.IntN(len(argValues))])
	}
}

// TestParsedArgsCanonicalMatchesMap: over generated adversarial
// arguments, and broken copies of them, the cache key written from the
// parser's members is the map's and the text's, byte for byte (see
// checkParsedAgrees).
func TestParsedArgsCanonicalMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 60))
	for i := range 600 {
		var b bytes.Buffer
		genArgs(r, &b)
		data := b.Bytes()
		if i%5 == 0 && len(data) > 2 {
			cp := bytes.Clone(data) // a byte cut or changed
			at := r.IntN(len(cp))
			if r.IntN(2) == 0 {
				cp = append(cp[:at], cp[at+1:]...)
			} else {
				alphabet := "{}[]\",:\\ 0e-.\xff"
				cp[at] = alphabet[r.IntN(len(alphabet))]
			}
			data = cp
		}
		checkParsedAgrees(t, data)
	}
	// Large enough to be cut from one copy and to box values once
	// (argsArena, boxCache), as the front-ends' big calls are.
	for range 6 {
		var b bytes.Buffer
		b.WriteString(`{"q": "x"`)
		for i := 0; b.Len() < 3*argsArenaMin; i++ {
			b.WriteString(", ")
			genMember(r, &b, i)
		}
		b.WriteByte('}')
		checkParsedAgrees(t, b.Bytes())
	}
	checkParsedAgrees(t, keysText(1<<20)) // the benchmark's shape
	// Many members whose values are small objects and arrays, canonical
	// as they are or not, the same one in runs or alternating (copied as
	// they are, or from the last one written).
	raws := []string{`{}`, `[]`, `[1]`, `{"a":1}`, `{"b":1,"a":2}`, `[ 1 ]`, `{"a":[1,{"c":2,"b":1}]}`, `[1.50]`, `["\u00e9"]`, `[0]`, `{"a":1,"a":2}`, `[-0.0]`}
	for run := range 8 {
		var b bytes.Buffer
		b.WriteString(`{"q": "x"`)
		v := raws[0]
		for i := 0; b.Len() < 2*argsArenaMin; i++ {
			if r.IntN(run+1) == 0 {
				v = raws[r.IntN(len(raws))]
			}
			fmt.Fprintf(&b, `, "r%05d": %s`, (i*7919)%100003, v)
		}
		b.WriteByte('}')
		checkParsedAgrees(t, b.Bytes())
	}
	// Most members repeating a key (written from the map's few keys),
	// and exactly half of them.
	for _, distinct := range []int{1, 5, 32, 50, 51} {
		var b bytes.Buffer
		b.WriteByte('{')
		for i := range 100 {
			if i > 0 {
				b.WriteByte(',')
			}
			k := argKeys[r.IntN(len(argKeys))]
			if i < distinct || r.IntN(2) == 0 {
				k = fmt.Sprintf(`"d%03d"`, i%distinct)
			}
			fmt.Fprintf(&b, `%s:%s`, k, argValues[r.IntN(len(argValues))])
		}
		b.WriteByte('}')
		checkParsedAgrees(t, b.Bytes())
	}
}

func FuzzParseArgsText(f *testing.F) {
	for _, s := range []string{`{"q":"x","a":{"b":1},"k":[1.0,"\u00e9"]}`, `{"b":1,"a":2,"b":1.0}`, `{"\u0071":1,"q":2}`,
		"{\"\xff\":1,\"\\ud800\":2,\"\xed\xa0\x80\":3}", `{"k":[1e400,-0.0,0.0000001,12345678901234567890123]}`, `{}`,
		`{"a":` + strings.Repeat("[", 513) + strings.Repeat("]", 513) + `}`, `{"a":1} x`, `[1]`, `{"a":1,}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParsedAgrees(t, data)
	})
}

// BenchmarkCanonicalParsedKeys is the cache key of a megabyte of many
// small keys written from the parser's members (Call.ArgsFromParse's
// path; BenchmarkCanonicalRawKeys is the text's).
//
//	go test . -run '^$' -bench CanonicalParsedKeys -benchmem
func BenchmarkCanonicalParsedKeys(b *testing.B) {
	text := keysText(1 << 20)
	pa, err := ParseArgsText(text, nil, false)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		canonicalFromParse(pa)
	}
}

// BenchmarkCanonicalParsedShapes is the cache key of a megabyte of each
// shape of argshapes, written from the parser's members as the
// front-ends write it, the arguments parsed against a tool that
// documents none of them (objects and arrays kept as text).
//
//	go test . -run '^$' -bench CanonicalParsedShapes -benchmem
func BenchmarkCanonicalParsedShapes(b *testing.B) {
	in := ObjectSchema()
	in.SetProp("q", &Schema{Type: "string"})
	for _, shape := range argshapes.Names {
		b.Run(shape, func(b *testing.B) {
			var buf bytes.Buffer
			buf.WriteString(`{"q": "x"`)
			argshapes.Members(&buf, shape, 1<<20)
			buf.WriteByte('}')
			pa, err := ParseArgsText(buf.Bytes(), in, false)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(buf.Len()))
			b.ReportAllocs()
			for b.Loop() {
				if r := canonicalFromParse(pa); r.err != nil {
					b.Fatal(r.err)
				}
			}
		})
	}
}

func ExampleCall_ArgsFromParse() {
	pa, _ := ParseArgsText([]byte(`{"q": "news", "k2": 1, "k1": 2.50, "k2": 3}`), nil, false)
	var call Call
	call.ArgsFromParse(pa) // the cache key is written from the parser's members
	key, _ := call.CanonicalOf(call.Args)
	fmt.Println(key)
	// Output: {"k1":2.5,"k2":3,"q":"news"}
}

// TestDerivedCanonicalMatchesMap: over generated adversarial arguments
// parsed as the front-ends parse them, and maps derived from them as
// validation and renaming derive them (some keys given other values,
// removed, added before, between and after the others; listed as
// changed but left alone; derived again from a derived map), the
// canonical form CanonicalOf writes from the base's (Call.ArgsDerived)
// is Canonical's of the derived map, byte for byte, errors included.
func TestDerivedCanonicalMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 61))
	newKeys := []string{"", "\x00", "a", "k00000", "k00007x", "q", "\xff", "é", "~~~~", "k", "K"}
	values := []any{"coerced", json.Number("5"), json.Number("1.0"), nil, true, map[string]any{"x": json.Number("2")}, []any{"é", json.Number("1e400")}, 7, 2.5}
	derive := func(base map[string]any) (map[string]any, []string) {
		m := maps.Clone(base)
		var changed []string
		existing := slices.Collect(maps.Keys(base))
		for range 1 + r.IntN(4) {
			k := newKeys[r.IntN(len(newKeys))]
			if len(existing) > 0 && r.IntN(2) == 0 {
				k = existing[r.IntN(len(existing))]
			}
			switch r.IntN(4) {
			case 0:
				delete(m, k)
			case 1: // listed, not changed
			default:
				m[k] = values[r.IntN(len(values))]
			}
			changed = append(changed, k)
		}
		return m, changed
	}
	checked := 0
	for i := range 400 {
		var b bytes.Buffer
		if i%2 == 0 {
			b.WriteString(`{"q": "x"`)
			for j := 0; j < 64+r.IntN(200); j++ {
				b.WriteString(", ")
				genMember(r, &b, j)
			}
			b.WriteByte('}')
		} else {
			genArgs(r, &b)
		}
		pa, err := ParseArgsText(b.Bytes(), nil, false)
		if err != nil {
			continue
		}
		var call Call
		call.ArgsFromParse(pa)
		m := pa.Args
		for depth := range 1 + r.IntN(3) { // derived, then derived again
			d, changed := derive(m)
			call.ArgsDerived(d, m, changed)
			got, gerr := call.CanonicalOf(d)
			want, werr := Canonical(d)
			if (gerr != nil) != (werr != nil) || gerr == nil && got != string(want) {
				t.Fatalf("%.300q, derivation %d changing %q: CanonicalOf = %.300q (%v), Canonical = %.300q (%v)", b.Bytes(), depth, changed, got, gerr, want, werr)
			}
			m = d
			checked++
		}
	}
	if checked < 300 {
		t.Fatalf("only %d derived maps checked", checked)
	}
}

// TestDerivedCanonicalSplices: a map derived from the parse of many
// members gets its canonical form from the base's (the splice), not from
// a walk over the map: a derived map whose members differ from what its
// record says gives the record's form, which tells the two apart.
func TestDerivedCanonicalSplices(t *testing.T) {
	pa, err := ParseArgsText(keysText(4<<10), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	var call Call
	call.ArgsFromParse(pa)
	d := maps.Clone(pa.Args)
	d["q"] = "coerced"
	d["unlisted"] = json.Number("1") // not in the record: the splice does not see it
	call.ArgsDerived(d, pa.Args, []string{"q"})
	got, err := call.CanonicalOf(d)
	if err != nil {
		t.Fatal(err)
	}
	delete(d, "unlisted")
	want, _ := Canonical(d)
	if got != string(want) {
		t.Fatalf("CanonicalOf = %.200s..., want the splice of the recorded change, %.200s...", got, want)
	}
}

// TestCountMembersCountsWhatTheParseKeeps: the count the outermost
// object's members are collected at (countMembers) is the number the
// parse keeps, over generated adversarial objects (escaped quotes and
// commas in strings, nesting, repeated keys, white space), or 0 for an
// object with few members in its first countProbe bytes, and on text
// that is not JSON never more than a fifth of its length.
func TestCountMembersCountsWhatTheParseKeeps(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 62))
	for range 300 {
		var b bytes.Buffer
		genArgs(r, &b)
		pa, err := ParseArgsText(b.Bytes(), nil, false)
		if err != nil {
			continue
		}
		kept := 0
		for _, c := range pa.members {
			kept += len(c)
		}
		got := countMembers(b.Bytes()[1:])
		if got == 0 && b.Len() > countProbe { // few members in the probe: not counted
			continue
		}
		if kept > 0 && got != kept {
			t.Fatalf("%.300q: countMembers = %d, the parse kept %d", b.Bytes(), got, kept)
		}
	}
	// Few large members are not counted; many are, past the probe.
	few := `"a": "` + strings.Repeat("x", countProbe) + `", "b": 1}`
	many := strings.Repeat(`"k": 1, `, minTopKeys) + `"s": "` + strings.Repeat(`\"`, countProbe) + `"}`
	if got := countMembers([]byte(few)); got != 0 {
		t.Fatalf("two members over the probe's length: countMembers = %d, want 0 (not counted)", got)
	}
	if got := countMembers([]byte(many)); got != minTopKeys+1 {
		t.Fatalf("%d small members and a long string: countMembers = %d", minTopKeys+1, got)
	}
	for _, hostile := range []string{strings.Repeat(",", 1<<16), strings.Repeat(`,""`, 1<<15), `"` + strings.Repeat(",", 1<<16), strings.Repeat("[", 1<<15) + strings.Repeat(",", 1<<15)} {
		if got := countMembers([]byte(hostile)); got > len(hostile)/5+1 {
			t.Fatalf("%.40q...: countMembers = %d for %d bytes", hostile, got, len(hostile))
		}
	}
}
