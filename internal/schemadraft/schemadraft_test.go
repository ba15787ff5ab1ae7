package schemadraft

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// draftMaker generates schemas in the idioms of drafts 04 to 07: boolean
// exclusive bounds (04), tuples with additionalItems, dependencies of
// both kinds, lists of types, nested in properties, items, allOf/anyOf,
// definitions with $refs.
type draftMaker struct {
	rng   *rand.Rand
	draft string // "4", "6" or "7"
}

func (m *draftMaker) schema(depth int) map[string]any {
	if depth > 3 {
		return map[string]any{"type": "string"}
	}
	switch m.rng.IntN(8) {
	case 0, 1:
		s := map[string]any{"type": []any{"integer", "number"}[m.rng.IntN(2)], "minimum": m.rng.IntN(10), "maximum": 10 + m.rng.IntN(10)}
		if m.draft == "4" {
			s["exclusiveMinimum"] = m.rng.IntN(2) == 0
			s["exclusiveMaximum"] = m.rng.IntN(2) == 0
		} else if m.rng.IntN(2) == 0 {
			s["exclusiveMinimum"] = m.rng.IntN(10)
		}
		return s
	case 2:
		items := []any{m.schema(depth + 1), m.schema(depth + 1)}
		s := map[string]any{"type": "array", "items": items}
		switch m.rng.IntN(3) {
		case 0:
			s["additionalItems"] = false
		case 1:
			s["additionalItems"] = map[string]any{"type": "boolean"}
		}
		return s
	case 3:
		return map[string]any{"type": "array", "items": m.schema(depth + 1), "additionalItems": false, "maxItems": 3}
	case 4:
		return map[string]any{"type": []any{"string", "integer", "null"}[:2+m.rng.IntN(2)], "minLength": 2, "minimum": 3}
	case 5:
		return map[string]any{"anyOf": []any{m.schema(depth + 1), map[string]any{"type": "null"}}}
	}
	props := map[string]any{"a": m.schema(depth + 1), "b": m.schema(depth + 1), "c": map[string]any{"type": "string"}}
	o := map[string]any{"type": "object", "properties": props}
	switch m.rng.IntN(3) {
	case 0:
		o["dependencies"] = map[string]any{"a": []any{"b"}, "c": map[string]any{"required": []any{"a"}}}
	case 1:
		o["required"] = []any{"a"}
		if depth > 0 {
			break
		}
		o["definitions"] = map[string]any{"num": map[string]any{"type": "integer", "minimum": 0, "exclusiveMinimum": m.draft == "4"}}
		if m.draft != "4" {
			o["definitions"].(map[string]any)["num"].(map[string]any)["exclusiveMinimum"] = 0
		}
		props["n"] = map[string]any{"$ref": "#/definitions/num"}
	}
	return o
}

// value makes an instance near what schemas of the maker accept and
// reject: numbers at and around the bounds, lists of every length up to
// 4 of mixed items, objects with some of a, b, c, n.
func value(rng *rand.Rand, depth int) any {
	switch rng.IntN(7) {
	case 0:
		return json.Number(fmt.Sprint(rng.IntN(22) - 1))
	case 1:
		return json.Number(fmt.Sprintf("%d.5", rng.IntN(20)))
	case 2:
		return []string{"", "x", "ab", "abc"}[rng.IntN(4)]
	case 3:
		return rng.IntN(2) == 0
	case 4:
		return nil
	case 5:
		if depth > 3 {
			return nil
		}
		a := make([]any, rng.IntN(5))
		for i := range a {
			a[i] = value(rng, depth+1)
		}
		return a
	}
	if depth > 3 {
		return "x"
	}
	o := map[string]any{}
	for _, k := range []string{"a", "b", "c", "n"} {
		if rng.IntN(2) == 0 {
			o[k] = value(rng, depth+1)
		}
	}
	return o
}

