package openapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	toolenv "github.com/toolenv/toolenv"
)

// direction says which side of a call a schema describes: request
// schemas leave out readOnly properties, response schemas writeOnly ones.
type direction int

const (
	request direction = iota
	response
)

// maxSchemaDepth bounds the nesting converted; an operation with a deeper
// schema does not load (what toolenv.MaxSchemaDepth refuses in tools.json,
// with room for the levels a body or a $ref adds).
const maxSchemaDepth = 48

// maxSchemaNodes bounds the nodes of one converted schema (a parameter's,
// a body's, a response's). Inlining $refs can multiply a document's size
// (each level of schemas that use the next one twice doubles it); past
// the budget, $refs stay unexpanded placeholders. Real schemas stay far
// below it.
const maxSchemaNodes = 20_000

// schemaConverter converts kin-openapi schemas into toolenv schemas,
// inlining $refs (tool schemas must stand alone), keeping property order
// from the source, and cutting recursion.
type schemaConverter struct {
	order  *sourceOrder
	memo   map[string]*toolenv.Schema // by resolved place and direction
	size   map[string]int             // nodes of each memoized schema
	active map[string]bool            // refs being converted: recursion
	depth  int
	nodes  int  // nodes of the schema being converted, inlined copies included
	capped bool // the budget ran out somewhere
	deep   bool // a schema nested deeper than maxSchemaDepth
}

func newSchemaConverter(order *sourceOrder) *schemaConverter {
	return &schemaConverter{order: order, memo: map[string]*toolenv.Schema{}, size: map[string]int{}, active: map[string]bool{}}
}

// top converts one whole schema (a parameter's, a body's, a response's)
// with a fresh node budget.
func (cv *schemaConverter) top(sr *openapi3.SchemaRef, at place, dir direction) *toolenv.Schema {
	cv.nodes = 0
	return cv.convert(sr, at, dir)
}

// convert returns the toolenv schema of sr, found at at in the source.
// A nil sr gives nil.
func (cv *schemaConverter) convert(sr *openapi3.SchemaRef, at place, dir direction) *toolenv.Schema {
	if sr == nil {
		return nil
	}
	if sr.Ref != "" {
		at = cv.order.resolve(at, sr.Ref)
		key := at.String() + "|" + strconv.Itoa(int(dir))
		if s, ok := cv.memo[key]; ok {
			if cv.nodes+cv.size[key] > maxSchemaNodes {
				cv.capped = true
				return unexpanded(sr)
			}
			cv.nodes += cv.size[key]
			return cloneSchema(s)
		}
		if cv.active[key] {
			return recursive(sr)
		}
		cv.active[key] = true
		before := cv.nodes
		s := cv.value(sr.Value, at, dir)
		delete(cv.active, key)
		cv.memo[key] = s
		cv.size[key] = cv.nodes - before
		return cloneSchema(s)
	}
	return cv.value(sr.Value, at, dir)
}

// recursive is what a schema that contains itself becomes at its second
// appearance: its type, and a description naming it.
func recursive(sr *openapi3.SchemaRef) *toolenv.Schema {
	name := sr.Ref[strings.LastIndex(sr.Ref, "/")+1:]
	s := &toolenv.Schema{Description: fmt.Sprintf("recursive: another %s, with the same schema as the enclosing one", name)}
	if sr.Value != nil && sr.Value.Type != nil {
		if ts := nonNull(sr.Value.Type.Slice()); len(ts) == 1 {
			s.Type = ts[0]
		}
	}
	return s
}

// unexpanded stands for a $ref left out because the document's schemas
// are over the size budget.
func unexpanded(sr *openapi3.SchemaRef) *toolenv.Schema {
	s := recursive(sr)
	s.Description = fmt.Sprintf("%s (not expanded: the document's schemas are too large to inline)", sr.Ref)
	return s
}

func nonNull(types []string) []string {
	var out []string
	for _, t := range types {
		if t != "null" {
			out = append(out, t)
		}
	}
	return out
}

