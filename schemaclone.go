package toolenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// maxCloneDepth bounds cloneSchema's recursion: a schema graph built in Go
// may contain itself, which would otherwise recurse until the stack runs
// out. It is far above MaxSchemaDepth, which loaded collections keep to.
const maxCloneDepth = 10_000

// cloneSchema is Clone's deep copy. It gives exactly what the JSON round
// trip (MarshalJSON, then UnmarshalJSON) gives, field for field, without
// writing or reading JSON for the schema's own structure:
//   - a nullable schema without a type loses Nullable (nothing says what
//     is nullable), and type ["null","null"] reads as type "null";
//   - Order becomes Names() (declared properties in order, the others
//     sorted), and a nil property reads as an empty schema;
//   - empty lists (Required, Enum, Examples, AnyOf, OneOf, AllOf) read as
//     nil, a nil element of AnyOf/OneOf/AllOf stays nil;
//   - JSON values held as Go values (Enum, Const, Default, Examples) read
//     as encoding/json with UseNumber reads them (numbers as json.Number,
//     objects as map[string]any, lists as []any); raw keywords
//     (AdditionalProperties, Extra) are compacted, with <, >, & (and
//     U+2028, U+2029) in their strings escaped as json.Marshal escapes
//     them, and an empty one reads as null;
//   - a string that is not valid UTF-8 reads with each bad byte replaced
//     by U+FFFD.
//
// Where a schema holds something the round trip reads differently from a
// plain copy (an Extra keyword that is also a named field, or that is not
// valid UTF-8), it takes the round trip itself. Unlike the round trip, it does not panic on a value
// JSON cannot hold (NaN, invalid raw JSON): it copies it as it is.
func cloneSchema(s *Schema, depth int) *Schema {
	if depth > maxCloneDepth {
		panic(fmt.Sprintf("toolenv: schema nests more than %d levels deep or contains itself; Clone cannot copy it", maxCloneDepth))
	}
	for k := range s.Extra {
		if schemaKeywords[k] || !utf8.ValidString(k) {
			return cloneSchemaJSON(s) // read back into a field, or keys that may collide once repaired
		}
	}
	c := &Schema{
		Title:       jsonString(s.Title),
		Description: jsonString(s.Description),
		Format:      jsonString(s.Format),
		Pattern:     jsonString(s.Pattern),
		Ref:         jsonString(s.Ref),
		Deprecated:  s.Deprecated,
	}
	switch {
	case s.Type == "":
	case s.Nullable && s.Type == "null":
		c.Type = "null"
	default:
		c.Type, c.Nullable = jsonString(s.Type), s.Nullable
	}
	if s.Properties != nil {
		names := s.Names()
		c.Properties = make(map[string]*Schema, len(names))
		if len(names) > 0 {
			c.Order = make([]string, 0, len(names))
		}
		for _, name := range names {
			p := s.Properties[name]
			name = jsonString(name)
			if _, dup := c.Properties[name]; !dup {
				c.Order = append(c.Order, name)
			}
			if p == nil {
				c.Properties[name] = &Schema{}
			} else {
				c.Properties[name] = cloneSchema(p, depth+1)
			}
		}
	}
	if len(s.Required) > 0 {
		c.Required = make([]string, len(s.Required))
		for i, r := range s.Required {
			c.Required[i] = jsonString(r)
		}
	}
	if s.Items != nil {
		c.Items = cloneSchema(s.Items, depth+1)
	}
	c.Enum = cloneJSONList(s.Enum)
	c.Examples = cloneJSONList(s.Examples)
	if s.Const != nil {
		c.Const = cloneJSONValue(s.Const)
	}
	if s.Default != nil {
		c.Default = cloneJSONValue(s.Default)
	}
	c.Minimum = clonePtr(s.Minimum)
	c.Maximum = clonePtr(s.Maximum)
	c.MinLength = clonePtr(s.MinLength)
	c.MaxLength = clonePtr(s.MaxLength)
	c.MinItems = clonePtr(s.MinItems)
	c.MaxItems = clonePtr(s.MaxItems)
	c.AnyOf = cloneSchemaList(s.AnyOf, depth)
	c.OneOf = cloneSchemaList(s.OneOf, depth)
	c.AllOf = cloneSchemaList(s.AllOf, depth)
	if len(s.AdditionalProperties) > 0 {
		c.AdditionalProperties = cloneRawJSON(s.AdditionalProperties)
	}
	if len(s.Extra) > 0 {
		c.Extra = make(map[string]json.RawMessage, len(s.Extra))
		for k, v := range s.Extra {
			c.Extra[jsonString(k)] = cloneRawJSON(v)
		}
	}
	return c
}

