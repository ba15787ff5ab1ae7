package simulate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// kind is the kind of value a shape describes.
type kind uint8

const (
	kindAny     kind = iota // anything (an unknown list element, a schema without type)
	kindObject              // an object with the fields listed
	kindArray               // a list of elem
	kindString              // ToolBench "str"
	kindInt                 // ToolBench "int"
	kindFloat               // ToolBench "float"
	kindBool                // ToolBench "bool"
	kindNull                // ToolBench "NoneType"
	kindLiteral             // a fixed value written in the documentation
)

var kindNames = [...]string{"any", "object", "list", "str", "int", "float", "bool", "NoneType", "literal"}

func (k kind) String() string { return kindNames[k] }

// shape is the documented form of a response: what ToolBench's
// template_response says, or what a JSON Schema says.
type shape struct {
	kind    kind
	fields  []field // kindObject, in documentation order
	elem    *shape  // kindArray
	length  int     // kindArray: the documented length; -1 when unknown
	literal any     // kindLiteral
	choices []any   // kindString/kindInt/...: enum values from a schema
	format  string  // a schema's format ("date-time", "uri", "email")
}

// field is one documented member of an object.
type field struct {
	name  string
	shape *shape
}

// listDescriptor is ToolBench's summary of a list of scalars in a
// template ("list of str with length 8").
var listDescriptor = regexp.MustCompile(`^list of (\w+) with length (\d+)$`)

// parseTemplate interprets a ToolBench template_response (Tool.
// OutputExample): an object whose leaves are type names ("str", "int",
// "float", "bool", "NoneType", "empty list"), whose lists hold one
// element — an object with a "_list_length" member, or a descriptor like
// "list of str with length 8" — and which may come as a JSON string cut
// at 1,000 characters (the cut is repaired). A real example response
// works too: its values become literals. It returns nil when there is no
// template.
func parseTemplate(raw json.RawMessage) *shape {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	v, err := pyfmt.DecodeOrdered(raw)
	if err != nil {
		v, _, _, err = pyfmt.ParseLoose(string(raw), pyfmt.LooseOptions{})
		if err != nil {
			return nil
		}
	}
	if s, ok := v.(string); ok {
		t := strings.TrimSpace(s)
		if t == "" {
			return nil
		}
		if t[0] == '{' || t[0] == '[' {
			if lv, _, _, err := pyfmt.ParseLoose(t, pyfmt.LooseOptions{}); err == nil {
				v = lv
			}
		}
	}
	return templateShape(v, 0)
}

func templateShape(v any, depth int) *shape {
	if depth > maxDepth {
		return &shape{kind: kindAny}
	}
	switch x := v.(type) {
	case pyfmt.Dict:
		s := &shape{kind: kindObject}
		for _, m := range x {
			if m.Key == "_list_length" {
				continue
			}
			s.fields = append(s.fields, field{validUTF8(m.Key), templateShape(m.Value, depth+1)})
		}
		return s
	case []any:
		s := &shape{kind: kindArray, length: len(x), elem: &shape{kind: kindAny}}
		if len(x) == 0 {
			return s
		}
		switch first := x[0].(type) {
		case pyfmt.Dict:
			s.elem = templateShape(first, depth+1)
			if n, ok := first.Get("_list_length"); ok {
				if l, ok := intOf(n); ok {
					s.length = l
				}
			}
		case string:
			if m := listDescriptor.FindStringSubmatch(first); m != nil && len(x) == 1 {
				n, _ := strconv.Atoi(m[2])
				s.elem, s.length = typeToken(m[1]), n
				return s
			}
			s.elem = templateShape(first, depth+1)
		default:
			s.elem = templateShape(first, depth+1)
		}
		return s
	case string:
		if m := listDescriptor.FindStringSubmatch(x); m != nil {
			n, _ := strconv.Atoi(m[2])
			return &shape{kind: kindArray, length: n, elem: typeToken(m[1])}
		}
		switch x {
		case "str", "int", "float", "bool", "NoneType", "dict", "list":
			return typeToken(x)
		case "empty list":
			return &shape{kind: kindArray, length: 0, elem: &shape{kind: kindAny}}
		}
		return &shape{kind: kindLiteral, literal: validUTF8(x)}
	case nil:
		return &shape{kind: kindNull}
	}
	return &shape{kind: kindLiteral, literal: v}
}

