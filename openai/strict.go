package openai

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// OpenAI's strict mode (function "strict": true, Structured Outputs)
// accepts a subset of JSON Schema, published as its "supported schemas":
//
//   - the root is an object (not anyOf);
//   - every object lists all its properties in required and has
//     additionalProperties: false; an optional property is written as
//     required and nullable (["string", "null"], or anyOf with null);
//   - types are string, number, integer, boolean, object, array, null,
//     with enum, const and anyOf; allOf, oneOf, not, if/then/else,
//     dependentRequired/dependentSchemas, patternProperties and the like
//     are not supported;
//   - the other keywords allowed are description (and $defs/$ref, which
//     toolenv's self-contained schemas never need), pattern and format
//     (date-time, time, date, duration, email, hostname, ipv4, ipv6,
//     uuid) on strings, minimum, maximum, exclusiveMinimum,
//     exclusiveMaximum and multipleOf on numbers, items, minItems and
//     maxItems on arrays; title, default, examples, minLength, maxLength,
//     uniqueItems, x- extensions and unknown keywords are refused;
//   - at most 10 levels of nesting, 5,000 properties, 1,000 enum values,
//     120,000 characters of property names, enum and const values, and
//     15,000 characters in one enum of more than 250 values.
//
// StrictTool converts a tool's schema to that subset; CheckStrict checks
// a schema against the rules, independently of the conversion.

// The limits of strict mode.
const (
	StrictMaxDepth       = 10
	StrictMaxProperties  = 5000
	StrictMaxEnumValues  = 1000
	StrictMaxStringChars = 120000
	strictBigEnum        = 250
	strictBigEnumChars   = 15000
)

// strictFormats are the string formats strict mode supports.
var strictFormats = map[string]bool{"date-time": true, "time": true, "date": true, "duration": true, "email": true, "hostname": true, "ipv4": true, "ipv6": true, "uuid": true}

// strictKeywords are the keywords a strict schema may hold, by the type
// they belong to ("" for any).
var strictKeywords = map[string]string{
	"type": "", "description": "", "enum": "", "const": "", "anyOf": "",
	"properties": "object", "required": "object", "additionalProperties": "object",
	"items": "array", "minItems": "array", "maxItems": "array",
	"pattern": "string", "format": "string",
	"minimum": "number", "maximum": "number", "exclusiveMinimum": "number", "exclusiveMaximum": "number", "multipleOf": "number",
}

// StrictTool returns t as a strict OpenAI function: its input converted
// by StrictSchema and "strict": true, with a note naming the tool and
// what was narrowed, if anything was. When the input cannot be made
// strict, it returns FromTool(t) (not strict) and a note naming the tool
// and why.
func StrictTool(t *toolenv.Tool) (Tool, string) {
	in := t.Input
	if in == nil {
		in = toolenv.ObjectSchema()
	}
	s, narrowed, why := StrictSchema(in)
	if why != "" {
		return FromTool(t), fmt.Sprintf("%s is listed without strict: %s", t.Name, why)
	}
	note := ""
	if len(narrowed) > 0 {
		note = fmt.Sprintf("%s is listed strict, narrowed: %s", t.Name, strings.Join(narrowed, "; "))
	}
	return Tool{Type: "function", Function: Function{Name: t.Name, Description: Description(t), Parameters: s, Strict: true}}, note
}

// StrictTools converts tools in order (see StrictTool), with the notes of
// those listed without strict or narrowed.
func StrictTools(tools []*toolenv.Tool) ([]Tool, []string) {
	out := make([]Tool, len(tools))
	var notes []string
	for i, t := range tools {
		var note string
		out[i], note = StrictTool(t)
		if note != "" {
			notes = append(notes, note)
		}
	}
	return out, notes
}

