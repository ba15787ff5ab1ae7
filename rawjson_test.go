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
)

// parseKeepAll parses data as ParseArgs does with a schema that
// describes none of its members: every object or array member of the
// outermost object kept raw, strings and numbers cut from one copy of
// the text and short values boxed once (as ParseArgs does from
// argsArenaMin on).
func parseKeepAll(data []byte) (any, error) {
	p := jsonParser{data: data, keep: func(string) bool { return true }, arena: string(data), boxes: new(boxCache)}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.data) {
		return nil, p.fail("unexpected data after the JSON value")
	}
	return v, nil
}

// genJSON writes an adversarial JSON value: keys with escapes, repeated
// keys, keys out of order, surrogates escaped and raw, bytes that are not
// UTF-8, numbers of every form, and nesting as deep as depth allows.
func genJSON(r *rand.Rand, b *bytes.Buffer, depth int) {
	ws := func() {
		if r.IntN(4) == 0 {
			b.WriteString([]string{" ", "\n", "\t ", "\r\n"}[r.IntN(4)])
		}
	}
	ws()
	switch k := r.IntN(10); {
	case depth > 0 && k < 3:
		b.WriteByte('{')
		n := r.IntN(6)
		if depth == 1 && r.IntN(20) == 0 {
			n = 100 + r.IntN(200) // many: the sorted path by order
		}
		var keys []string
		sortedMany := n >= 100 && r.IntN(2) == 0 // sorted keys, a few out of place or repeated
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			if sortedMany {
				k := fmt.Sprintf(`"k%05d"`, i)
				switch r.IntN(40) {
				case 0:
					k = fmt.Sprintf(`"k%05d"`, r.IntN(n)) // out of place, maybe repeated
				case 1:
					k = `"\u006b` + k[2:] // k written otherwise
				}
				b.WriteString(k)
			} else if len(keys) > 0 && r.IntN(5) == 0 {
				b.WriteString(keys[r.IntN(len(keys))]) // a repeated key, maybe written otherwise
			} else {
				var kb bytes.Buffer
				genString(r, &kb)
				keys = append(keys, kb.String())
				b.Write(kb.Bytes())
			}
			ws()
			b.WriteByte(':')
			genJSON(r, b, depth-1)
		}
		ws()
		b.WriteByte('}')
	case depth > 0 && k < 5:
		b.WriteByte('[')
		for i := range r.IntN(6) {
			if i > 0 {
				b.WriteByte(',')
			}
			genJSON(r, b, depth-1)
		}
		b.WriteByte(']')
	case k < 7:
		genString(r, b)
	case k < 9:
		b.WriteString(genNumber(r))
	default:
		b.WriteString([]string{"true", "false", "null"}[r.IntN(3)])
	}
	ws()
}

var stringParts = []string{"a", "b", "k", "é", "日本", `\"`, `\\`, `\/`, `\n`, `\t`, `\b`, `\f`, `\r`, `\u0000`, `\u001f`,
	`\u00e9`, `\u00E9`, `\ud800`, `\udc00`, `\ud83d\ude00`, `\uDBFF\uDFFF`, "\xed\xa0\x80", "\xed\xb0\x80", "\xff", "\xe2\x82",
	`\ufffd`, "\ufffd", "<&>", "\U0001F600", "\x7f", " ", "0", "z"}

func genString(r *rand.Rand, b *bytes.Buffer) {
	b.WriteByte('"')
	for range r.IntN(5) {
		b.WriteString(stringParts[r.IntN(len(stringParts))])
	}
	b.WriteByte('"')
}

