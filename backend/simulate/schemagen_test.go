package simulate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/schemacheck"
)

// schemaMaker generates output schemas of the shapes real API
// descriptions use, adversarially combined, each satisfiable: formats,
// patterns, lengths, bounds (exclusive, multipleOf), enums and consts,
// arrays with item bounds and uniqueness, objects with required members
// (some inherited through allOf, some not declared), additionalProperties
// false, minProperties, pattern properties, discriminated oneOf, anyOf
// with null, nullable types and $ref into $defs.
type schemaMaker struct {
	rng  *rand.Rand
	defs map[string]any
}

var (
	genFormats  = []string{"date", "date-time", "time", "email", "uri", "uuid", "byte", "ipv4", "ipv6", "hostname", "uri-reference", "duration", "int32"}
	genPatterns = []string{`^[A-Z]{3}$`, `^[0-9]{13}$`, `^\d{4}-\d{2}$`, `^[a-z0-9_-]{3,16}$`, `^(ok|fail|pending)$`, `^\+?[1-9]\d{1,14}$`,
		`^[A-Za-z0-9+/]*={0,2}$`, `^#[0-9a-fA-F]{6}$`, `sku-\d+`, `^v\d+\.\d+\.\d+$`, `^[A-Z][a-z]+( [A-Z][a-z]+)*$`, `\S+@\S+`,
		`^[^\s]+$`, `^(\([0-9]{3}\))?[0-9]{3}-[0-9]{4}$`, `^https?://`, `^[a-f0-9]{40}$`}
	genNames = []string{"id", "name", "title", "created_at", "email", "url", "status", "count", "total", "price", "rate", "items",
		"data", "results", "tags", "isbn", "code", "currency", "amount", "date", "uuid", "payload", "kind", "next", "meta", "score"}
)

func (m *schemaMaker) name(i int) string {
	n := genNames[m.rng.IntN(len(genNames))]
	if m.rng.IntN(3) == 0 {
		n = fmt.Sprintf("%s_%d", n, i)
	}
	return n
}

func (m *schemaMaker) scalar() map[string]any {
	switch m.rng.IntN(9) {
	case 0, 1:
		s := map[string]any{"type": "string"}
		switch m.rng.IntN(4) {
		case 0:
			f := genFormats[m.rng.IntN(len(genFormats))]
			if f == "int32" {
				return map[string]any{"type": "integer", "format": f}
			}
			s["format"] = f
		case 1:
			s["pattern"] = genPatterns[m.rng.IntN(len(genPatterns))]
		case 2:
			lo := m.rng.IntN(6)
			s["minLength"] = lo
			s["maxLength"] = lo + m.rng.IntN(12)
		}
		return s
	case 2:
		return map[string]any{"type": "string", "enum": []any{"alpha", "beta", "gamma"}[:1+m.rng.IntN(3)]}
	case 3:
		s := map[string]any{"type": "integer"}
		lo := m.rng.IntN(200) - 100
		if m.rng.IntN(2) == 0 {
			s["minimum"] = lo
		} else {
			s["exclusiveMinimum"] = lo
		}
		if m.rng.IntN(2) == 0 {
			s["maximum"] = lo + 1 + m.rng.IntN(500)
		}
		if m.rng.IntN(3) == 0 {
			s["multipleOf"] = []int{2, 5, 10, 7}[m.rng.IntN(4)]
			s["maximum"] = lo + 40 + m.rng.IntN(500)
		}
		return s
	case 4:
		s := map[string]any{"type": "number"}
		if m.rng.IntN(2) == 0 {
			s["exclusiveMinimum"] = 0
			s["exclusiveMaximum"] = 1
		} else {
			s["minimum"] = -5.5
			s["maximum"] = 1e6
			if m.rng.IntN(2) == 0 {
				s["multipleOf"] = 0.25
			}
		}
		return s
	case 5:
		return map[string]any{"type": "boolean"}
	case 6:
		return map[string]any{"const": []any{"v1", 3, true}[m.rng.IntN(3)]}
	case 7:
		s := m.scalar()
		if t, ok := s["type"].(string); ok {
			s["type"] = []any{t, "null"}
		}
		return s
	}
	return map[string]any{"type": "string", "format": "date-time"}
}

func (m *schemaMaker) value(depth int) map[string]any {
	if depth > 3 {
		return m.scalar()
	}
	switch m.rng.IntN(12) {
	case 0, 1:
		return m.object(depth + 1)
	case 2:
		a := map[string]any{"type": "array", "items": m.value(depth + 1)}
		if m.rng.IntN(2) == 0 {
			lo := m.rng.IntN(3)
			a["minItems"] = lo
			a["maxItems"] = lo + m.rng.IntN(4)
		}
		if m.rng.IntN(3) == 0 {
			a["items"] = map[string]any{"type": "string", "pattern": `^[a-z]{2,8}$`}
			a["uniqueItems"] = true
		}
		return a
	case 3: // anyOf with null
		return map[string]any{"anyOf": []any{m.value(depth + 1), map[string]any{"type": "null"}}}
	case 4: // a discriminated union
		var branches []any
		for i := range 2 + m.rng.IntN(2) {
			b := m.object(depth + 1)
			props, ok := b["properties"].(map[string]any)
			if !ok { // an allOf: wrap it
				props = map[string]any{}
				b = map[string]any{"type": "object", "allOf": []any{b}, "properties": props, "required": []any{}}
			}
			props["kind"] = map[string]any{"const": fmt.Sprintf("kind%d", i)}
			req := b["required"].([]any)
			if !slices.Contains(req, any("kind")) {
				b["required"] = append(req, "kind")
			}
			branches = append(branches, b)
		}
		return map[string]any{"oneOf": branches}
	case 5: // oneOf of types
		return map[string]any{"oneOf": []any{map[string]any{"type": "string", "format": "email"}, map[string]any{"type": "integer", "minimum": 1}}}
	case 6: // a $ref
		name := fmt.Sprintf("Def%d", len(m.defs))
		m.defs[name] = nil // taken: a $ref inside it names another
		m.defs[name] = m.object(depth + 1)
		return map[string]any{"$ref": "#/$defs/" + name}
	}
	return m.scalar()
}

