package openai

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func schemaOf(t *testing.T, js string) *toolenv.Schema {
	t.Helper()
	var s toolenv.Schema
	if err := s.UnmarshalJSON([]byte(js)); err != nil {
		t.Fatal(err)
	}
	return &s
}

// TestStrictSchema: the strict form of typical and awkward inputs, and
// the inputs that stay non-strict with the reason.
func TestStrictSchema(t *testing.T) {
	for _, tc := range []struct{ name, in, want, why string }{
		{"optional becomes nullable and required",
			`{"type":"object","properties":{"q":{"type":"string","title":"Q","example_value":"x"},"n":{"type":"integer","default":5,"minimum":1}},"required":["q"],"optional":[]}`,
			`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":["integer","null"],"description":"(default: 5)","minimum":1}},"required":["q","n"],"additionalProperties":false}`, ""},
		{"an optional enum admits null",
			`{"type":"object","properties":{"u":{"type":"string","enum":["c","f"]}}}`,
			`{"type":"object","properties":{"u":{"type":["string","null"],"enum":["c","f",null]}},"required":["u"],"additionalProperties":false}`, ""},
		{"nested objects and arrays",
			`{"type":"object","properties":{"o":{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"type":"boolean"}},"required":["b"]},"uniqueItems":true}},"required":["a"]}},"required":["o"]}`,
			`{"type":"object","properties":{"o":{"type":"object","properties":{"a":{"type":"array","description":"(items are unique)","items":{"type":"object","properties":{"b":{"type":"boolean"}},"required":["b"],"additionalProperties":false}}},"required":["a"],"additionalProperties":false}},"required":["o"],"additionalProperties":false}`, ""},
		{"unsupported string keywords said in the description",
			`{"type":"object","properties":{"s":{"type":"string","description":"A code","format":"int64","minLength":2,"maxLength":4,"pattern":"^[A-Z]+$"}},"required":["s"]}`,
			`{"type":"object","properties":{"s":{"type":"string","description":"A code. (format: int64; at least 2 characters; at most 4 characters)","pattern":"^[A-Z]+$"}},"required":["s"],"additionalProperties":false}`, ""},
		{"oneOf becomes anyOf; a const admits null through anyOf",
			`{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer"}]},"k":{"const":"x","description":"kind"}}}`,
			`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]},"k":{"description":"kind","anyOf":[{"const":"x"},{"type":"null"}]}},"required":["v","k"],"additionalProperties":false}`, ""},
		{"no parameters", `{"type":"object","properties":{}}`, `{"type":"object","properties":{},"additionalProperties":false,"required":[]}`, ""},
		{"open parameters", `{"type":"object","additionalProperties":true}`, "", "the parameters are an open map"},
		{"any value is narrowed", `{"type":"object","properties":{"v":{"description":"a number or $label$"}},"required":["v"]}`,
			`{"type":"object","properties":{"v":{"description":"a number or $label$","anyOf":[{"type":"string"},{"type":"number"},{"type":"boolean"},{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"number"},{"type":"boolean"}]}}]}},"required":["v"],"additionalProperties":false}`, ""},
		{"an open map", `{"type":"object","properties":{"filters":{"type":"object"}}}`, "", "parameter `filters` is an open map (an object whose keys are not listed)"},
		{"a map with listed keys and more", `{"type":"object","properties":{"m":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}}}`, "", "parameter `m` is an open map (it takes keys besides those it lists)"},
		{"an array of anything", `{"type":"object","properties":{"a":{"type":"array"}}}`, "", "parameter `a` is an array whose items are not described"},
		{"not", `{"type":"object","properties":{"a":{"type":"string","not":{"const":"x"}}}}`, "", "parameter `a` uses not"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, why := StrictSchema(schemaOf(t, tc.in))
			if tc.why != "" {
				if !strings.Contains(why, tc.why) {
					t.Fatalf("why = %q, want %q", why, tc.why)
				}
				return
			}
			if why != "" {
				t.Fatalf("not strict: %s", why)
			}
			b, _ := json.Marshal(got)
			if string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
			if errs := CheckStrict(got); len(errs) > 0 {
				t.Errorf("CheckStrict refuses it: %v", errs)
			}
		})
	}
}