// StrictSchema returns the strict-mode form of an input schema: every
// property required, the optional ones nullable; additionalProperties
// false on every object; only the keywords strict mode supports, the
// meaning of dropped ones (default, minLength, an unsupported format…)
// said in the description; oneOf as anyOf, a one-branch allOf merged.
// A value of any type (an untyped parameter) cannot be left open in
// strict mode: it is narrowed to a string, number, boolean or a list of
// those (objects left out), and narrowed names each such parameter. A
// tool without parameters is an empty closed object.
//
// When the schema cannot be made strict it returns why: an open map (an
// object whose keys are not listed, or that allows more than it lists),
// an array without items, a composition strict mode cannot say, or a
// schema over strict mode's limits.
func StrictSchema(in *toolenv.Schema) (s *toolenv.Schema, narrowed []string, why string) {
	if in == nil || in.Type != "object" || len(in.AnyOf)+len(in.OneOf) > 0 {
		return nil, nil, "the parameters are not one object"
	}
	if len(in.Properties) == 0 {
		if ap := strings.TrimSpace(string(in.AdditionalProperties)); ap != "" && ap != "false" {
			return nil, nil, "the parameters are an open map (an object whose keys are not listed): strict mode allows only listed keys"
		}
		return &toolenv.Schema{Type: "object", Description: in.Description, Properties: map[string]*toolenv.Schema{},
			AdditionalProperties: json.RawMessage("false"), Extra: map[string]json.RawMessage{"required": json.RawMessage("[]")}}, nil, ""
	}
	c := &converter{}
	s, why = c.node(in, "", 1)
	if why != "" {
		return nil, nil, why
	}
	if errs := CheckStrict(s); len(errs) > 0 {
		return nil, nil, "the parameters' strict form breaks strict mode's rules at " + errs[0]
	}
	return s, c.narrowed, ""
}

// converter converts one schema, recording what it narrowed.
type converter struct {
	narrowed []string
}

// anyValue is what a value of any type is narrowed to.
func anyValue(description string) *toolenv.Schema {
	scalars := func() []*toolenv.Schema {
		return []*toolenv.Schema{{Type: "string"}, {Type: "number"}, {Type: "boolean"}}
	}
	return &toolenv.Schema{Description: description, AnyOf: append(scalars(),
		&toolenv.Schema{Type: "array", Items: &toolenv.Schema{AnyOf: scalars()}})}
}