func genNumber(r *rand.Rand) string {
	forms := []func() string{
		func() string { return fmt.Sprint(r.IntN(1000) - 500) },
		func() string { return fmt.Sprintf("%d.%d", r.IntN(100), r.IntN(1000)) },
		func() string { return fmt.Sprintf("-%d.%s0", r.IntN(3), strings.Repeat("0", r.IntN(9))+"1") },
		func() string { return "0." + strings.Repeat("0", r.IntN(9)) + fmt.Sprint(r.IntN(100)) },
		func() string { return fmt.Sprintf("%de%d", r.IntN(100), r.IntN(60)-30) },
		func() string { return fmt.Sprintf("%d.%dE+%d", r.IntN(10), r.IntN(10), r.IntN(30)) },
		func() string { return strings.Repeat("9", 1+r.IntN(40)) },
		func() string { return strings.Repeat("9", 1+r.IntN(30)) + ".0" + strings.Repeat("0", r.IntN(4)) },
		func() string { return "-0" + []string{"", ".0", ".000", "e5", ".0e-3"}[r.IntN(5)] },
		func() string { return "1e" + fmt.Sprint(r.IntN(400)) },
	}
	return forms[r.IntN(len(forms))]()
}

// canonOf is Canonical(v) with its error as text.
func canonOf(v any) string {
	c, err := Canonical(v)
	if err != nil {
		return "error: " + err.Error()
	}
	return string(c)
}

// checkRawAgrees holds the raw path to the decoded one on data: ParseArgs
// keeping members raw accepts what ParseJSON accepts with the same error,
// and every canonical form (at the top, and nested deeper) is the same.
func checkRawAgrees(t *testing.T, data []byte) {
	t.Helper()
	v, err := ParseJSON(data)
	kept, kerr := parseKeepAll(data)
	if fmt.Sprint(err) != fmt.Sprint(kerr) {
		t.Fatalf("%q: ParseJSON err=%v, kept raw err=%v", data, err, kerr)
	}
	r, rerr := NewRawJSON(data)
	if fmt.Sprint(err) != fmt.Sprint(rerr) {
		t.Fatalf("%q: ParseJSON err=%v, NewRawJSON err=%v", data, err, rerr)
	}
	if err != nil {
		return
	}
	want := canonOf(v)
	for name, got := range map[string]any{"kept": kept, "raw": r} {
		if c := canonOf(got); c != want {
			t.Fatalf("%q: Canonical(%s) = %s, want %s", data, name, c, want)
		}
	}
	if c, w := canonOf(map[string]any{"x": []any{r}}), canonOf(map[string]any{"x": []any{v}}); c != w {
		t.Fatalf("%q nested: Canonical(raw) = %s, want %s", data, c, w)
	}
	if d := Decoded(kept); canonOf(d) != want {
		t.Fatalf("%q: Decoded = %s, want %s", data, canonOf(d), want)
	}
	if m, ok := kept.(map[string]any); ok {
		// The cache key from the text is the one from the map.
		var call Call
		call.ArgsFromText(m, data)
		got, gerr := call.CanonicalOf(m)
		if gerr != nil {
			got = "error: " + gerr.Error()
		}
		if got != want {
			t.Fatalf("%q: CanonicalOf from the text = %s, want %s", data, got, want)
		}
		// The keys found in order while writing it are the map's.
		keys, ok := call.SortedKeys(m)
		if !ok && gerr == nil && len(m) >= minTopKeys || ok && gerr != nil {
			t.Fatalf("%q: SortedKeys of %d members: ok=%v (canonical error %v)", data, len(m), ok, gerr)
		}
		if ok && !slices.Equal(slices.Collect(keys), slices.Sorted(maps.Keys(m))) {
			t.Fatalf("%q: SortedKeys = %q, want %q", data, slices.Collect(keys), slices.Sorted(maps.Keys(m)))
		}
		if b, err := json.Marshal(m); err != nil || !json.Valid(b) {
			t.Fatalf("%q: json.Marshal of kept args: %s %v", data, b, err)
		}
	}
}

// TestRawJSONCanonicalMatchesParsed: over generated adversarial JSON, the
// canonical form (the cache key) of arguments kept raw is the one of the
// same arguments decoded, and parsing keeps ParseJSON's acceptance and
// error words.
func TestRawJSONCanonicalMatchesParsed(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 6))
	for i := range 20000 {
		var b bytes.Buffer
		genJSON(r, &b, 1+r.IntN(6))
		data := b.Bytes()
		if i%7 == 0 && len(data) > 2 {
			// A broken copy: a byte cut or changed.
			cp := bytes.Clone(data)
			at := r.IntN(len(cp))
			if r.IntN(2) == 0 {
				cp = append(cp[:at], cp[at+1:]...)
			} else {
				alphabet := "{}[]\",:\\ 0e-."
				cp[at] = alphabet[r.IntN(len(alphabet))]
			}
			data = cp
		}
		checkRawAgrees(t, data)
	}
}

