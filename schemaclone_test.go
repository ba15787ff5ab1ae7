package toolenv

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// cloneFieldSamples sets each field of Schema to a value the JSON round
// trip keeps (so a clone that drops it differs from the round trip and is
// zero where it should not be). TestSchemaCloneCopiesEveryField fails for
// a field missing here: a new field must be taught to cloneSchema (and
// MarshalJSON/UnmarshalJSON) and then listed.
var cloneFieldSamples = map[string]func(*Schema){
	"Type":                 func(s *Schema) { s.Type = "string" },
	"Nullable":             func(s *Schema) { s.Type, s.Nullable = "integer", true },
	"Title":                func(s *Schema) { s.Title = "a title" },
	"Description":          func(s *Schema) { s.Description = "says <what> & why" },
	"Properties":           func(s *Schema) { s.SetProp("a", &Schema{Type: "string"}) },
	"Order":                func(s *Schema) { s.SetProp("b", &Schema{}); s.SetProp("a", &Schema{}) },
	"Required":             func(s *Schema) { s.Required = []string{"a"} },
	"Items":                func(s *Schema) { s.Items = &Schema{Type: "number"} },
	"Enum":                 func(s *Schema) { s.Enum = []any{"x", json.Number("2")} },
	"Const":                func(s *Schema) { s.Const = "c" },
	"Default":              func(s *Schema) { s.Default = map[string]any{"k": []any{true}} },
	"Examples":             func(s *Schema) { s.Examples = []any{"e"} },
	"Format":               func(s *Schema) { s.Format = "date" },
	"Pattern":              func(s *Schema) { s.Pattern = "^a+$" },
	"Minimum":              func(s *Schema) { s.Minimum = ptr(1.5) },
	"Maximum":              func(s *Schema) { s.Maximum = ptr(-2.0) },
	"MinLength":            func(s *Schema) { s.MinLength = ptr(1) },
	"MaxLength":            func(s *Schema) { s.MaxLength = ptr(9) },
	"MinItems":             func(s *Schema) { s.MinItems = ptr(0) },
	"MaxItems":             func(s *Schema) { s.MaxItems = ptr(3) },
	"AnyOf":                func(s *Schema) { s.AnyOf = []*Schema{{Type: "string"}} },
	"OneOf":                func(s *Schema) { s.OneOf = []*Schema{{Type: "integer"}} },
	"AllOf":                func(s *Schema) { s.AllOf = []*Schema{{Title: "t"}} },
	"Ref":                  func(s *Schema) { s.Ref = "#/$defs/x" },
	"Deprecated":           func(s *Schema) { s.Deprecated = true },
	"AdditionalProperties": func(s *Schema) { s.AdditionalProperties = json.RawMessage(`false`) },
	"Extra":                func(s *Schema) { s.Extra = map[string]json.RawMessage{"x-a": json.RawMessage(`{"b":1}`)} },
}

func ptr[T any](v T) *T { return &v }

// TestSchemaCloneCopiesEveryField walks Schema's fields by reflection: each
// must have a sample, and a schema with only that field set must clone to
// what the JSON round trip gives, with the field still set.
func TestSchemaCloneCopiesEveryField(t *testing.T) {
	typ := reflect.TypeFor[Schema]()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		t.Run(name, func(t *testing.T) {
			set, ok := cloneFieldSamples[name]
			if !ok {
				t.Fatalf("Schema.%s has no sample in cloneFieldSamples: copy it in cloneSchema (schemaclone.go), then add a sample", name)
			}
			s := &Schema{}
			set(s)
			if reflect.ValueOf(s).Elem().Field(i).IsZero() {
				t.Fatalf("the sample for %s leaves it zero", name)
			}
			c := s.Clone()
			if reflect.ValueOf(c).Elem().Field(i).IsZero() {
				t.Fatalf("Clone dropped %s: %#v", name, c)
			}
			if want := cloneSchemaJSON(s); !reflect.DeepEqual(c, want) {
				t.Fatalf("Clone differs from the JSON round trip:\n got %#v\nwant %#v", c, want)
			}
			assertNoSharedMemory(t, s, c)
		})
	}
}

// TestSchemaCloneEqualsRoundTrip checks Clone against the JSON round trip
// it replaced on generated schemas: odd type/nullable pairs, partial and
// duplicate orders, nil and empty maps and lists, nil members, Go values
// of every kind in enum/const/default/examples, raw keywords with spaces,
// Extra keys that are also keywords, and strings that are not UTF-8.
func TestSchemaCloneEqualsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 1))
	for i := range 800 {
		s := genCloneSchema(r, 0)
		want := cloneSchemaJSON(s)
		got := s.Clone()
		if !reflect.DeepEqual(got, want) {
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			t.Fatalf("schema %d: Clone differs from the JSON round trip\n got %#v\n     %s\nwant %#v\n     %s", i, got, gb, want, wb)
		}
		assertNoSharedMemory(t, s, got)
		// The clone is a value of its own: changing it leaves s as it was.
		before, _ := json.Marshal(s)
		got.SetProp("added", &Schema{})
		got.Required = append(got.Required, "added")
		if got.Items != nil {
			got.Items.Title = "changed"
		}
		if after, _ := json.Marshal(s); string(before) != string(after) {
			t.Fatalf("schema %d: changing the clone changed the original:\n%s\n%s", i, before, after)
		}
	}
}

