package toolenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// readBoth reads data with UnmarshalJSON and with the decoder it
// replaces (unmarshalSchema, after the same trimming and depth check),
// and says how they differ ("" when they do not).
func readBoth(data []byte) string {
	var fast, slow Schema
	errFast := fast.UnmarshalJSON(data)
	trimmed := bytes.TrimSpace(data)
	var errSlow error
	if jsonDepth(trimmed) > maxSchemaJSONDepth {
		errSlow = ErrSchemaTooDeep
	} else {
		errSlow = unmarshalSchema(&slow, trimmed)
	}
	switch {
	case (errFast == nil) != (errSlow == nil):
		return fmt.Sprintf("errors differ: %v against %v", errFast, errSlow)
	case errFast != nil && errFast.Error() != errSlow.Error():
		return fmt.Sprintf("error %q against %q", errFast, errSlow)
	case errFast == nil && !reflect.DeepEqual(fast, slow):
		return fmt.Sprintf("read\n%#v\nagainst\n%#v", fast, slow)
	}
	return ""
}

// genSchemaJSON writes a random schema document: real keywords of every
// type with values of the right and the wrong types, unknown keywords,
// repeated and escaped keys, nested properties, items and anyOf, odd
// spacing and strings that need escapes or are not UTF-8.
func genSchemaJSON(r *rand.Rand, depth int) string {
	sp := func() string { return []string{"", "", " ", "\n\t", "  \r\n"}[r.IntN(5)] }
	str := func() string {
		return []string{`"x"`, `"a b"`, `"caf\u00e9"`, `"é"`, `"tab\there"`, `"q\"uote"`, "\"\xff\xfe\"", `""`, `"null"`, `"string"`}[r.IntN(10)]
	}
	scalar := func() string {
		return []string{`1`, `-2.5e3`, `0`, `true`, `false`, `null`, str(), `[]`, `{}`, `[1,"a",null]`, `{"k":1}`, `12345678901234567890`}[r.IntN(12)]
	}
	var value func(key string) string
	value = func(key string) string {
		if r.IntN(6) == 0 {
			return scalar() // often the wrong type
		}
		switch key {
		case "type":
			return []string{`"string"`, `"object"`, `["string","null"]`, `["null"]`, `[]`, `"null"`, `["integer","number"]`}[r.IntN(7)]
		case "nullable", "deprecated":
			return []string{`true`, `false`, `null`}[r.IntN(3)]
		case "title", "description", "format", "pattern", "$ref":
			return str()
		case "required":
			return []string{`["a"]`, `[]`, `["a","b","a"]`, `null`}[r.IntN(4)]
		case "enum", "examples":
			return []string{`[1, 2.50, "x", null, true, {"a":[1]}]`, `[]`, `null`, `[1e400]`}[r.IntN(4)]
		case "const", "default":
			return scalar()
		case "minimum", "maximum":
			return []string{`0`, `-1.5`, `"5"`, `1e400`, `null`, `"x"`}[r.IntN(6)]
		case "minLength", "maxLength", "minItems", "maxItems":
			return []string{`0`, `3`, `1.5`, `null`, `-1`}[r.IntN(5)]
		case "items":
			if depth > 0 && r.IntN(3) > 0 {
				return genSchemaJSON(r, depth-1)
			}
			return []string{`true`, `null`, `{}`, `[{"type":"string"}]`}[r.IntN(4)]
		case "anyOf", "oneOf", "allOf":
			if depth > 0 && r.IntN(3) > 0 {
				return "[" + genSchemaJSON(r, depth-1) + "," + sp() + genSchemaJSON(r, depth-1) + "]"
			}
			return []string{`[]`, `null`, `[null]`, `[true]`}[r.IntN(4)]
		case "properties":
			if depth > 0 && r.IntN(4) > 0 {
				var ps []string
				for i := range r.IntN(4) {
					name := []string{`"a"`, `"b"`, `"a"`, `"w\u0069th escape"`, `"ünï"`, fmt.Sprintf(`"p%d"`, i)}[r.IntN(6)]
					ps = append(ps, name+sp()+":"+sp()+genSchemaJSON(r, depth-1))
				}
				return "{" + sp() + strings.Join(ps, ","+sp()) + sp() + "}"
			}
			return []string{`{}`, `null`, `[]`, `{"a": 1}`}[r.IntN(4)]
		}
		return scalar()
	}
	switch r.IntN(12) {
	case 0:
		return []string{`true`, `false`, `null`, `1`, `"s"`, `[]`}[r.IntN(6)]
	case 1:
		return `{"type": "string",}` // invalid
	}
	keys := []string{"type", "nullable", "properties", "title", "description", "required", "items", "enum", "const",
		"default", "examples", "format", "pattern", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems",
		"anyOf", "oneOf", "allOf", "$ref", "deprecated", "additionalProperties", "x-extra", "unknown"}
	var ms []string
	for range r.IntN(7) {
		k := keys[r.IntN(len(keys))]
		name := `"` + k + `"`
		if r.IntN(20) == 0 {
			name = `"\u0074ype"` // "type", escaped
		}
		ms = append(ms, sp()+name+sp()+":"+sp()+value(k))
	}
	return sp() + "{" + strings.Join(ms, ",") + sp() + "}" + sp()
}