// TestLargeArgsMatchParseJSON: over generated arguments large enough
// to be cut from one copy of their text (argsArena) and to share boxed
// values (boxCache), whose members repeat short values that differ only
// in type or spelling (1, "1", 1.0, "\u0031", -0, "", null...), whose
// keys come sorted, shuffled, repeated or escaped, ParseArgs,
// ParseArgsOwned and ParseArgsDeferred decode what ParseJSONObject
// decodes (the same types: a number never comes back as a string), and
// the canonical form and sorted keys from the text are the map's.
func TestLargeArgsMatchParseJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 8))
	values := []string{`1`, `"1"`, `1.0`, `"\u0031"`, `-0`, `0`, `"0"`, `""`, `"\"\""`, `null`, `true`, `false`, `"true"`,
		`12345678901234567890`, `1e2`, `100`, `"é"`, `"\ud800"`, `"\ud800\udc00"`, "\"\xed\xa0\x80\"", `"abcdefghijklmnop"`,
		`"abcdefghijklmnopq"`, `"abcdefghijklmnpo"`, `{"a":1}`, `[1,"1"]`, `2`, `3`, `"2"`, `-1`, `"-1"`}
	in := ObjectSchema()
	in.SetProp("q", &Schema{Type: "string"})
	in.SetProp("k00003", &Schema{Type: "object"})
	for i := range 40 {
		n := 1500 + r.IntN(3000)
		keys := make([]string, n)
		for j := range keys {
			keys[j] = fmt.Sprintf(`"k%05d"`, j)
			switch r.IntN(30) {
			case 0:
				keys[j] = fmt.Sprintf(`"k%05d"`, r.IntN(n)) // repeated
			case 1:
				keys[j] = `"\u006b` + keys[j][2:] // escaped
			case 2:
				keys[j] = `"é` + keys[j][1:]
			}
		}
		switch i % 3 {
		case 1:
			r.Shuffle(len(keys), func(a, b int) { keys[a], keys[b] = keys[b], keys[a] })
		case 2:
			keys = append([]string{`"q"`}, keys...) // one out of place, as the benchmark's
		}
		var b bytes.Buffer
		b.WriteByte('{')
		for j, k := range keys {
			if j > 0 {
				b.WriteString([]string{",", ", ", ",\n"}[r.IntN(3)])
			}
			b.WriteString(k + ":")
			if r.IntN(50) == 0 {
				genJSON(r, &b, 2)
			} else {
				b.WriteString(values[r.IntN(len(values))])
			}
		}
		b.WriteByte('}')
		data := b.Bytes()
		want, err := ParseJSONObject(data)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		for name, parse := range map[string]func() (map[string]any, error){
			"ParseArgs":         func() (map[string]any, error) { return ParseArgs(data, in) },
			"ParseArgs(nil)":    func() (map[string]any, error) { return ParseArgs(data, nil) },
			"ParseArgsOwned":    func() (map[string]any, error) { return ParseArgsOwned(bytes.Clone(data), in) },
			"ParseArgsDeferred": func() (map[string]any, error) { return ParseArgsDeferred(data) },
		} {
			got, err := parse()
			if err != nil {
				t.Fatalf("case %d: %s: %v", i, name, err)
			}
			if d := DecodedArgs(got); !reflect.DeepEqual(d, want) {
				for k, w := range want {
					if !reflect.DeepEqual(d[k], w) {
						t.Fatalf("case %d: %s[%q] = %#v, want %#v", i, name, k, d[k], w)
					}
				}
				t.Fatalf("case %d: %s differs from ParseJSONObject", i, name)
			}
		}
		checkRawAgrees(t, data)
	}
}