func (cv *schemaConverter) value(s *openapi3.Schema, at place, dir direction) *toolenv.Schema {
	if s == nil {
		return &toolenv.Schema{}
	}
	if cv.depth >= maxSchemaDepth {
		cv.deep = true
		return &toolenv.Schema{Description: fmt.Sprintf("(nested more than %d levels deep; not converted)", maxSchemaDepth)}
	}
	cv.nodes++
	cv.depth++
	defer func() { cv.depth-- }()
	out := &toolenv.Schema{
		Title: s.Title, Description: s.Description, Format: s.Format, Pattern: s.Pattern, Deprecated: s.Deprecated,
	}
	if s.Always != nil { // a JSON Schema boolean schema
		if !*s.Always {
			setExtra(out, "not", json.RawMessage("{}"))
		}
		return out
	}
	cv.types(out, s)
	if len(s.Enum) > 0 {
		out.Enum = make([]any, len(s.Enum))
		for i, v := range s.Enum {
			out.Enum[i] = jsonValue(v)
		}
	}
	if s.Const != nil {
		out.Const = jsonValue(s.Const)
	}
	if s.Default != nil {
		out.Default = jsonValue(s.Default)
	}
	if s.Example != nil {
		out.Examples = append(out.Examples, jsonValue(s.Example))
	}
	for _, ex := range s.Examples {
		out.Examples = append(out.Examples, jsonValue(ex))
	}
	cv.bounds(out, s)
	cv.object(out, s, at, dir)
	if s.Items != nil {
		out.Items = cv.convert(s.Items, at.child("items"), dir)
	}
	out.AllOf = cv.list(s.AllOf, at, "allOf", dir)
	out.AnyOf = append(out.AnyOf, cv.list(s.AnyOf, at, "anyOf", dir)...)
	out.OneOf = cv.list(s.OneOf, at, "oneOf", dir)
	if s.Not != nil {
		setExtra(out, "not", cv.convert(s.Not, at.child("not"), dir))
	}
	if len(s.PrefixItems) > 0 {
		setExtra(out, "prefixItems", cv.list(s.PrefixItems, at, "prefixItems", dir))
	}
	if s.ReadOnly {
		setExtra(out, "readOnly", true)
	}
	if s.WriteOnly {
		setExtra(out, "writeOnly", true)
	}
	if s.Discriminator != nil && s.Discriminator.PropertyName != "" {
		setExtra(out, "discriminator", map[string]string{"propertyName": s.Discriminator.PropertyName})
	}
	for k, v := range s.Extensions {
		if strings.HasPrefix(k, "x-") {
			setExtra(out, k, jsonValue(v))
		}
	}
	return out
}

// types sets Type and Nullable from 3.1 type arrays and 3.0 nullable. A
// schema of several non-null types gets them as anyOf alternatives.
func (cv *schemaConverter) types(out *toolenv.Schema, s *openapi3.Schema) {
	all := s.Type.Slice()
	ts := nonNull(all)
	switch {
	case len(ts) == 1:
		out.Type = ts[0]
		out.Nullable = len(all) > 1 || s.Nullable
	case len(ts) > 1:
		for _, t := range ts {
			out.AnyOf = append(out.AnyOf, &toolenv.Schema{Type: t})
		}
		if len(all) > len(ts) || s.Nullable {
			out.AnyOf = append(out.AnyOf, &toolenv.Schema{Type: "null"})
		}
	case len(all) > 0: // only "null"
		out.Type = "null"
	}
}

// bounds copies the numeric, string, array and object limits. 3.0's
// boolean exclusiveMinimum/Maximum become 2020-12's numeric keywords.
func (cv *schemaConverter) bounds(out *toolenv.Schema, s *openapi3.Schema) {
	out.Minimum, out.Maximum = s.Min, s.Max
	if s.ExclusiveMin.Value != nil {
		setExtra(out, "exclusiveMinimum", *s.ExclusiveMin.Value)
	} else if s.ExclusiveMin.IsTrue() && s.Min != nil {
		setExtra(out, "exclusiveMinimum", *s.Min)
		out.Minimum = nil
	}
	if s.ExclusiveMax.Value != nil {
		setExtra(out, "exclusiveMaximum", *s.ExclusiveMax.Value)
	} else if s.ExclusiveMax.IsTrue() && s.Max != nil {
		setExtra(out, "exclusiveMaximum", *s.Max)
		out.Maximum = nil
	}
	if s.MultipleOf != nil {
		setExtra(out, "multipleOf", *s.MultipleOf)
	}
	out.MinLength = intPtr(s.MinLength, false)
	out.MaxLength = uintPtr(s.MaxLength)
	out.MinItems = intPtr(s.MinItems, false)
	out.MaxItems = uintPtr(s.MaxItems)
	if s.UniqueItems {
		setExtra(out, "uniqueItems", true)
	}
	if s.MinProps > 0 {
		setExtra(out, "minProperties", s.MinProps)
	}
	if s.MaxProps != nil {
		setExtra(out, "maxProperties", *s.MaxProps)
	}
}