// TestCheckStrict: each published rule is checked.
func TestCheckStrict(t *testing.T) {
	deep := `{"type":"string"}`
	for range 11 {
		deep = `{"type":"object","properties":{"d":` + deep + `},"required":["d"],"additionalProperties":false}`
	}
	var many []string
	for i := range 1001 {
		many = append(many, fmt.Sprintf(`"v%d"`, i))
	}
	ok := func(body string) string {
		return `{"type":"object","properties":{"p":` + body + `},"required":["p"],"additionalProperties":false}`
	}
	for _, tc := range []struct{ name, schema, want string }{
		{"valid", ok(`{"type":["string","null"],"enum":["a",null],"description":"d"}`), ""},
		{"additionalProperties missing", `{"type":"object","properties":{"p":{"type":"string"}},"required":["p"]}`, "additionalProperties is not false"},
		{"an optional property", `{"type":"object","properties":{"p":{"type":"string"},"q":{"type":"string"}},"required":["p"],"additionalProperties":false}`, `property "q" is not listed once in required`},
		{"title", ok(`{"type":"string","title":"P"}`), `keyword "title" is not supported`},
		{"default", ok(`{"type":"string","default":"x"}`), `keyword "default" is not supported`},
		{"an extension", ok(`{"type":"string","x-toolbench-type":"STRING"}`), `keyword "x-toolbench-type" is not supported`},
		{"example_value", ok(`{"type":"string","example_value":"x"}`), `keyword "example_value" is not supported`},
		{"ToolBench's optional list", `{"type":"object","properties":{},"required":[],"additionalProperties":false,"optional":[]}`, `keyword "optional" is not supported`},
		{"minLength", ok(`{"type":"string","minLength":1}`), `keyword "minLength" is not supported`},
		{"a keyword of another type", ok(`{"type":"string","minimum":1}`), `keyword "minimum" applies to number schemas`},
		{"format", ok(`{"type":"string","format":"int64"}`), `format "int64" is not supported`},
		{"oneOf", ok(`{"oneOf":[{"type":"string"}]}`), `keyword "oneOf" is not supported`},
		{"no type", ok(`{"description":"x"}`), "no type"},
		{"array without items", ok(`{"type":"array"}`), "an array without items"},
		{"root anyOf", `{"type":"object","anyOf":[{"type":"object","properties":{},"required":[],"additionalProperties":false}],"properties":{},"required":[],"additionalProperties":false}`, "anyOf at the root"},
		{"root array", `{"type":"array","items":{"type":"string"}}`, `not "object"`},
		{"too deep", deep, "nested more than 10 levels deep"},
		{"too many enum values", ok(`{"type":"string","enum":[` + strings.Join(many, ",") + `]}`), "1001 enum values, over 1000"},
		{"enum of the wrong type", ok(`{"type":"integer","enum":["a"]}`), "enum value a is not of type integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := CheckStrict(schemaOf(t, tc.schema))
			if tc.want == "" {
				if len(errs) > 0 {
					t.Fatalf("refused: %v", errs)
				}
				return
			}
			if !strings.Contains(strings.Join(errs, "\n"), tc.want) {
				t.Errorf("errors %v, want one containing %q", errs, tc.want)
			}
		})
	}
}