// TestSchemaReadsAsBefore: the one-pass reading of a schema gives what
// the decoder it replaced gives — the same schema, or the same error —
// on generated documents made to tell them apart.
func TestSchemaReadsAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 31))
	fast := 0
	for i := range 20000 {
		doc := genSchemaJSON(r, 3)
		if diff := readBoth([]byte(doc)); diff != "" {
			t.Fatalf("document %d %s: %s", i, doc, diff)
		}
		var s Schema
		trimmed := bytes.TrimSpace([]byte(doc))
		if readSchema(&s, trimmed) {
			fast++
		}
	}
	// Most valid documents must take the one-pass reading, or it saves
	// nothing.
	if fast < 20000/3 {
		t.Errorf("only %d of 20000 documents were read in one pass", fast)
	}
}

// FuzzSchemaReadsAsBefore: any bytes read as a schema give what the
// decoder the one-pass reading replaced gives.
func FuzzSchemaReadsAsBefore(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 40 {
		f.Add([]byte(genSchemaJSON(r, 2)))
	}
	for _, s := range []string{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `true`, ` {} `,
		`{"type":["null"],"nullable":true}`, `{"nullable":true,"type":[]}`, `{"a":1,"a":2}`, `{"properties":{"a":{},"a":{"type":"x"}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if diff := readBoth(data); diff != "" {
			t.Fatalf("%q: %s", data, diff)
		}
	})
}

// benchSchemaDoc is the input schema the schema benchmarks read and write.
func benchSchemaDoc() []byte {
	var props []string
	for i := range 12 {
		p := fmt.Sprintf(`"p%d": {"type": "string", "description": "the %d-th parameter, as the API documents it", "enum": ["a", "b", "c"], "examples": ["a"]}`, i, i)
		if i%4 == 1 {
			p = fmt.Sprintf(`"p%d": {"type": "object", "description": "a nested object", "properties": {"x": {"type": "integer", "minimum": 0}, "y": {"type": ["string", "null"], "format": "date-time"}}, "required": ["x"]}`, i)
		}
		if i%4 == 2 {
			p = fmt.Sprintf(`"p%d": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}}}`, i)
		}
		props = append(props, p)
	}
	return []byte(`{"type": "object", "properties": {` + strings.Join(props, ", ") + `}, "required": ["p0", "p1"], "additionalProperties": false}`)
}

// BenchmarkSchemaRead reads a realistic tool input schema (an object of
// twelve properties, some of them objects and arrays of objects two
// levels down, with descriptions, enums and examples) with UnmarshalJSON.
// Against the decoder it replaced: run it on the commit before
// schemaread.go (the benchmark file alone copied there).
func BenchmarkSchemaRead(b *testing.B) {
	doc := benchSchemaDoc()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		var s Schema
		if err := s.UnmarshalJSON(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSchemaWritesAsBefore: writing a schema into one buffer gives the
// bytes (or the error) of the writer it replaced, on the schemas of
// generated documents and on values JSON cannot hold.
func TestSchemaWritesAsBefore(t *testing.T) {
	check := func(name string, s *Schema) {
		t.Helper()
		fast, errFast := s.MarshalJSON()
		slow, errSlow := marshalSchema(s)
		if (errFast == nil) != (errSlow == nil) || (errFast != nil && errFast.Error() != errSlow.Error()) || !bytes.Equal(fast, slow) {
			t.Fatalf("%s: wrote\n%s (%v)\nagainst\n%s (%v)", name, fast, errFast, slow, errSlow)
		}
	}
	r := rand.New(rand.NewPCG(37, 41))
	read := 0
	for i := range 20000 {
		doc := genSchemaJSON(r, 3)
		var s Schema
		if s.UnmarshalJSON([]byte(doc)) != nil {
			continue
		}
		read++
		check(fmt.Sprintf("document %d %s", i, doc), &s)
	}
	if read < 5000 {
		t.Fatalf("only %d generated documents read", read)
	}
	nan, inf := math.NaN(), math.Inf(1)
	one := 1
	for name, s := range map[string]*Schema{
		"NaN minimum":         {Type: "number", Minimum: &nan},
		"infinite maximum":    {Maximum: &inf},
		"enum of a func":      {Enum: []any{func() {}}},
		"const a channel":     {Const: make(chan int)},
		"invalid extra":       {Extra: map[string]json.RawMessage{"x-a": json.RawMessage(`{"a":`)}},
		"invalid additional":  {AdditionalProperties: json.RawMessage(`tru`)},
		"spaced raw":          {AdditionalProperties: json.RawMessage(" { \"a\" : [ 1 , 2 ] } "), Extra: map[string]json.RawMessage{"z": json.RawMessage(" 1 "), "\u2028<&>": json.RawMessage(`"<&>"`)}},
		"strings to escape":   {Type: "string", Title: "<b>&amp;\u2028\u2029", Description: "tab\tnew\nline \"q\" \\ \x01 \xff", Format: "é", Pattern: `^\d+$`, Ref: "#/x<y>"},
		"nested property nil": {Type: "object", Properties: map[string]*Schema{"a": nil, "b": {Type: "integer", MinLength: &one}}, Order: []string{"b", "a"}},
		"nil in anyOf":        {AnyOf: []*Schema{nil, {Type: "null"}}, OneOf: []*Schema{{}}, AllOf: []*Schema{{Deprecated: true}}},
		"nested invalid":      {Type: "object", Properties: map[string]*Schema{"a": {Items: &Schema{Extra: map[string]json.RawMessage{"x": json.RawMessage("nope")}}}}},
	} {
		check(name, s)
	}
}

// BenchmarkSchemaWrite writes BenchmarkSchemaRead's schema.
func BenchmarkSchemaWrite(b *testing.B) {
	var s Schema
	if err := s.UnmarshalJSON(benchSchemaDoc()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSchemaManyKeywordsAndLists: a schema of many unknown keywords (a
// repeat among them found through a set, not pair by pair) and lists of
// schemas read alike by both readings, and the valid ones in one pass.
func TestSchemaManyKeywordsAndLists(t *testing.T) {
	many := func(n int, repeat bool) string {
		var b strings.Builder
		b.WriteString(`{"type":"object"`)
		for i := range n {
			fmt.Fprintf(&b, `,"x-k%d":%d`, i, i)
		}
		if repeat {
			b.WriteString(`,"x-k7":"again"`)
		}
		b.WriteString(`}`)
		return b.String()
	}
	for _, c := range []struct {
		name string
		doc  string
		fast bool
	}{
		{"5,000 keywords", many(5000, false), true},
		{"5,000 keywords, one repeated", many(5000, true), false},
		{"17 keywords, one repeated", many(16, true), false},
		{"lists", `{"anyOf":[{"type":"string"}, null ,true,{"anyOf":[]}],"oneOf":null,"allOf":[ ]}`, true},
		{"list of a number", `{"anyOf":[{"type":"string"},5]}`, false},
		{"list of an invalid schema", `{"allOf":[{"type":7}]}`, false},
	} {
		if diff := readBoth([]byte(c.doc)); diff != "" {
			t.Errorf("%s: %s", c.name, diff)
		}
		var s Schema
		if got := readSchema(&s, []byte(c.doc)); got != c.fast {
			t.Errorf("%s: read in one pass %v, want %v", c.name, got, c.fast)
		}
	}
}