// validUTF8 replaces invalid bytes with U+FFFD, as the JSON written
// from the shape will.
func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// typeToken is the shape of one of ToolBench's Python type names.
func typeToken(name string) *shape {
	switch name {
	case "str":
		return &shape{kind: kindString}
	case "int":
		return &shape{kind: kindInt}
	case "float":
		return &shape{kind: kindFloat}
	case "bool":
		return &shape{kind: kindBool}
	case "NoneType":
		return &shape{kind: kindNull}
	case "dict":
		return &shape{kind: kindObject}
	case "list":
		return &shape{kind: kindArray, length: 0, elem: &shape{kind: kindAny}}
	}
	return &shape{kind: kindAny}
}

func intOf(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(n.String())
	return i, err == nil && i >= 0
}

// schemaShape converts a JSON Schema (Tool.Output) to a shape.
func schemaShape(s *toolenv.Schema, depth int) *shape {
	if s == nil || depth > maxDepth {
		return &shape{kind: kindAny}
	}
	if len(s.OneOf) > 0 {
		return schemaShape(s.OneOf[0], depth+1)
	}
	if len(s.AnyOf) > 0 {
		return schemaShape(s.AnyOf[0], depth+1)
	}
	out := &shape{format: s.Format}
	if s.Const != nil {
		return &shape{kind: kindLiteral, literal: ordered(s.Const)}
	}
	for _, e := range s.Enum {
		out.choices = append(out.choices, ordered(e))
	}
	switch s.Type {
	case "object":
		out.kind = kindObject
		for _, n := range s.Names() {
			out.fields = append(out.fields, field{validUTF8(n), schemaShape(s.Prop(n), depth+1)})
		}
	case "array":
		out.kind, out.length, out.elem = kindArray, -1, schemaShape(s.Items, depth+1)
		if s.MinItems != nil && *s.MinItems > 0 {
			out.length = *s.MinItems
		}
	case "string":
		out.kind = kindString
	case "integer":
		out.kind = kindInt
	case "number":
		out.kind = kindFloat
	case "boolean":
		out.kind = kindBool
	case "null":
		out.kind = kindNull
	default:
		out.kind = kindAny
		if len(s.Properties) > 0 {
			out.kind = kindObject
			for _, n := range s.Names() {
				out.fields = append(out.fields, field{validUTF8(n), schemaShape(s.Prop(n), depth+1)})
			}
		}
	}
	return out
}

// toolShape returns the documented shape of t's response: its ToolBench
// template (OutputExample) when it has one, else its output schema, else
// nil.
func toolShape(t *toolenv.Tool) *shape {
	if s := parseTemplate(t.OutputExample); s != nil {
		return s
	}
	if t.Output != nil {
		return schemaShape(t.Output, 0)
	}
	return nil
}