// genSchema makes an input schema of the shapes tool documentation has:
// nested objects and arrays, optional properties, enums, constraints,
// keywords strict mode refuses, open maps, untyped values, compositions.
func genSchema(r *rand.Rand, depth int) *toolenv.Schema {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	s := &toolenv.Schema{Type: pick("string", "integer", "number", "boolean", "object", "array", "")}
	if depth == 0 {
		s.Type = "object"
	}
	if r.IntN(4) == 0 {
		s.Title = "T"
	}
	if r.IntN(3) == 0 {
		s.Description = "d"
	}
	s.Extra = map[string]json.RawMessage{}
	switch r.IntN(8) {
	case 0:
		s.Extra["example_value"] = json.RawMessage(`"e"`)
	case 1:
		s.Extra["x-toolbench-type"] = json.RawMessage(`"STRING"`)
	case 2:
		s.Extra["uniqueItems"] = json.RawMessage(`true`)
	case 3:
		s.Default = "x"
	case 4:
		s.Extra["multipleOf"] = json.RawMessage(`2`)
	case 5:
		s.Extra["optional"] = json.RawMessage(`[]`)
	}
	if len(s.Extra) == 0 {
		s.Extra = nil
	}
	switch s.Type {
	case "string":
		s.Format = pick("", "date", "uri", "email", "int64")
		if r.IntN(4) == 0 {
			s.Enum = []any{"a", "b"}
		}
		if r.IntN(5) == 0 {
			n := 3
			s.MaxLength = &n
		}
		if r.IntN(6) == 0 {
			s.Pattern = pick("^[a-z]+$", "(?<=a)b")
		}
	case "integer", "number":
		if r.IntN(3) == 0 {
			f := 1.0
			s.Minimum = &f
		}
	case "object":
		if depth < 12 && r.IntN(8) != 0 {
			s.Properties = map[string]*toolenv.Schema{}
			for i := range 1 + r.IntN(4) {
				name := fmt.Sprintf("p%d", i)
				s.SetProp(name, genSchema(r, depth+1))
				if r.IntN(2) == 0 {
					s.Required = append(s.Required, name)
				}
			}
		}
		if r.IntN(6) == 0 {
			s.AdditionalProperties = json.RawMessage(pick("true", "false", `{"type":"string"}`))
		}
	case "array":
		if r.IntN(6) != 0 {
			s.Items = genSchema(r, depth+1)
		}
	case "":
		switch r.IntN(3) {
		case 0:
			s.AnyOf = []*toolenv.Schema{{Type: "string"}, {Type: "integer"}}
		case 1:
			s.OneOf = []*toolenv.Schema{{Type: "boolean"}, genSchema(r, depth+1)}
		}
	}
	return s
}

// TestStrictSchemaGenerated: on generated inputs, StrictSchema gives a
// schema CheckStrict accepts (every object closed, every property
// required) that keeps every property and its required-ness in
// non-null types, or says why it cannot; and the non-strict schemas
// toolenv lists today are refused by the checker (it is not vacuous).
func TestStrictSchemaGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	strict, refused := 0, 0
	for i := range 3000 {
		in := genSchema(r, 0)
		out, _, why := StrictSchema(in)
		if why != "" {
			refused++
			if !strings.Contains(why, "parameter") && !strings.Contains(why, "the parameters") {
				t.Errorf("%d: the reason names no parameter: %s", i, why)
			}
			continue
		}
		strict++
		if errs := CheckStrict(out); len(errs) > 0 {
			raw, _ := json.Marshal(in)
			t.Fatalf("%d: the strict form breaks the rules: %v\nin: %s", i, errs, raw)
		}
		if got, want := strings.Join(out.Names(), ","), strings.Join(in.Names(), ","); got != want {
			t.Fatalf("%d: properties %s, want %s", i, got, want)
		}
		for _, name := range in.Names() {
			p := out.Properties[name]
			optional := p.Nullable || hasNil(p.Enum) || len(p.AnyOf) > 0 && p.AnyOf[len(p.AnyOf)-1].Type == "null"
			if in.IsRequired(name) == optional && !in.Properties[name].Nullable {
				t.Fatalf("%d: %s required %v, but its strict form admits null: %v", i, name, in.IsRequired(name), optional)
			}
		}
		raw, _ := json.Marshal(in)
		if conv, _ := json.Marshal(out); string(conv) != string(raw) && len(CheckStrict(in)) == 0 {
			t.Fatalf("%d: the checker accepts a schema that was not made strict: %s", i, raw)
		}
	}
	if strict < 300 || refused < 300 {
		t.Fatalf("the generator is lopsided: %d strict, %d refused", strict, refused)
	}
}

// FuzzStrictSchema: any schema toolenv reads converts to a strict one
// that the checker accepts, or is refused with a reason; never a panic.
func FuzzStrictSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"q":{"type":"string","example_value":"x"}},"required":["q"],"optional":[]}`,
		`{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"const":1}]},"m":{"type":"object"}}}`,
		`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"enum":["x",null]}}}}}}`,
		`{"type":"object","properties":{"v":{"allOf":[{"type":"integer","minimum":1}]}}}`,
		`{"type":"object"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s toolenv.Schema
		if s.UnmarshalJSON(data) != nil || s.CheckDepth() != nil {
			return
		}
		out, _, why := StrictSchema(&s)
		if why != "" {
			return
		}
		if errs := CheckStrict(out); len(errs) > 0 {
			t.Fatalf("the strict form breaks the rules: %v\nin: %s", errs, data)
		}
	})
}