// TestSchemaCloneOfSelfContainingSchema: a schema that contains itself
// cannot be copied; Clone says so instead of exhausting the stack.
func TestSchemaCloneOfSelfContainingSchema(t *testing.T) {
	s := &Schema{Type: "object"}
	s.SetProp("self", s)
	defer func() {
		msg := fmt.Sprint(recover())
		if !strings.Contains(msg, "contains itself") {
			t.Fatalf("recovered %q, want a panic saying the schema contains itself", msg)
		}
	}()
	s.Clone()
	t.Fatal("Clone of a self-containing schema returned")
}

// TestSchemaCloneOfUnmarshalableValue: a value JSON cannot hold is copied
// as it is (the round trip panicked).
func TestSchemaCloneOfUnmarshalableValue(t *testing.T) {
	s := &Schema{Type: "number", Default: math.Inf(1), AdditionalProperties: json.RawMessage(`{bad`)}
	c := s.Clone()
	if d, ok := c.Default.(float64); !ok || !math.IsInf(d, 1) {
		t.Fatalf("Default = %#v, want +Inf", c.Default)
	}
	if string(c.AdditionalProperties) != `{bad` {
		t.Fatalf("AdditionalProperties = %s", c.AdditionalProperties)
	}
}

func FuzzSchemaClone(f *testing.F) {
	f.Add([]byte(`{"type":["string","null"],"properties":{"b":{},"a":{"enum":[1,1.5e3,"x",null,{"k":[true]}]}},"required":["a"],"x-k":{ "v" : 1 },"additionalProperties":{"type":"integer"}}`))
	f.Add([]byte(`{"type":["null","null"],"anyOf":[{"minimum":-0},{"maximum":1e300}],"default":"\ud800"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Schema
		if err := json.Unmarshal(data, &s); err != nil {
			return
		}
		if got, want := s.Clone(), cloneSchemaJSON(&s); !reflect.DeepEqual(got, want) {
			t.Fatalf("Clone differs from the JSON round trip for %s:\n got %#v\nwant %#v", data, got, want)
		}
	})
}

func BenchmarkSchemaClone(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 7))
	var schemas []*Schema
	for range 64 {
		schemas = append(schemas, genCloneSchema(r, 0))
	}
	b.Run("deep-copy", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			schemas[i%len(schemas)].Clone()
		}
	})
	b.Run("json-round-trip", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			cloneSchemaJSON(schemas[i%len(schemas)])
		}
	})
}

// genCloneSchema generates a schema whose JSON form is valid (the round
// trip panics otherwise) but otherwise as odd as a Go program may build.
func genCloneSchema(r *rand.Rand, depth int) *Schema {
	s := &Schema{}
	maybe := func() bool { return r.IntN(3) == 0 }
	if maybe() || depth == 0 {
		s.Type = pick(r, "", "object", "string", "integer", "number", "boolean", "array", "null", "str\xffing")
		s.Nullable = r.IntN(2) == 0
	}
	if maybe() {
		s.Title = genCloneString(r)
	}
	if maybe() {
		s.Description = genCloneString(r)
	}
	if maybe() {
		s.Format, s.Pattern, s.Ref = genCloneString(r), genCloneString(r), genCloneString(r)
	}
	if depth < 3 && maybe() {
		switch r.IntN(4) {
		case 0:
			s.Properties = map[string]*Schema{} // empty, not nil
		default:
			s.Properties = map[string]*Schema{}
			for range r.IntN(5) {
				name := genCloneString(r)
				switch r.IntN(6) {
				case 0:
					s.Properties[name] = nil
				default:
					s.Properties[name] = genCloneSchema(r, depth+1)
				}
				if r.IntN(3) > 0 {
					s.Order = append(s.Order, name)
				}
				if r.IntN(6) == 0 {
					s.Order = append(s.Order, name) // a duplicate
				}
			}
			if r.IntN(5) == 0 {
				s.Order = append(s.Order, "undeclared")
			}
		}
	} else if maybe() {
		s.Order = []string{"orphan"} // order without properties
	}
	if maybe() {
		s.Required = []string{}
		for range r.IntN(3) {
			s.Required = append(s.Required, genCloneString(r))
		}
	}
	if depth < 3 && maybe() {
		s.Items = genCloneSchema(r, depth+1)
	}
	if maybe() {
		s.Enum = []any{}
		for range r.IntN(4) {
			s.Enum = append(s.Enum, genCloneValue(r, 0))
		}
	}
	if maybe() {
		s.Const = genCloneValue(r, 0)
	}
	if maybe() {
		s.Default = genCloneValue(r, 0)
	}
	if maybe() {
		s.Examples = []any{genCloneValue(r, 0)}
	}
	if maybe() {
		s.Minimum = ptr(pick(r, 0.0, math.Copysign(0, -1), 1e-7, 123456789.125, -1e300, 0.1))
		s.Maximum = ptr(pick(r, 1.0, 2.5e21, -3.0))
	}
	if maybe() {
		s.MinLength, s.MaxLength = ptr(r.IntN(3)), ptr(r.IntN(100))
		s.MinItems, s.MaxItems = ptr(0), ptr(math.MaxInt32)
	}
	if depth < 3 {
		lists := []*[]*Schema{&s.AnyOf, &s.OneOf, &s.AllOf}
		for _, l := range lists {
			if maybe() {
				*l = []*Schema{}
				for range r.IntN(3) {
					if r.IntN(5) == 0 {
						*l = append(*l, nil)
					} else {
						*l = append(*l, genCloneSchema(r, depth+1))
					}
				}
			}
		}
	}
	if maybe() {
		s.AdditionalProperties = json.RawMessage(pick(r, `false`, `{"description": "<b> & </b>"}`, ` { "type" : "string" } `, "", `true`, `[ 1,2 ]`))
	}
	s.Deprecated = r.IntN(8) == 0
	if maybe() {
		s.Extra = map[string]json.RawMessage{}
		for range r.IntN(4) {
			key := pick(r, "x-a", "x-b", "$defs", "not", "x-\xfe", "x-\xff")
			s.Extra[key] = json.RawMessage(pick(r, `1`, ` "s" `, `"https://x.example/?a=1&b=<2>"`, "\"line\u2028sep\"", `{"k": "a & b"}`, `{"a": [1, {"b":null}]}`, `true`, `{"type":"boolean"}`, `1.5`, `["x","null"]`))
			if r.IntN(8) == 0 {
				s.Extra[key] = nil // written as null
			}
		}
		if maybe() { // a keyword a named field holds, with a value it reads
			kv := pick(r,
				[2]string{"type", `["x","null"]`}, [2]string{"nullable", `true`}, [2]string{"minimum", ` 1.5`},
				[2]string{"examples", `[1, "a"]`}, [2]string{"properties", `{"b":{"type":"boolean"},"a":{}}`},
				[2]string{"additionalProperties", `{ }`}, [2]string{"required", `[]`})
			s.Extra[kv[0]] = json.RawMessage(kv[1])
		}
	}
	return s
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func genCloneString(r *rand.Rand) string {
	return pick(r, "a", "b", "name", "", "<tag> & co", "line\u2028sep", "bad\xffbyte", "\xc3", "é", "tab\there", `quote"d`, "a")
}

type cloneStruct struct {
	A int    `json:"a"`
	B string `json:"b,omitempty"`
}

func genCloneValue(r *rand.Rand, depth int) any {
	n := 14
	if depth > 2 {
		n = 10
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return genCloneString(r)
	case 3:
		return r.IntN(1000) - 500
	case 4:
		return pick(r, 0.5, 1e21, 1e-7, -0.0, 3.0, 123456.789)
	case 5:
		return json.Number(pick(r, "1", "-2.50", "1e3", "", "0"))
	case 6:
		return int64(-1 << 60)
	case 7:
		return pick[any](r, float32(1.1), uint8(7), (*int)(nil), cloneStruct{A: 1}, json.RawMessage(` {"r" : 1} `))
	case 8:
		return []any(nil)
	case 9:
		return map[string]any(nil)
	case 10, 11:
		m := map[string]any{}
		for range r.IntN(3) {
			m[genCloneString(r)] = genCloneValue(r, depth+1)
		}
		return m
	default:
		l := []any{}
		for range r.IntN(3) {
			l = append(l, genCloneValue(r, depth+1))
		}
		return l
	}
}

// assertNoSharedMemory fails when the clone shares a pointer, map or
// slice's backing array with the original (strings may be shared: they do
// not change).
func assertNoSharedMemory(t *testing.T, orig, clone *Schema) {
	t.Helper()
	seen := map[uintptr]string{}
	collectRefs(reflect.ValueOf(orig), "orig", seen, map[uintptr]bool{})
	found := map[uintptr]string{}
	collectRefs(reflect.ValueOf(clone), "clone", found, map[uintptr]bool{})
	for p, where := range found {
		if o, ok := seen[p]; ok {
			t.Fatalf("the clone's %s shares memory with the original's %s", where, o)
		}
	}
}

func collectRefs(v reflect.Value, path string, out map[uintptr]string, visited map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		p := v.Pointer()
		out[p] = path
		if visited[p] {
			return
		}
		visited[p] = true
		collectRefs(v.Elem(), path, out, visited)
	case reflect.Interface:
		if !v.IsNil() {
			collectRefs(v.Elem(), path, out, visited)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		out[v.Pointer()] = path
		it := v.MapRange()
		for it.Next() {
			collectRefs(it.Value(), fmt.Sprintf("%s[%v]", path, it.Key()), out, visited)
		}
	case reflect.Slice:
		if v.IsNil() || v.Cap() == 0 {
			return
		}
		out[v.Pointer()] = path
		for i := range v.Len() {
			collectRefs(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out, visited)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				collectRefs(v.Field(i), path+"."+v.Type().Field(i).Name, out, visited)
			}
		}
	}
}