// schemaKeywords are the keywords MarshalJSON writes from named fields and
// UnmarshalJSON reads into them: an Extra keyword of the same name is read
// back into the field, not into Extra.
var schemaKeywords = map[string]bool{
	"$ref": true, "type": true, "nullable": true, "title": true, "description": true,
	"properties": true, "required": true, "items": true, "enum": true, "const": true,
	"default": true, "examples": true, "format": true, "pattern": true,
	"minimum": true, "maximum": true, "minLength": true, "maxLength": true,
	"minItems": true, "maxItems": true, "anyOf": true, "oneOf": true, "allOf": true,
	"additionalProperties": true, "deprecated": true,
}

// cloneSchemaJSON is the JSON round trip Clone was before cloneSchema.
func cloneSchemaJSON(s *Schema) *Schema {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("toolenv: schema does not marshal: %v", err))
	}
	var c Schema
	if err := c.UnmarshalJSON(b); err != nil {
		panic(fmt.Sprintf("toolenv: schema does not round-trip: %v", err))
	}
	return &c
}

func cloneSchemaList(list []*Schema, depth int) []*Schema {
	if len(list) == 0 {
		return nil
	}
	out := make([]*Schema, len(list))
	for i, s := range list {
		if s != nil {
			out[i] = cloneSchema(s, depth+1)
		}
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

// jsonString is s as a JSON string reads back: each byte of invalid UTF-8
// becomes U+FFFD.
func jsonString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b bytes.Buffer
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// cloneRawJSON is raw as the round trip gives it back: compacted, with
// <, >, &, U+2028 and U+2029 in its strings escaped (json.Marshal escapes
// them in a Marshaler's output), or null when empty.
func cloneRawJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	var b bytes.Buffer
	b.Grow(len(raw))
	if err := json.Compact(&b, raw); err != nil {
		return append(json.RawMessage(nil), raw...)
	}
	if bytes.ContainsAny(b.Bytes(), "<>&\u2028\u2029") {
		var e bytes.Buffer
		json.HTMLEscape(&e, b.Bytes())
		return json.RawMessage(e.Bytes())
	}
	return json.RawMessage(b.Bytes())
}

func cloneJSONList(list []any) []any {
	if len(list) == 0 {
		return nil
	}
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = cloneJSONValue(v)
	}
	return out
}

// cloneJSONValue is v as encoding/json writes it and reads it back with
// UseNumber. The common types are copied directly; any other goes through
// encoding/json itself.
func cloneJSONValue(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case bool:
		return x
	case string:
		return jsonString(x)
	case json.Number:
		if x == "" {
			return json.Number("0") // encoding/json writes an empty Number as 0
		}
		if json.Valid([]byte(x)) {
			return x
		}
	case int:
		return json.Number(strconv.Itoa(x))
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	case map[string]any:
		if x == nil {
			return nil
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if !utf8.ValidString(k) {
				return cloneJSONValueJSON(v) // keys may collide once repaired
			}
			out[k] = cloneJSONValue(e)
		}
		return out
	case []any:
		if x == nil {
			return nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneJSONValue(e)
		}
		return out
	}
	return cloneJSONValueJSON(v)
}

func cloneJSONValueJSON(v any) any {
	b, err := marshalNoHTML(v)
	if err != nil {
		return v // not JSON (NaN, a channel): kept as it is rather than panicking
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out any
	if err := d.Decode(&out); err != nil {
		return v
	}
	return out
}