// node converts one schema (not nullable: the caller makes optional
// properties so).
func (c *converter) node(in *toolenv.Schema, path string, depth int) (*toolenv.Schema, string) {
	where := func() string {
		if path == "" {
			return "the parameters"
		}
		return "parameter `" + path + "`"
	}
	if depth > StrictMaxDepth {
		return nil, fmt.Sprintf("%s nest more than %d levels deep", where(), StrictMaxDepth)
	}
	if len(in.AllOf) == 1 && in.Type == "" {
		merged := in.AllOf[0].Clone()
		if merged.Description == "" {
			merged.Description = in.Description
		}
		in = merged
	}
	for _, k := range []string{"not", "if", "then", "else", "patternProperties", "dependentSchemas", "dependentRequired", "prefixItems", "unevaluatedProperties"} {
		if _, ok := in.Extra[k]; ok {
			return nil, fmt.Sprintf("%s uses %s, which strict mode does not support", where(), k)
		}
	}
	if len(in.AllOf) > 0 {
		return nil, fmt.Sprintf("%s combines schemas with allOf, which strict mode does not support", where())
	}
	out := &toolenv.Schema{Type: in.Type, Nullable: in.Nullable, Description: in.Description}
	var notes []string
	if in.Default != nil {
		notes = append(notes, "default: "+jsonText(in.Default))
	}
	if in.Type == "" && len(in.AnyOf)+len(in.OneOf) == 0 && len(in.Enum) == 0 && in.Const == nil {
		c.narrowed = append(c.narrowed, fmt.Sprintf("%s takes a value of any type; strict mode offers a string, number, boolean or a list of those", where()))
		return anyValue(in.Description), ""
	}
	if len(in.Enum) > 0 {
		out.Enum = append([]any(nil), in.Enum...)
	}
	out.Const = in.Const
	for _, alt := range append(append([]*toolenv.Schema(nil), in.AnyOf...), in.OneOf...) {
		a, why := c.node(alt, path, depth+1)
		if why != "" {
			return nil, why
		}
		out.AnyOf = append(out.AnyOf, a)
	}
	switch in.Type {
	case "object":
		if len(in.Properties) == 0 {
			return nil, fmt.Sprintf("%s is an open map (an object whose keys are not listed): strict mode allows only listed keys", where())
		}
		if ap := strings.TrimSpace(string(in.AdditionalProperties)); ap != "" && ap != "false" {
			return nil, fmt.Sprintf("%s is an open map (it takes keys besides those it lists): strict mode allows only listed keys", where())
		}
		out.Properties = map[string]*toolenv.Schema{}
		for _, name := range in.Names() {
			child := path + "." + name
			if path == "" {
				child = name
			}
			p, why := c.node(in.Properties[name], child, depth+1)
			if why != "" {
				return nil, why
			}
			if !in.IsRequired(name) {
				p = nullable(p)
			}
			out.SetProp(name, p)
			out.Required = append(out.Required, name)
		}
		out.AdditionalProperties = json.RawMessage("false")
		if in.Extra["minProperties"] != nil || in.Extra["maxProperties"] != nil {
			notes = append(notes, "properties: "+jsonText(in.Extra["minProperties"])+" to "+jsonText(in.Extra["maxProperties"]))
		}
	case "array":
		if in.Items == nil {
			return nil, fmt.Sprintf("%s is an array whose items are not described", where())
		}
		it, why := c.node(in.Items, path+"[]", depth+1)
		if why != "" {
			return nil, why
		}
		out.Items = it
		out.MinItems, out.MaxItems = in.MinItems, in.MaxItems
		if _, ok := in.Extra["uniqueItems"]; ok {
			notes = append(notes, "items are unique")
		}
	case "string":
		if in.Format != "" {
			if strictFormats[in.Format] {
				out.Format = in.Format
			} else {
				notes = append(notes, "format: "+in.Format)
			}
		}
		if in.Pattern != "" {
			if _, err := regexp.Compile(in.Pattern); err == nil {
				out.Pattern = in.Pattern
			} else {
				notes = append(notes, "pattern: "+in.Pattern)
			}
		}
		if in.MinLength != nil {
			notes = append(notes, fmt.Sprintf("at least %d characters", *in.MinLength))
		}
		if in.MaxLength != nil {
			notes = append(notes, fmt.Sprintf("at most %d characters", *in.MaxLength))
		}
	case "integer", "number":
		out.Minimum, out.Maximum = in.Minimum, in.Maximum
		for _, k := range []string{"exclusiveMinimum", "exclusiveMaximum", "multipleOf"} {
			if raw, ok := in.Extra[k]; ok {
				var n json.Number
				if json.Unmarshal(raw, &n) == nil {
					if out.Extra == nil {
						out.Extra = map[string]json.RawMessage{}
					}
					out.Extra[k] = raw
				}
			}
		}
	case "boolean", "null":
	default:
		if in.Type != "" {
			return nil, fmt.Sprintf("%s has type %q, which is no JSON type", where(), in.Type)
		}
	}
	if len(notes) > 0 {
		d := strings.TrimSpace(out.Description)
		if d != "" && !strings.HasSuffix(d, ".") {
			d += "."
		}
		out.Description = strings.TrimSpace(d + " (" + strings.Join(notes, "; ") + ")")
	}
	return out, ""
}

// nullable returns s admitting null too: ["t", "null"], with null among
// its enum values; an anyOf or a const gains a null branch.
func nullable(s *toolenv.Schema) *toolenv.Schema {
	switch {
	case s.Type == "null" || s.Nullable:
		return s
	case len(s.AnyOf) > 0:
		s.AnyOf = append(s.AnyOf, &toolenv.Schema{Type: "null"})
		return s
	case s.Type == "" && len(s.Enum) > 0:
		if !hasNil(s.Enum) {
			s.Enum = append(s.Enum, nil)
		}
		return s
	case s.Const != nil || s.Type == "":
		d := s.Description
		s.Description = ""
		return &toolenv.Schema{AnyOf: []*toolenv.Schema{s, {Type: "null"}}, Description: d}
	}
	s.Nullable = true
	if len(s.Enum) > 0 && !hasNil(s.Enum) {
		s.Enum = append(s.Enum, nil)
	}
	return s
}

func hasNil(list []any) bool {
	for _, v := range list {
		if v == nil {
			return true
		}
	}
	return false
}

func jsonText(v any) string {
	if raw, ok := v.(json.RawMessage); ok {
		if raw == nil {
			return "?"
		}
		return string(raw)
	}
	b, err := toolenv.MarshalJSONNoHTML(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