// TestRawJSONDepthLimits: nesting at and around the canonical form's
// limit (512) and the parser's (10000) gives the same answers kept raw
// as decoded.
func TestRawJSONDepthLimits(t *testing.T) {
	for _, n := range []int{1, 2, 510, 511, 512, 513, 514, 9998, 9999, 10000, 10001} {
		for _, open := range []string{"[", `{"a":`, `{"b":0,"a":`} {
			closer := "]"
			if open != "[" {
				closer = "}"
			}
			data := []byte(`{"z":` + strings.Repeat(open, n) + "1" + strings.Repeat(closer, n) + "}")
			checkRawAgrees(t, data)
		}
	}
}

// TestParseArgsKeepsUndocumentedComposites: members the schema does not
// describe keep object and array values raw; documented members, scalars
// and schemas that describe further members decode as ParseJSONObject.
func TestParseArgsKeepsUndocumentedComposites(t *testing.T) {
	in := ObjectSchema()
	in.SetProp("q", &Schema{Type: "string"})
	in.SetProp("filter", &Schema{Type: "object"})
	data := []byte(`{"q":"x","filter":{"a":[1]},"extra":{"b":2},"list":[1,2],"n":3}`)
	m, err := ParseArgs(data, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m["filter"].(map[string]any); !ok {
		t.Errorf("documented filter: %T", m["filter"])
	}
	if r, ok := m["extra"].(RawJSON); !ok || r.String() != `{"b":2}` {
		t.Errorf("undocumented extra: %#v", m["extra"])
	}
	if _, ok := m["list"].(RawJSON); !ok {
		t.Errorf("undocumented list: %T", m["list"])
	}
	if _, ok := m["n"].(json.Number); !ok {
		t.Errorf("undocumented scalar: %T", m["n"])
	}
	open := ObjectSchema()
	open.SetProp("q", &Schema{Type: "string"})
	open.AdditionalProperties = json.RawMessage(`{"type":"object"}`)
	for _, s := range []*Schema{nil, open} {
		m, err := ParseArgs(data, s)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m["extra"].(map[string]any); !ok {
			t.Errorf("schema %v: extra %T, want decoded", s, m["extra"])
		}
	}
	// A schema of no properties describes none: its arguments pass as
	// given, unread.
	if m, err := ParseArgs(data, ObjectSchema()); err != nil {
		t.Fatal(err)
	} else if _, ok := m["filter"].(RawJSON); !ok {
		t.Errorf("no properties: filter %T, want kept as text", m["filter"])
	}
	// DecodeDescribed gives what ParseArgs gives knowing the schema.
	deferred, err := ParseArgsDeferred(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Schema{nil, in, open, ObjectSchema()} {
		want, _ := ParseArgs(data, s)
		got := DecodeDescribed(deferred, s)
		for k, w := range want {
			if fmt.Sprintf("%T", got[k]) != fmt.Sprintf("%T", w) || canonOf(got[k]) != canonOf(w) {
				t.Errorf("schema %v: DecodeDescribed[%s] = %T %s, want %T %s", s, k, got[k], canonOf(got[k]), w, canonOf(w))
			}
		}
	}
	for _, bad := range []string{`[1]`, `{"extra":{"b":}}`, `{"extra":[1,]}`, `{"extra":{"b":1}`} {
		_, err := ParseArgs([]byte(bad), in)
		_, want := ParseJSONObject([]byte(bad))
		if err == nil || err.Error() != want.Error() {
			t.Errorf("%s: %v, want %v", bad, err, want)
		}
	}
}

func FuzzRawJSON(f *testing.F) {
	for _, s := range []string{`{"a":{"b":1,"a":2,"b":[3.50,"\u00e9"]}}`, `[{"\ud800":1,"\xed\xa0\x80":2}]`,
		`{"z":{"y":1},"a":{"y":2,"y":3}}`, `{"k":[1e400, -0.0, 0.0000001, 12345678901234567890123]}`,
		"{\"\\\"\":{\"\\u0022\":1}}", `{"a":[[[[[]]]]]}`, `{"x":{"b":1}} x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRawAgrees(t, data)
	})
}

func ExampleParseArgs() {
	in := ObjectSchema()
	in.SetProp("q", &Schema{Type: "string"})
	args, _ := ParseArgs([]byte(`{"q": "news", "extra": {"b": 2.50, "a": [1]}}`), in)
	fmt.Printf("%T %T\n", args["q"], args["extra"])
	key, _ := CacheKey("news/search", args)
	decoded, _ := ParseJSONObject([]byte(`{"q": "news", "extra": {"b": 2.50, "a": [1]}}`))
	same, _ := CacheKey("news/search", decoded)
	fmt.Println(strings.TrimPrefix(key, "news/search\x00"), key == same)
	// Output:
	// string toolenv.RawJSON
	// {"extra":{"a":[1],"b":2.5},"q":"news"} true
}

// TestSplitJSONObject: over generated JSON, SplitJSONObject accepts the
// objects ParseJSON accepts, with its error words for the rest, and its
// members are the object's (keys decoded, the last of a repeated key
// kept, each value the text that decodes to the member's value).
func TestSplitJSONObject(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 7))
	for range 5000 {
		var b bytes.Buffer
		genJSON(r, &b, 1+r.IntN(4))
		data := b.Bytes()
		if r.IntN(5) == 0 && len(data) > 1 {
			data = data[:r.IntN(len(data))]
		}
		v, err := ParseJSON(data)
		members, end, serr := SplitJSONObject(data)
		obj, isObj := v.(map[string]any)
		if err != nil || !isObj {
			if serr == nil {
				if p := (jsonParser{data: data, i: end}); true {
					p.space()
					if p.i == len(data) {
						t.Fatalf("%q: split %v, ParseJSON %v (object %v)", data, members, err, isObj)
					}
				}
			} else if err != nil && serr.Error() != err.Error() {
				t.Fatalf("%q: split error %v, ParseJSON %v", data, serr, err)
			}
			continue
		}
		if serr != nil {
			t.Fatalf("%q: %v", data, serr)
		}
		if len(members) != len(obj) {
			t.Fatalf("%q: %d members, want %d", data, len(members), len(obj))
		}
		for k, raw := range members {
			mv, err := ParseJSON(raw)
			if err != nil || canonOf(mv) != canonOf(obj[k]) {
				t.Fatalf("%q: member %q = %s, want %s", data, k, raw, canonOf(obj[k]))
			}
		}
	}
}

func ExampleDecodeDescribed() {
	// A front-end that reads arguments before it knows the tool keeps
	// every object and array as text...
	args, _ := ParseArgsDeferred([]byte(`{"filter": {"year": 2024}, "debug": {"trace": true}}`))
	in := ObjectSchema()
	in.SetProp("filter", &Schema{Type: "object"})
	// ...and decodes those the tool's schema describes once it does.
	args = DecodeDescribed(args, in)
	fmt.Printf("%T %T\n", args["filter"], args["debug"])
	// Output: map[string]interface {} toolenv.RawJSON
}

func ExampleSplitJSONObject() {
	members, _, _ := SplitJSONObject([]byte(`{"episode_id": "e1", "action": {"type": "call_tool", "arguments": {"q": "x"}}}`))
	fmt.Println(string(members["episode_id"]), string(members["action"]))
	// Output: "e1" {"type": "call_tool", "arguments": {"q": "x"}}
}

func ExampleCall_ArgsFromText() {
	text := []byte(`{"q": "news", "k2": 1, "k1": 2.50}`)
	args, _ := ParseArgs(text, nil)
	call := &Call{Args: args}
	call.ArgsFromText(args, text) // the cache key is written from the text
	key, _ := call.CanonicalOf(args)
	fmt.Println(key)
	// Output: {"k1":2.5,"k2":1,"q":"news"}
}

// keysText is a JSON object of about size bytes: one documented member
// ("q") then many small undocumented ones, the request shape of issue 29.
func keysText(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"q": "000000000000"`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `, "k%07d": 1`, i)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// BenchmarkCanonicalRawKeys is the cache key of a megabyte of many small
// keys written by streaming over its text (Call.CanonicalOf's path).
//
//	go test . -run '^$' -bench CanonicalRawKeys -benchmem
func BenchmarkCanonicalRawKeys(b *testing.B) {
	text := string(keysText(1 << 20))
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		var buf bytes.Buffer
		buf.Grow(len(text))
		if err := writeCanonicalRaw(&buf, text, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAppendCanonicalNumberMatches: over generated JSON number literals
// (signs, leading and trailing zeros, long fractions, exponents), the
// streaming writer's number is CanonicalNumber's.
func TestAppendCanonicalNumberMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 8))
	digits := func(n int, lead bool) string {
		var b strings.Builder
		for i := range n {
			c := byte('0' + r.IntN(10))
			if i == 0 && lead && c == '0' {
				c = '1'
			}
			if r.IntN(4) == 0 {
				c = '0'
			}
			b.WriteByte(c)
		}
		return b.String()
	}
	for range 100000 {
		var lit strings.Builder
		if r.IntN(2) == 0 {
			lit.WriteByte('-')
		}
		if r.IntN(3) == 0 {
			lit.WriteByte('0')
		} else {
			lit.WriteString(digits(1+r.IntN(25), true))
		}
		if r.IntN(2) == 0 {
			lit.WriteString("." + digits(1+r.IntN(12), false))
		}
		if r.IntN(5) == 0 {
			lit.WriteString([]string{"e", "E", "e+", "e-", "E-"}[r.IntN(5)] + digits(1+r.IntN(3), false))
		}
		want, werr := CanonicalNumber(lit.String())
		var b bytes.Buffer
		err := appendCanonicalNumber(&b, []byte(lit.String()))
		if (err == nil) != (werr == nil) || err == nil && b.String() != want {
			t.Fatalf("%s: %q %v, want %q %v", lit.String(), b.String(), err, want, werr)
		}
	}
}

// checkCutAgrees holds CutRawJSON to ParseJSON on data: it accepts data
// followed by anything exactly when the value at its start is one
// ParseJSON accepts, gives that value's text, and words its refusals as
// ParseJSON does.
func checkCutAgrees(t *testing.T, data []byte) {
	t.Helper()
	r, end, err := CutRawJSON(data)
	if err != nil {
		if _, perr := ParseJSON(data); perr == nil || perr.Error() != err.Error() {
			t.Fatalf("%q: CutRawJSON refuses with %v, ParseJSON with %v", data, err, perr)
		}
		return
	}
	if end < 0 || end > len(data) || strings.TrimLeft(string(data[:end]), " \t\n\r") != r.String() {
		t.Fatalf("%q: end %d, text %q", data, end, r.String())
	}
	whole, werr := NewRawJSON(data[:end])
	if werr != nil || whole.String() != r.String() {
		t.Fatalf("%q: the value cut (%q) is not one JSON value: %v", data, r.String(), werr)
	}
	_, perr := ParseJSON(data)
	if rest := strings.Trim(string(data[end:]), " \t\n\r"); (perr == nil) != (rest == "") {
		t.Fatalf("%q: ParseJSON %v with %q after the value cut", data, perr, rest)
	}
}

// TestCutRawJSON: over generated adversarial JSON, whole, cut short,
// with a byte changed, or followed by more, CutRawJSON agrees with
// ParseJSON (checkCutAgrees).
func TestCutRawJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 9))
	for i := range 20000 {
		var b bytes.Buffer
		genJSON(r, &b, 1+r.IntN(5))
		data := b.Bytes()
		switch i % 4 {
		case 1:
			data = data[:r.IntN(len(data)+1)]
		case 2:
			cp := bytes.Clone(data)
			alphabet := "{}[]\",:\\ 0e-."
			cp[r.IntN(len(cp))] = alphabet[r.IntN(len(alphabet))]
			data = cp
		case 3:
			data = append(bytes.Clone(data), []string{",1}", " ]", `, "x": 2}`, " ", "x"}[r.IntN(5)]...)
		}
		checkCutAgrees(t, data)
	}
}

func FuzzCutRawJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}, "b": 2}`, ` [1, {"x": "\u00e9"}] tail`, `"str\"ing"`, `-0.5e3,`, `{"a":`, `tru`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkCutAgrees(t, data)
	})
}

func ExampleCutRawJSON() {
	body := []byte(`{"arguments": {"q": "news", "extra": [1, 2]}, "name": "search"}`)
	r, end, err := CutRawJSON(body[len(`{"arguments": `):])
	fmt.Println(r, end, err)
	// Output:
	// {"q": "news", "extra": [1, 2]} 30 <nil>
}

// TestAlreadyCanonicalNumbers: a number the one-pass check takes as its
// own canonical form is written as CanonicalNumber writes it, and the
// forms it leaves to the general path are ones that path changes or
// must look at (leading zeros, trailing zeros, exponents, signs, more
// than 21 integer digits).
func TestAlreadyCanonicalNumbers(t *testing.T) {
	for _, tc := range []struct {
		lit  string
		fast bool
	}{
		{"1", true}, {"-1", true}, {"1234567890", true}, {"123456789012345678901", true},
		{"1234567890123456789012", false}, {"0", false}, {"-0", false}, {"0.5", false},
		{"1.5", true}, {"-12.25", true}, {"1.50", false}, {"1.0", false}, {"10", true},
		{"1e5", false}, {"1.5E3", false}, {"1.", false}, {"1.2.3", false}, {"", false},
		{"123456789012345678901.5", true}, {"1234567890123456789012.5", false},
		{"3.14159265358979323846264338327950288", true}, {"7.000001", true},
	} {
		t.Run(tc.lit, func(t *testing.T) {
			d := strings.TrimPrefix(tc.lit, "-")
			if got, gotText := alreadyCanonical(d), alreadyCanonical([]byte(d)); got != tc.fast || gotText != tc.fast {
				t.Fatalf("alreadyCanonical(%q) = %v, want %v", tc.lit, got, tc.fast)
			}
			if !tc.fast {
				return
			}
			want, err := CanonicalNumber(tc.lit)
			if err != nil || want != tc.lit {
				t.Fatalf("CanonicalNumber(%q) = %q, %v: the fast path would write %q", tc.lit, want, err, tc.lit)
			}
			var b bytes.Buffer
			if err := appendCanonicalNumber(&b, []byte(tc.lit)); err != nil || b.String() != want {
				t.Fatalf("appendCanonicalNumber(%q) = %q, %v, want %q", tc.lit, b.String(), err, want)
			}
			if got, err := Canonical(map[string]any{"n": json.Number(tc.lit)}); err != nil || string(got) != `{"n":`+want+`}` {
				t.Fatalf("Canonical of json.Number(%q) = %s, %v", tc.lit, got, err)
			}
		})
	}
}

// TestRawCanonicalAsIs: a text rawCanonicalAsIs calls canonical is
// written by the canonical writer byte for byte as it is, and the texts
// the writer would change are not called canonical.
func TestRawCanonicalAsIs(t *testing.T) {
	for _, tc := range []struct {
		text string
		asIs bool
	}{
		{`{}`, true}, {`[]`, true}, {`[1]`, true}, {`{"a":1}`, true},
		{`{"a":1,"b":[true,false,null,"x"]}`, true}, {`[{"a":{}},[[]],-25,100]`, true},
		{`[-2.5]`, true}, {`[0]`, false}, {`[1e+30]`, false}, // zero and exponents are left to the writer
		{`{ }`, false}, {`[1, 2]`, false}, {`{"b":1,"a":2}`, false}, {`{"a":1,"a":2}`, false},
		{`["\u0041"]`, false}, {`["é"]`, false}, {`[1.50]`, false}, {`[1E2]`, false}, {`[01]`, false},
		{`{"a\"b":1}`, false}, {`[tru]`, false}, {`[` + strings.Repeat("1,", 200) + `1]`, false},
		{strings.Repeat("[", 40) + strings.Repeat("]", 40), false},
	} {
		if got := rawCanonicalAsIs(tc.text); got != tc.asIs {
			t.Errorf("rawCanonicalAsIs(%s) = %v, want %v", tc.text, got, tc.asIs)
		}
		checkAsIsAgrees(t, tc.text)
	}
}

// checkAsIsAgrees fails t when rawCanonicalAsIs calls text canonical and
// the canonical writer writes anything else for it.
func checkAsIsAgrees(t *testing.T, text string) {
	t.Helper()
	if !rawCanonicalAsIs(text) {
		return
	}
	var b bytes.Buffer
	if err := writeCanonicalRaw(&b, text, 1); err != nil {
		t.Fatalf("%q called canonical as is, but the writer refuses it: %v", text, err)
	}
	if b.String() != text {
		t.Fatalf("%q called canonical as is, but the writer gives %q", text, b.String())
	}
}

// FuzzRawCanonicalAsIs: whatever object or array text the parser
// accepts, rawCanonicalAsIs calls it canonical only when the canonical
// writer gives it back byte for byte.
func FuzzRawCanonicalAsIs(f *testing.F) {
	for _, s := range []string{`{}`, `[1]`, `{"a":1,"b":[true,null]}`, `[-0]`, `[1e5]`, `[-1.5e-7]`, `{"":1}`, `{"a":{},"a":[]}`, `[1.0]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) == 0 || text[0] != '{' && text[0] != '[' {
			return
		}
		if _, err := ParseJSON([]byte(text)); err != nil {
			return // only texts the parser kept as RawJSON reach the writer
		}
		checkAsIsAgrees(t, text)
	})
}

