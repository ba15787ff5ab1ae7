package openapi

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// A tool's schema is JSON Schema as its source wrote it, which is not
// always what an OpenAPI 3.1 document may hold: ToolBench writes
// example_value and optional beside type, other sources keywords of
// their own or of older drafts (a boolean exclusiveMinimum). exportSchema
// returns a schema every keyword of which is a JSON Schema 2020-12 /
// OpenAPI 3.1 keyword with a value of the right kind or an x- extension:
// any other keyword K becomes x-K (so nothing is lost), example_value is
// also an example when it fits the type, a type that is no JSON type
// becomes x-type, and an enum whose values are not all of the schema's
// type keeps the values without the type (x-type) rather than contradict
// itself.

// schemaKeywords are the JSON Schema 2020-12 and OpenAPI 3.1 keywords a
// schema object may hold (Redocly's list), with a check of the value's
// kind where one applies.
var schemaKeywords = map[string]func(v any) bool{
	"$id": isString, "$anchor": isString, "id": isString, "$schema": isString, "$vocabulary": isString,
	"$comment": isString, "$dynamicAnchor": isString, "$dynamicRef": isString, "$ref": isString,
	"definitions": isObject, "$defs": isObject,
	"externalDocs": func(v any) bool { m, ok := v.(map[string]any); return ok && isString(m["url"]) },
	"discriminator": func(v any) bool {
		m, ok := v.(map[string]any)
		return ok && isString(m["propertyName"])
	},
	"title": isString, "description": isString, "summary": isString,
	"multipleOf": func(v any) bool { f, ok := number(v); return ok && f > 0 },
	"maximum":    isNumber, "minimum": isNumber, "exclusiveMaximum": isNumber, "exclusiveMinimum": isNumber,
	"maxLength": isCount, "minLength": isCount, "maxItems": isCount, "minItems": isCount,
	"maxProperties": isCount, "minProperties": isCount, "minContains": isCount, "maxContains": isCount,
	"pattern": isString, "format": isString, "contentEncoding": isString, "contentMediaType": isString,
	"uniqueItems": isBool, "readOnly": isBool, "writeOnly": isBool, "deprecated": isBool,
	"required": func(v any) bool {
		a, ok := v.([]any)
		if !ok {
			return false
		}
		for _, x := range a {
			if !isString(x) {
				return false
			}
		}
		return true
	},
	"enum": func(v any) bool { _, ok := v.([]any); return ok }, "examples": func(v any) bool { _, ok := v.([]any); return ok },
	"default": anyValue, "const": anyValue, "example": anyValue,
	"allOf": isList, "anyOf": isList, "oneOf": isList, "prefixItems": isList,
	"not": isObject, "if": isObject, "then": isObject, "else": isObject, "contains": isObject,
	"propertyNames": isObject, "contentSchema": isObject,
	"dependentSchemas": isObject, "dependentRequired": isObject, "patternProperties": isObject, "properties": isObject,
	"items": isSchema, "additionalProperties": isSchema, "unevaluatedItems": isSchema, "unevaluatedProperties": isSchema,
	"xml": isObject, "type": anyValue, "x-tags": func(v any) bool { _, ok := v.([]any); return ok },
}

// nestedSchemaKeys are the Extra keywords whose value is a schema, a list
// of schemas or a map of schemas, sanitized in turn.
var nestedSchemaKeys = map[string]string{
	"not": "one", "if": "one", "then": "one", "else": "one", "contains": "one", "propertyNames": "one",
	"contentSchema": "one", "unevaluatedItems": "one", "unevaluatedProperties": "one",
	"prefixItems": "list",
	"$defs":       "map", "definitions": "map", "dependentSchemas": "map", "patternProperties": "map",
}

var jsonTypes = map[string]bool{"object": true, "array": true, "string": true, "number": true, "integer": true, "boolean": true, "null": true}

func anyValue(any) bool   { return true }
func isString(v any) bool { _, ok := v.(string); return ok }
func isBool(v any) bool   { _, ok := v.(bool); return ok }
func isObject(v any) bool { _, ok := v.(map[string]any); return ok }
func isList(v any) bool   { _, ok := v.([]any); return ok }
func isNumber(v any) bool { _, ok := number(v); return ok }
func isSchema(v any) bool { return isBool(v) || isObject(v) }
func isCount(v any) bool  { f, ok := number(v); return ok && f >= 0 && f == math.Trunc(f) }
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	}
	return 0, false
}

// exportSchema returns s as an OpenAPI 3.1 document may hold it: s itself
// when it already is, else a sanitized copy.
func exportSchema(s *toolenv.Schema) *toolenv.Schema {
	if s == nil || clean(s, 0) {
		return s
	}
	c := s.Clone()
	sanitize(c, 0)
	return c
}

// clean reports whether s needs no change.
func clean(s *toolenv.Schema, depth int) bool {
	if s == nil || depth > toolenv.MaxSchemaDepth {
		return true
	}
	if s.Type != "" && !jsonTypes[s.Type] || !enumFits(s) {
		return false
	}
	for k, raw := range s.Extra {
		if strings.HasPrefix(k, "x-") {
			continue
		}
		check, ok := schemaKeywords[k]
		if !ok {
			return false
		}
		v, err := toolenv.ParseJSON(raw)
		if err != nil || !check(v) {
			return false
		}
		if _, nested := nestedSchemaKeys[k]; nested {
			return false // checked by sanitize, which is rare enough
		}
	}
	if len(s.AdditionalProperties) > 0 && bytes.HasPrefix(bytes.TrimSpace(s.AdditionalProperties), []byte("{")) {
		var ap toolenv.Schema
		if ap.UnmarshalJSON(s.AdditionalProperties) != nil || !clean(&ap, depth+1) {
			return false
		}
	}
	for _, p := range s.Properties {
		if !clean(p, depth+1) {
			return false
		}
	}
	for _, list := range [][]*toolenv.Schema{s.AnyOf, s.OneOf, s.AllOf} {
		for _, x := range list {
			if !clean(x, depth+1) {
				return false
			}
		}
	}
	return clean(s.Items, depth+1)
}