// object converts properties (in source order, leaving out those the
// direction does not carry), required and additionalProperties.
func (cv *schemaConverter) object(out *toolenv.Schema, s *openapi3.Schema, at place, dir direction) {
	if len(s.Properties) > 0 {
		names := make(map[string]bool, len(s.Properties))
		for n := range s.Properties {
			names[n] = true
		}
		out.Properties = map[string]*toolenv.Schema{}
		dropped := map[string]bool{}
		for _, n := range ordered(names, cv.order.keys(at.child("properties"))) {
			pr := s.Properties[n]
			if pr != nil && pr.Value != nil && (dir == request && pr.Value.ReadOnly || dir == response && pr.Value.WriteOnly) {
				dropped[n] = true
				continue
			}
			out.SetProp(n, cv.convert(pr, at.child("properties", n), dir))
		}
		for _, r := range s.Required {
			if !dropped[r] {
				out.Required = append(out.Required, r)
			}
		}
	} else if len(s.Required) > 0 {
		out.Required = append([]string(nil), s.Required...)
	}
	ap := s.AdditionalProperties
	switch {
	case ap.Schema != nil:
		raw, err := cv.convert(ap.Schema, at.child("additionalProperties"), dir).MarshalJSON()
		if err == nil {
			out.AdditionalProperties = raw
		}
	case ap.Has != nil:
		out.AdditionalProperties = json.RawMessage(fmt.Sprint(*ap.Has))
	}
}

func (cv *schemaConverter) list(srs openapi3.SchemaRefs, at place, key string, dir direction) []*toolenv.Schema {
	if len(srs) == 0 {
		return nil
	}
	out := make([]*toolenv.Schema, 0, len(srs))
	for i, sr := range srs {
		out = append(out, cv.convert(sr, at.index(key, i), dir))
	}
	return out
}

// setExtra records a keyword Schema has no field for.
func setExtra(s *toolenv.Schema, key string, v any) {
	raw, err := toolenv.MarshalJSONNoHTML(v)
	if err != nil {
		return
	}
	if s.Extra == nil {
		s.Extra = map[string]json.RawMessage{}
	}
	s.Extra[key] = raw
}

// jsonValue normalizes a value decoded by kin-openapi (from JSON or YAML)
// into the JSON value toolenv uses: numbers as json.Number, maps with
// string keys.
func jsonValue(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var out any
	if toolenv.DecodeJSON(raw, &out) != nil {
		return fmt.Sprint(v)
	}
	return out
}

func intPtr(v uint64, keepZero bool) *int {
	if v == 0 && !keepZero {
		return nil
	}
	n := int(min(v, 1<<31-1))
	return &n
}

func uintPtr(v *uint64) *int {
	if v == nil {
		return nil
	}
	return intPtr(*v, true)
}

func sortStrings(s []string) { sort.Strings(s) }

// cloneSchema deep-copies a schema's structure as it stands, for
// inlining the same component thousands of times. JSON values (enum,
// const, default, examples) are shared: nothing mutates them. Schema.Clone
// is not used here: it copies those values too and gives what a JSON round
// trip gives (Order rebuilt, empty lists nil, nullable without a type
// dropped), which would change what a loaded document holds.
func cloneSchema(s *toolenv.Schema) *toolenv.Schema {
	if s == nil {
		return nil
	}
	c := *s
	if s.Properties != nil {
		c.Properties = make(map[string]*toolenv.Schema, len(s.Properties))
		for k, p := range s.Properties {
			c.Properties[k] = cloneSchema(p)
		}
	}
	c.Order = slices.Clone(s.Order)
	c.Required = slices.Clone(s.Required)
	c.Items = cloneSchema(s.Items)
	c.Enum = slices.Clone(s.Enum)
	c.Examples = slices.Clone(s.Examples)
	c.AnyOf = cloneList(s.AnyOf)
	c.OneOf = cloneList(s.OneOf)
	c.AllOf = cloneList(s.AllOf)
	c.Minimum = clonePtr(s.Minimum)
	c.Maximum = clonePtr(s.Maximum)
	c.MinLength = clonePtr(s.MinLength)
	c.MaxLength = clonePtr(s.MaxLength)
	c.MinItems = clonePtr(s.MinItems)
	c.MaxItems = clonePtr(s.MaxItems)
	c.AdditionalProperties = slices.Clone(s.AdditionalProperties)
	if s.Extra != nil {
		c.Extra = maps.Clone(s.Extra)
	}
	return &c
}

func cloneList(l []*toolenv.Schema) []*toolenv.Schema {
	if l == nil {
		return nil
	}
	out := make([]*toolenv.Schema, len(l))
	for i, s := range l {
		out[i] = cloneSchema(s)
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