// TestBoxedValuesKeepTheirKind: the parse boxes each short literal once,
// strings, numbers and objects or arrays kept as text alike, and a
// member never gets a value of another kind with the same text (the
// string "{}" is not the object {}, the string "1" not the number 1).
// Today each kind of a literal has a slot of its own; this holds the
// property should the slots ever be shared.
func TestBoxedValuesKeepTheirKind(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	type want struct {
		key  string
		kind string
	}
	var wants []want
	for i := range 300 {
		if i > 0 {
			b.WriteString(",")
		}
		k := fmt.Sprintf("k%03d", i)
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, `%q:"{}"`, k)
			wants = append(wants, want{k, "string"})
		case 1:
			fmt.Fprintf(&b, `%q:{}`, k)
			wants = append(wants, want{k, "raw"})
		case 2:
			fmt.Fprintf(&b, `%q:"1"`, k)
			wants = append(wants, want{k, "string"})
		case 3:
			fmt.Fprintf(&b, `%q:1`, k)
			wants = append(wants, want{k, "number"})
		case 4:
			fmt.Fprintf(&b, `%q:[1]`, k)
			wants = append(wants, want{k, "raw"})
		}
	}
	b.WriteString("}")
	v, err := parseKeepAll([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	for _, w := range wants {
		var kind string
		switch m[w.key].(type) {
		case string:
			kind = "string"
		case json.Number:
			kind = "number"
		case RawJSON:
			kind = "raw"
		}
		if kind != w.kind {
			t.Fatalf("%s = %#v (%s), want a %s", w.key, m[w.key], kind, w.kind)
		}
	}
}

// TestShortValuesBoxedOnce: a parse of many members whose values repeat
// a few short literals that differ only inside ("[1]" and "[2]", "ab" and
// "ac", 10 and 11) boxes each literal about once, not once per member
// (hashed on their ends alone, "[0]" to "[9]" took one slot in turn:
// 20,077 allocations for 20,000 members).
func TestShortValuesBoxedOnce(t *testing.T) {
	in := ObjectSchema()
	in.SetProp("q", &Schema{Type: "string"})
	for _, value := range []func(i int) string{
		func(i int) string { return fmt.Sprintf("[%d]", i%10) },
		func(i int) string { return fmt.Sprintf(`"a%c"`, 'a'+i%10) },
		func(i int) string { return fmt.Sprintf(`{"a":%d}`, i%10) },
	} {
		var b strings.Builder
		b.WriteString(`{"q":"x"`)
		for i := range 20000 {
			fmt.Fprintf(&b, `,"k%05d":%s`, i, value(i))
		}
		b.WriteString("}")
		data := []byte(b.String())
		n := testing.AllocsPerRun(3, func() {
			if _, err := ParseArgsText(data, in, false); err != nil {
				t.Fatal(err)
			}
		})
		if n > 1000 {
			t.Errorf("values like %s: %.0f allocations for 20,000 members of 10 distinct values", value(1), n)
		}
	}
}