func (m *schemaMaker) object(depth int) map[string]any {
	props := map[string]any{}
	required := []any{}
	for i := range 1 + m.rng.IntN(5) {
		n := m.name(i)
		if _, dup := props[n]; dup {
			continue
		}
		props[n] = m.value(depth)
		if m.rng.IntN(2) == 0 {
			required = append(required, n)
		}
	}
	o := map[string]any{"type": "object", "properties": props, "required": required}
	switch m.rng.IntN(6) {
	case 0:
		o["additionalProperties"] = false
	case 1: // a required member not declared
		o["required"] = append(required, "undeclared_member")
	case 2:
		o["minProperties"] = len(props) + 1
	case 3: // required members inherited through allOf
		base := map[string]any{"type": "object", "properties": map[string]any{"base_id": map[string]any{"type": "string", "format": "uuid"},
			"base_code": map[string]any{"type": "string", "pattern": `^[A-Z]{2}-\d{3}$`}}, "required": []any{"base_id", "base_code"}}
		return map[string]any{"allOf": []any{base, o, map[string]any{"required": []any{"extra_flag"}, "properties": map[string]any{"extra_flag": map[string]any{"type": "boolean"}}}}}
	case 4:
		o["patternProperties"] = map[string]any{`^x-`: map[string]any{"type": "string"}}
	}
	return o
}

// root returns an object schema (as MCP requires of output schemas) with
// the $defs its $refs use.
func (m *schemaMaker) root() *toolenv.Schema {
	m.defs = map[string]any{}
	o := m.object(0)
	if len(m.defs) > 0 {
		o["$defs"] = m.defs
	}
	raw, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	var s toolenv.Schema
	if err := s.UnmarshalJSON(raw); err != nil {
		panic(err)
	}
	return &s
}

// TestSynthesizedAnswersConformToGeneratedSchemas makes 300 output
// schemas with the maker above, and for each a few calls, with and
// without recorded answers (some of which break the schema): every
// synthesized answer conforms, as a JSON Schema 2020-12 validator with
// Ajv's formats and patterns (what MCP clients run) checks it, and the
// same call gives the same bytes.
func TestSynthesizedAnswersConformToGeneratedSchemas(t *testing.T) {
	m := &schemaMaker{rng: rand.New(rand.NewPCG(29, 4))}
	s := NewSynthesizer(SynthOptions{})
	ctx := context.Background()
	failed := 0
	for i := range 300 {
		out := m.root()
		c, err := schemacheck.Compile(out)
		if err != nil {
			t.Fatalf("schema %d does not compile: %v", i, err)
		}
		in := toolenv.ObjectSchema()
		in.SetProp("q", &toolenv.Schema{Type: "string"})
		in.SetProp("limit", &toolenv.Schema{Type: "integer"})
		tool := &toolenv.Tool{ID: fmt.Sprintf("gen/op%d", i), Name: fmt.Sprintf("op%d", i), Input: in, Output: out}
		// Recorded answers: one made for another call, one that breaks
		// the schema (a string where anything is wanted).
		first := s.Invoke(ctx, &toolenv.Call{Tool: tool, Args: map[string]any{"q": "first"}})
		tool.Examples = []toolenv.Example{
			{Args: map[string]any{"q": "first"}, Response: first.Body},
			{Args: map[string]any{"q": "broken"}, Response: json.RawMessage(`{"id": 5, "items": "none", "status": null}`)},
		}
		for _, args := range []map[string]any{{"q": "a"}, {"q": "broken"}, {"q": "x", "limit": json.Number(fmt.Sprint(i % 4))}, {}} {
			call := &toolenv.Call{Tool: tool, Args: args}
			r1 := s.Invoke(ctx, call)
			r2 := s.Invoke(ctx, call)
			if !bytes.Equal(r1.Body, r2.Body) {
				t.Fatalf("schema %d: two answers differ", i)
			}
			if p := c.Check(r1.Body); p != nil {
				failed++
				if failed <= 5 {
					raw, _ := out.MarshalJSON()
					t.Errorf("schema %d, call %v: the answer breaks its schema: %s\nschema: %s\nanswer: %s\nwarnings: %v", i, args, strings.Join(p, "; "), raw, r1.Body, r1.Warnings)
				}
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d answers break their schema", failed)
	}
}

// TestPatternStrings: a string made from a pattern matches it, within the
// length bounds, for patterns real APIs write.
func TestPatternStrings(t *testing.T) {
	for _, p := range append(genPatterns, `^[0-9]{3}(-[0-9]{4})?$`, `^\w+$`, `[0-9]`, `^.{5,}$`, `^[^@]+@[^@]+\.[a-z]{2,}$`) {
		for h := range uint64(20) {
			s, ok := patternString(p, 0, -1, h)
			if !ok || !patternMatches(p, s) {
				t.Errorf("pattern %q: %q (%v)", p, s, ok)
			}
		}
	}
	if s, ok := patternString(`^[a-z]+$`, 6, 8, 3); !ok || len(s) < 6 || len(s) > 8 {
		t.Errorf("length bounds: %q %v", s, ok)
	}
}