// conforms reports (as an error saying where) whether v has exactly the
// shape s, with lists at most maxList long: the synthesizer's contract.
func conforms(s *shape, v any, maxList int, path string) error {
	switch s.kind {
	case kindAny:
		return nil
	case kindObject:
		o, ok := v.(pyfmt.Dict)
		if !ok {
			return fmt.Errorf("%s: want an object, got %s", path, kindOfValue(v))
		}
		if len(o) != len(s.fields) {
			return fmt.Errorf("%s: want %d members, got %d", path, len(s.fields), len(o))
		}
		for i, f := range s.fields {
			if o[i].Key != f.name {
				return fmt.Errorf("%s: member %d is %q, want %q", path, i, o[i].Key, f.name)
			}
			if err := conforms(f.shape, o[i].Value, maxList, path+"."+f.name); err != nil {
				return err
			}
		}
	case kindArray:
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: want a list, got %s", path, kindOfValue(v))
		}
		if s.length >= 0 && len(a) != min(s.length, maxList) {
			return fmt.Errorf("%s: want %d elements, got %d", path, min(s.length, maxList), len(a))
		}
		for i, e := range a {
			if err := conforms(s.elem, e, maxList, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case kindLiteral:
		if !bytes.Equal(encodeJSON(v), encodeJSON(s.literal)) {
			return fmt.Errorf("%s: want the documented %s, got %s", path, encodeJSON(s.literal), encodeJSON(v))
		}
	default:
		if got := kindOfValue(v); got != s.kind && !(s.kind == kindFloat && got == kindInt) {
			return fmt.Errorf("%s: want %s, got %s", path, s.kind, got)
		}
	}
	return nil
}

// kindOfValue is the kind of a decoded value.
func kindOfValue(v any) kind {
	switch x := v.(type) {
	case pyfmt.Dict, map[string]any:
		return kindObject
	case []any:
		return kindArray
	case string:
		return kindString
	case json.Number:
		if strings.ContainsAny(x.String(), ".eE") {
			return kindFloat
		}
		return kindInt
	case float64:
		return kindFloat
	case int, int64:
		return kindInt
	case bool:
		return kindBool
	case nil:
		return kindNull
	}
	return kindAny
}

// agreement scores from 0 to 1 how well a response agrees with a
// documented shape, leniently, since real responses vary: an object
// scores by how many documented members it has (each half for being
// there, half for agreeing inside); a list by its first elements; numbers
// written as strings and the like score partly; NoneType and anything
// else documented loosely agree with everything.
func agreement(s *shape, v any, depth int) float64 {
	if s == nil || depth > 32 {
		return 1
	}
	switch s.kind {
	case kindAny, kindNull, kindLiteral:
		return 1
	case kindObject:
		switch x := v.(type) {
		case pyfmt.Dict:
			if len(s.fields) == 0 {
				return 1
			}
			var sum float64
			for _, f := range s.fields {
				if c, ok := x.Get(f.name); ok {
					sum += 0.5 + 0.5*agreement(f.shape, c, depth+1)
				}
			}
			return sum / float64(len(s.fields))
		case []any:
			if len(x) == 0 {
				return 0.5
			}
			return 0.8 * agreement(s, x[0], depth+1)
		}
		return 0
	case kindArray:
		switch x := v.(type) {
		case []any:
			if len(x) == 0 {
				return 1
			}
			var sum float64
			n := min(len(x), 3)
			for _, e := range x[:n] {
				sum += agreement(s.elem, e, depth+1)
			}
			return sum / float64(n)
		case pyfmt.Dict:
			return 0.5 * agreement(s.elem, x, depth+1)
		}
		return 0
	case kindString:
		switch kindOfValue(v) {
		case kindString, kindNull:
			return 1
		case kindInt, kindFloat, kindBool:
			return 0.7
		}
		return 0.3
	case kindInt, kindFloat:
		switch k := kindOfValue(v); {
		case k == kindInt || k == kindFloat || k == kindNull:
			return 1
		case k == kindString:
			if _, err := strconv.ParseFloat(strings.TrimSpace(v.(string)), 64); err == nil {
				return 0.8
			}
		}
		return 0.2
	case kindBool:
		switch kindOfValue(v) {
		case kindBool, kindNull:
			return 1
		case kindString, kindInt:
			return 0.6
		}
		return 0.2
	}
	return 1
}

// keyF1 scores from 0 to 1 how well the member names of a response match
// a shape's, both ways (the F1 of the two name sets), looking through
// lists to their first element. It tells which of several APIs a response
// belongs to.
func keyF1(s *shape, v any) float64 {
	for s != nil && s.kind == kindArray {
		s = s.elem
	}
	for {
		a, ok := v.([]any)
		if !ok || len(a) == 0 {
			break
		}
		v = a[0]
	}
	o, ok := v.(pyfmt.Dict)
	if s == nil || s.kind != kindObject || !ok || len(s.fields) == 0 || len(o) == 0 {
		return 0
	}
	inter := 0
	for _, f := range s.fields {
		if _, ok := o.Get(f.name); ok {
			inter++
		}
	}
	if inter == 0 {
		return 0
	}
	p := float64(inter) / float64(len(o))
	r := float64(inter) / float64(len(s.fields))
	return 2 * p * r / (p + r)
}

// structured returns the response as a value to compare with a shape: a
// JSON body as decoded, and a string holding JSON or a Python literal
// (StableToolBench responses are often str(dict)) as parsed; plain text
// stays a string.
func structured(body json.RawMessage) any {
	v, err := pyfmt.DecodeOrdered(body)
	if err != nil {
		return nil
	}
	s, ok := v.(string)
	if !ok {
		return v
	}
	t := strings.TrimSpace(s)
	if t == "" || t[0] != '{' && t[0] != '[' {
		return s
	}
	if d, err := pyfmt.DecodeOrdered([]byte(t)); err == nil {
		return d
	}
	if d, end, truncated, err := pyfmt.ParseLoose(t, pyfmt.LooseOptions{}); err == nil && !truncated && strings.TrimSpace(t[end:]) == "" {
		return d
	}
	return s
}