// enumFits reports whether every enum value is of the schema's type.
func enumFits(s *toolenv.Schema) bool {
	if s.Type == "" || len(s.Enum) == 0 {
		return true
	}
	for _, v := range s.Enum {
		if !fitsType(v, s.Type, s.Nullable) {
			return false
		}
	}
	return true
}

// fitsType reports whether the JSON value v is of type typ.
func fitsType(v any, typ string, nullable bool) bool {
	switch x := v.(type) {
	case nil:
		return nullable || typ == "null"
	case string:
		return typ == "string"
	case bool:
		return typ == "boolean"
	case map[string]any:
		return typ == "object"
	case []any:
		return typ == "array"
	case json.Number, float64, int, int64:
		f, _ := number(x)
		if i, ok := x.(int); ok {
			f = float64(i)
		}
		if i, ok := x.(int64); ok {
			f = float64(i)
		}
		return typ == "number" || typ == "integer" && f == math.Trunc(f)
	}
	return false
}

// sanitize rewrites s in place (a copy: see exportSchema).
func sanitize(s *toolenv.Schema, depth int) {
	if s == nil || depth > toolenv.MaxSchemaDepth {
		return
	}
	setExtra := func(k string, raw json.RawMessage) {
		if s.Extra == nil {
			s.Extra = map[string]json.RawMessage{}
		}
		s.Extra[k] = raw
	}
	moveAside := func(k string, raw json.RawMessage) {
		delete(s.Extra, k)
		x := "x-" + k
		if _, taken := s.Extra[x]; taken {
			x = "x-toolenv-" + k
		}
		setExtra(x, raw)
	}
	if s.Type != "" && !jsonTypes[s.Type] || !enumFits(s) {
		raw, _ := json.Marshal(s.Type)
		if s.Nullable {
			raw, _ = json.Marshal([]string{s.Type, "null"})
		}
		s.Type, s.Nullable = "", false
		moveAside("type", raw)
	}
	for k, raw := range s.Extra {
		if strings.HasPrefix(k, "x-") {
			continue
		}
		v, err := toolenv.ParseJSON(raw)
		check, known := schemaKeywords[k]
		if !known || err != nil || !check(v) {
			if k == "example_value" && err == nil && conforms(v, s) && !containsJSON(s.Examples, v) {
				s.Examples = append(s.Examples, v)
			}
			moveAside(k, raw)
			continue
		}
		switch nestedSchemaKeys[k] {
		case "one":
			if isObject(v) {
				setExtra(k, sanitizeRaw(raw, depth+1))
			}
		case "list":
			var items []json.RawMessage
			if json.Unmarshal(raw, &items) == nil {
				for i := range items {
					items[i] = sanitizeRaw(items[i], depth+1)
				}
				b, _ := json.Marshal(items)
				setExtra(k, b)
			}
		case "map":
			var m map[string]json.RawMessage
			if json.Unmarshal(raw, &m) == nil {
				for name := range m {
					m[name] = sanitizeRaw(m[name], depth+1)
				}
				b, _ := json.Marshal(m)
				setExtra(k, b)
			}
		}
	}
	if len(s.AdditionalProperties) > 0 && bytes.HasPrefix(bytes.TrimSpace(s.AdditionalProperties), []byte("{")) {
		s.AdditionalProperties = sanitizeRaw(s.AdditionalProperties, depth+1)
	}
	for _, p := range s.Properties {
		sanitize(p, depth+1)
	}
	for _, list := range [][]*toolenv.Schema{s.AnyOf, s.OneOf, s.AllOf} {
		for _, x := range list {
			sanitize(x, depth+1)
		}
	}
	sanitize(s.Items, depth+1)
}

// sanitizeRaw sanitizes a schema written as JSON; a value that is no
// schema object is returned as it is.
func sanitizeRaw(raw json.RawMessage, depth int) json.RawMessage {
	var x toolenv.Schema
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) || x.UnmarshalJSON(raw) != nil {
		return raw
	}
	sanitize(&x, depth)
	b, err := x.MarshalJSON()
	if err != nil {
		return raw
	}
	return b
}

// containsJSON reports whether list holds a value equal to v as JSON.
func containsJSON(list []any, v any) bool {
	b, _ := json.Marshal(v)
	for _, x := range list {
		if c, _ := json.Marshal(x); bytes.Equal(b, c) {
			return true
		}
	}
	return false
}

// conforms reports whether v is of s's type and among its enum values:
// the check an example must pass to be shown as one.
func conforms(v any, s *toolenv.Schema) bool {
	if s == nil {
		return true
	}
	if s.Type != "" && !fitsType(v, s.Type, s.Nullable) {
		return false
	}
	if _, not := s.Extra["not"]; not || len(s.AnyOf)+len(s.OneOf)+len(s.AllOf) > 0 {
		return false // not checked here: shown only when it surely fits
	}
	if len(s.Enum) > 0 && !containsJSON(s.Enum, v) {
		return false
	}
	return s.Const == nil || containsJSON([]any{s.Const}, v)
}
