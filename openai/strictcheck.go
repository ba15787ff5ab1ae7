package openai

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// functionName is what OpenAI accepts as a function's name.
var functionName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// CheckStrictTool checks a function definition offered with "strict":
// true against OpenAI's published rules: a valid name, strict set, and
// parameters CheckStrict accepts. It returns what breaks them.
func CheckStrictTool(t Tool) []string {
	var errs []string
	if t.Type != "function" {
		errs = append(errs, fmt.Sprintf("type is %q, not function", t.Type))
	}
	if !functionName.MatchString(t.Function.Name) {
		errs = append(errs, fmt.Sprintf("name %q is not 1-64 of [a-zA-Z0-9_-]", t.Function.Name))
	}
	if !t.Function.Strict {
		errs = append(errs, "strict is not set")
	}
	for _, e := range CheckStrict(t.Function.Parameters) {
		errs = append(errs, t.Function.Name+": "+e)
	}
	return errs
}

// CheckStrict checks a parameters schema, as it goes on the wire, against
// OpenAI's strict-mode rules (see StrictSchema), and returns each
// breach with its place. It reads the schema's JSON, not the Go value, so
// that it judges what a model API receives.
func CheckStrict(s *toolenv.Schema) []string {
	raw, err := json.Marshal(s)
	if err != nil {
		return []string{"the schema does not encode: " + err.Error()}
	}
	var root any
	if err := json.Unmarshal(raw, &root); err != nil {
		return []string{"the schema does not decode: " + err.Error()}
	}
	c := &strictChecker{}
	m, ok := root.(map[string]any)
	switch {
	case !ok:
		c.fail("#", "the parameters are not a schema object")
	case m["type"] != "object":
		c.fail("#", "the root's type is %v, not \"object\"", m["type"])
	default:
		if _, ok := m["anyOf"]; ok {
			c.fail("#", "anyOf at the root")
		}
		c.node(m, "#", 1)
	}
	if c.props > StrictMaxProperties {
		c.fail("#", "%d properties, over %d", c.props, StrictMaxProperties)
	}
	if c.enums > StrictMaxEnumValues {
		c.fail("#", "%d enum values, over %d", c.enums, StrictMaxEnumValues)
	}
	if c.chars > StrictMaxStringChars {
		c.fail("#", "%d characters of names, enum and const values, over %d", c.chars, StrictMaxStringChars)
	}
	return c.errs
}

type strictChecker struct {
	errs                []string
	props, enums, chars int
}

func (c *strictChecker) fail(at, format string, args ...any) {
	c.errs = append(c.errs, at+": "+fmt.Sprintf(format, args...))
}

var jsonTypeNames = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "object": true, "array": true, "null": true}

func (c *strictChecker) node(v any, at string, depth int) {
	m, ok := v.(map[string]any)
	if !ok {
		c.fail(at, "not a schema object")
		return
	}
	if depth > StrictMaxDepth {
		c.fail(at, "nested more than %d levels deep", StrictMaxDepth)
		return
	}
	types := map[string]bool{}
	switch t := m["type"].(type) {
	case string:
		types[t] = true
	case []any:
		for _, x := range t {
			s, _ := x.(string)
			types[s] = true
		}
	case nil:
		_, any := m["anyOf"]
		_, enum := m["enum"]
		_, cst := m["const"]
		if !any && !enum && !cst {
			c.fail(at, "no type (nor anyOf, enum or const)")
		}
	default:
		c.fail(at, "type %v is neither a name nor a list of names", t)
	}
	for t := range types {
		if !jsonTypeNames[t] {
			c.fail(at, "type %q is not supported", t)
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		of, ok := strictKeywords[k]
		switch {
		case !ok:
			c.fail(at, "keyword %q is not supported in strict mode", k)
		case of == "number" && !types["number"] && !types["integer"], of != "" && of != "number" && !types[of]:
			c.fail(at, "keyword %q applies to %s schemas, not %v", k, of, m["type"])
		}
	}
	if f, ok := m["format"].(string); ok && !strictFormats[f] {
		c.fail(at, "format %q is not supported", f)
	}
	if p, ok := m["pattern"].(string); ok {
		if _, err := regexp.Compile(p); err != nil {
			c.fail(at, "pattern %q is not a regular expression strict mode takes", p)
		}
	}
	if e, ok := m["enum"]; ok {
		list, ok := e.([]any)
		if !ok || len(list) == 0 {
			c.fail(at, "enum is not a non-empty list")
		}
		chars := 0
		for _, x := range list {
			if s, ok := x.(string); ok {
				chars += len(s)
			}
			if len(types) > 0 && !valueOfTypes(x, types) {
				c.fail(at, "enum value %v is not of type %v", x, m["type"])
			}
		}
		c.enums += len(list)
		c.chars += chars
		if len(list) > strictBigEnum && chars > strictBigEnumChars {
			c.fail(at, "an enum of %d values with %d characters, over %d", len(list), chars, strictBigEnumChars)
		}
	}
	if s, ok := m["const"].(string); ok {
		c.chars += len(s)
	}
	if a, ok := m["anyOf"]; ok {
		list, ok := a.([]any)
		if !ok || len(list) == 0 {
			c.fail(at, "anyOf is not a non-empty list")
		}
		for i, x := range list {
			c.node(x, fmt.Sprintf("%s/anyOf/%d", at, i), depth+1)
		}
	}
	if types["object"] {
		props, ok := m["properties"].(map[string]any)
		if !ok {
			c.fail(at, "an object without properties")
		}
		if ap, ok := m["additionalProperties"].(bool); !ok || ap {
			c.fail(at, "additionalProperties is not false")
		}
		req := map[string]int{}
		list, _ := m["required"].([]any)
		for _, r := range list {
			s, _ := r.(string)
			req[s]++
		}
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			c.props++
			c.chars += len(name)
			if req[name] != 1 {
				c.fail(at, "property %q is not listed once in required", name)
			}
			c.node(props[name], at+"/properties/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(name), depth+1)
		}
		for r := range req {
			if _, ok := props[r]; !ok {
				c.fail(at, "required lists %q, which is no property", r)
			}
		}
	}
	if types["array"] {
		items, ok := m["items"]
		if !ok {
			c.fail(at, "an array without items")
		} else {
			c.node(items, at+"/items", depth+1)
		}
	}
}

// valueOfTypes reports whether v is of one of types.
func valueOfTypes(v any, types map[string]bool) bool {
	switch x := v.(type) {
	case nil:
		return types["null"]
	case string:
		return types["string"]
	case bool:
		return types["boolean"]
	case float64:
		return types["number"] || types["integer"] && x == float64(int64(x))
	case map[string]any:
		return types["object"]
	case []any:
		return types["array"]
	}
	return false
}