func compile(t *testing.T, doc any, draft *jsonschema.Draft) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(draft)
	if err := c.AddResource("test:schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("test:schema.json")
	if err != nil {
		t.Fatalf("%v\n%s", err, mustJSON(doc))
	}
	return s
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// reparse gives a value as the validator reads JSON (numbers as
// json.Number).
func reparse(t *testing.T, v any) any {
	t.Helper()
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(mustJSON(v)))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNormalizedSchemasMeanTheSame: schemas in the idioms of drafts 04,
// 06 and 07, compiled as their draft, and their normalized form,
// compiled as 2020-12, accept and refuse the same instances (a JSON
// Schema validator, 40,000 instances over 1,200 schemas); the normalized
// form compiles against the 2020-12 metaschema, which the original (a
// boolean exclusiveMinimum, a tuple) does not always.
func TestNormalizedSchemasMeanTheSame(t *testing.T) {
	drafts := map[string]*jsonschema.Draft{"4": jsonschema.Draft4, "6": jsonschema.Draft6, "7": jsonschema.Draft7}
	rng := rand.New(rand.NewPCG(29, 404))
	changed, refusedBefore := 0, 0
	for _, d := range []string{"4", "6", "7"} {
		m := &draftMaker{rng: rng, draft: d}
		for range 400 {
			orig := reparse(t, m.schema(0))
			norm, ch := Normalize(orig)
			if ch {
				changed++
			}
			before := compile(t, orig, drafts[d])
			c := jsonschema.NewCompiler()
			if c.AddResource("test:orig.json", orig) == nil {
				if _, err := c.Compile("test:orig.json"); err != nil {
					refusedBefore++
				}
			}
			after := compile(t, norm, jsonschema.Draft2020)
			for range 33 {
				v := reparse(t, value(rng, 0))
				e1, e2 := before.Validate(v), after.Validate(v)
				if (e1 == nil) != (e2 == nil) {
					t.Fatalf("draft-0%s schema %s\nnormalized %s\ninstance %s: valid before %v, after %v (%v / %v)", d, mustJSON(orig), mustJSON(norm), mustJSON(v), e1 == nil, e2 == nil, e1, e2)
				}
			}
		}
	}
	if changed < 600 || refusedBefore < 100 {
		t.Errorf("the corpus is too tame: %d schemas changed, %d refused as 2020-12 before", changed, refusedBefore)
	}
}

func TestDraft03AndOpenAPI30(t *testing.T) {
	in := `{"$schema":"http://json-schema.org/draft-03/schema#","type":"object","extends":{"type":"object"},
		"properties":{"page":{"type":"integer","required":true,"divisibleBy":2},"name":{"type":"string","nullable":true},
		"any":{"type":"any"},"who":{"type":["string","integer"],"x-nullable":true}},"dependencies":{"page":"name"}}`
	got := string(NormalizeJSON([]byte(in)))
	var v map[string]any
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatal(err)
	}
	props := v["properties"].(map[string]any)
	checks := map[string]bool{
		"no $schema":            v["$schema"] == nil,
		"required lifted":       fmt.Sprint(v["required"]) == "[page]",
		"multipleOf":            fmt.Sprint(props["page"].(map[string]any)["multipleOf"]) == "2",
		"extends is allOf":      v["allOf"] != nil && v["extends"] == nil,
		"nullable type":         fmt.Sprint(props["name"].(map[string]any)["type"]) == "[string null]",
		"any goes":              props["any"].(map[string]any)["type"] == nil,
		"types as anyOf":        len(props["who"].(map[string]any)["anyOf"].([]any)) == 3,
		"dependentRequired":     fmt.Sprint(v["dependentRequired"]) == "map[page:[name]]",
		"no draft-03 leftovers": props["page"].(map[string]any)["required"] == nil && props["page"].(map[string]any)["divisibleBy"] == nil,
	}
	for name, ok := range checks {
		if !ok {
			t.Errorf("%s: %s", name, got)
		}
	}
	c := jsonschema.NewCompiler()
	doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(got)))
	if err := c.AddResource("test:x.json", doc); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile("test:x.json"); err != nil {
		t.Errorf("the normalized schema does not compile as 2020-12: %v", err)
	}
	same := `{"type":"object","properties":{"n":{"type":"integer","exclusiveMinimum":0}}}`
	if got := NormalizeJSON([]byte(same)); string(got) != same {
		t.Errorf("a 2020-12 schema changed: %s", got)
	}
}
