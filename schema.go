package toolenv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// Schema is the subset of JSON Schema (2020-12, as OpenAPI 3.1 uses it)
// that tool inputs and outputs are described with.
//
// Properties keep the order they were declared in (Order), because a
// documentation's parameter order is part of what a model is shown, and
// output must be byte-identical run after run. Keywords Schema has no field
// for are kept in Extra and written back unchanged.
type Schema struct {
	Type        string             `json:"-"` // "object", "string", "integer", "number", "boolean", "array", "null" or "" (any)
	Nullable    bool               `json:"-"` // type also admits null (3.1 ["t","null"], 3.0 nullable)
	Title       string             `json:"-"`
	Description string             `json:"-"`
	Properties  map[string]*Schema `json:"-"`
	Order       []string           `json:"-"` // declaration order of Properties
	Required    []string           `json:"-"`
	Items       *Schema            `json:"-"`
	Enum        []any              `json:"-"`
	Const       any                `json:"-"`
	Default     any                `json:"-"` // nil means no default
	Examples    []any              `json:"-"`
	Format      string             `json:"-"`
	Pattern     string             `json:"-"`
	Minimum     *float64           `json:"-"`
	Maximum     *float64           `json:"-"`
	MinLength   *int               `json:"-"`
	MaxLength   *int               `json:"-"`
	MinItems    *int               `json:"-"`
	MaxItems    *int               `json:"-"`
	AnyOf       []*Schema          `json:"-"`
	OneOf       []*Schema          `json:"-"`
	AllOf       []*Schema          `json:"-"`
	Ref         string             `json:"-"`
	Deprecated  bool               `json:"-"`
	// AdditionalProperties is kept raw: it may be a boolean or a schema.
	AdditionalProperties json.RawMessage `json:"-"`
	// Extra holds every other keyword (x-* extensions among them).
	Extra map[string]json.RawMessage `json:"-"`
}

// ObjectSchema returns an empty object schema.
func ObjectSchema() *Schema { return &Schema{Type: "object", Properties: map[string]*Schema{}} }

// Prop returns the named property, or nil.
func (s *Schema) Prop(name string) *Schema {
	if s == nil {
		return nil
	}
	return s.Properties[name]
}

// Names returns the property names in declaration order; properties
// missing from Order follow in sorted order.
func (s *Schema) Names() []string {
	if s == nil || len(s.Properties) == 0 {
		return nil
	}
	out := make([]string, 0, len(s.Properties))
	seen := make(map[string]bool, len(s.Properties))
	for _, n := range s.Order {
		if _, ok := s.Properties[n]; ok && !seen[n] {
			out = append(out, n)
			seen[n] = true
		}
	}
	if len(out) < len(s.Properties) {
		var rest []string
		for n := range s.Properties {
			if !seen[n] {
				rest = append(rest, n)
			}
		}
		sort.Strings(rest)
		out = append(out, rest...)
	}
	return out
}

// SetProp adds or replaces a property, keeping declaration order (a new
// property goes last).
func (s *Schema) SetProp(name string, p *Schema) {
	if s.Properties == nil {
		s.Properties = map[string]*Schema{}
	}
	if _, ok := s.Properties[name]; !ok {
		s.Order = append(s.Order, name)
	}
	s.Properties[name] = p
}

// DeleteProp removes a property and its required mark.
func (s *Schema) DeleteProp(name string) {
	delete(s.Properties, name)
	s.Order = removeString(s.Order, name)
	s.Required = removeString(s.Required, name)
}

// IsRequired reports whether name is a required property.
func (s *Schema) IsRequired(name string) bool {
	if s == nil {
		return false
	}
	for _, r := range s.Required {
		if r == name {
			return true
		}
	}
	return false
}

// Clone returns a deep copy of s: the schema its JSON form reads back as
// (see cloneSchema for what that normalizes), built without the JSON.
func (s *Schema) Clone() *Schema {
	if s == nil {
		return nil
	}
	return cloneSchema(s, 0)
}

func removeString(list []string, s string) []string {
	out := list[:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// MarshalJSON writes the schema with a fixed keyword order and properties
// in declaration order, so that equal schemas give equal bytes.
//
// The schema and every schema in it are written into one buffer
// (writeSchema); should that fail (a value JSON cannot hold, a raw
// keyword that is not JSON), marshalSchema, the writer it replaces,
// writes it and its error stands (TestSchemaWritesAsBefore compares the
// two).
func (s *Schema) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	if writeSchema(&b, s) == nil {
		return b.Bytes(), nil
	}
	return marshalSchema(s)
}

// marshalSchema is MarshalJSON by encoding/json: each keyword's value
// marshalled on its own, a nested schema's bytes checked again by each
// level that holds it.
func marshalSchema(s *Schema) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	field := func(key string, v any) error {
		raw, err := marshalNoHTML(v)
		if err != nil {
			return fmt.Errorf("schema keyword %q: %w", key, err)
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		kb, _ := marshalNoHTML(key)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(raw)
		return nil
	}
	var err error
	set := func(key string, v any) {
		if err == nil {
			err = field(key, v)
		}
	}
	if s.Ref != "" {
		set("$ref", s.Ref)
	}
	if s.Type != "" {
		if s.Nullable {
			set("type", []string{s.Type, "null"})
		} else {
			set("type", s.Type)
		}
	}
	if s.Title != "" {
		set("title", s.Title)
	}
	if s.Description != "" {
		set("description", s.Description)
	}
	if s.Properties != nil {
		var pb bytes.Buffer
		pb.WriteByte('{')
		for i, name := range s.Names() {
			if i > 0 {
				pb.WriteByte(',')
			}
			kb, _ := marshalNoHTML(name)
			pb.Write(kb)
			pb.WriteByte(':')
			raw, perr := s.Properties[name].MarshalJSON()
			if perr != nil {
				return nil, fmt.Errorf("property %q: %w", name, perr)
			}
			pb.Write(raw)
		}
		pb.WriteByte('}')
		set("properties", json.RawMessage(pb.Bytes()))
	}
	if len(s.Required) > 0 {
		set("required", s.Required)
	}
	if s.Items != nil {
		set("items", s.Items)
	}
	if len(s.Enum) > 0 {
		set("enum", s.Enum)
	}
	if s.Const != nil {
		set("const", s.Const)
	}
	if s.Default != nil {
		set("default", s.Default)
	}
	if len(s.Examples) > 0 {
		set("examples", s.Examples)
	}
	if s.Format != "" {
		set("format", s.Format)
	}
	if s.Pattern != "" {
		set("pattern", s.Pattern)
	}
	if s.Minimum != nil {
		set("minimum", *s.Minimum)
	}
	if s.Maximum != nil {
		set("maximum", *s.Maximum)
	}
	if s.MinLength != nil {
		set("minLength", *s.MinLength)
	}
	if s.MaxLength != nil {
		set("maxLength", *s.MaxLength)
	}
	if s.MinItems != nil {
		set("minItems", *s.MinItems)
	}
	if s.MaxItems != nil {
		set("maxItems", *s.MaxItems)
	}
	if len(s.AnyOf) > 0 {
		set("anyOf", s.AnyOf)
	}
	if len(s.OneOf) > 0 {
		set("oneOf", s.OneOf)
	}
	if len(s.AllOf) > 0 {
		set("allOf", s.AllOf)
	}
	if len(s.AdditionalProperties) > 0 {
		set("additionalProperties", s.AdditionalProperties)
	}
	if s.Deprecated {
		set("deprecated", true)
	}
	if len(s.Extra) > 0 {
		keys := make([]string, 0, len(s.Extra))
		for k := range s.Extra {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			set(k, s.Extra[k])
		}
	}
	if err != nil {
		return nil, err
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a schema, recording property order. A boolean schema
// (true/false) reads as an empty schema.
//
// A valid schema is read in one pass per level (readSchema): each
// object's members are found by one walk over its bytes and each nested
// schema read from its own span, where decoding each level into a map
// of raw members, then each member again, read every byte of a schema
// four or five times per level above it (most of reading a large
// collection). Anything that one pass does not read — invalid JSON,
// a member of the wrong type, repeated or escaped keys — is read again
// by unmarshalSchema, the decoder it replaces, whose reading and errors
// stand (FuzzSchemaReadsAsBefore compares the two).
func (s *Schema) UnmarshalJSON(data []byte) error {
	*s = Schema{}
	data = bytes.TrimSpace(data)
	if jsonDepth(data) > maxSchemaJSONDepth {
		// Refused before it is decoded: each level would decode the
		// levels below it again.
		return ErrSchemaTooDeep
	}
	if json.Valid(data) && readSchema(s, data) {
		return nil
	}
	*s = Schema{}
	return unmarshalSchema(s, data)
}

// readType reads the "type" keyword's value r into s: a type name, or a
// list of them in which "null" makes s nullable.
func readType(s *Schema, r []byte) error {
	var one string
	if json.Unmarshal(r, &one) == nil {
		s.Type = one
		return nil
	}
	var many []string
	if err := json.Unmarshal(r, &many); err != nil {
		return fmt.Errorf("json schema keyword \"type\": want a string or a list of strings: %w", err)
	}
	for _, t := range many {
		if t == "null" {
			s.Nullable = true
		} else if s.Type == "" {
			s.Type = t
		}
	}
	if s.Type == "" && s.Nullable {
		s.Type, s.Nullable = "null", false
	}
	return nil
}

// readNullable reads OpenAPI 3.0's "nullable" keyword (read after
// "type"): anything but true leaves s as it is.
func readNullable(s *Schema, r []byte) {
	var b bool
	_ = json.Unmarshal(r, &b)
	s.Nullable = s.Nullable || b
}

// unmarshalSchema is UnmarshalJSON's reading of data (trimmed, not too
// deep) by encoding/json alone: each level decoded into a map of raw
// members, then each member.
func unmarshalSchema(s *Schema, data []byte) error {
	if bytes.Equal(data, []byte("true")) || bytes.Equal(data, []byte("false")) || bytes.Equal(data, []byte("null")) {
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("json schema must be an object: %w", err)
	}
	dec := func(key string, v any) error {
		r, ok := raw[key]
		if !ok {
			return nil
		}
		delete(raw, key)
		d := json.NewDecoder(bytes.NewReader(r))
		d.UseNumber()
		if err := d.Decode(v); err != nil {
			return fmt.Errorf("json schema keyword %q: %w", key, err)
		}
		return nil
	}
	if r, ok := raw["type"]; ok {
		delete(raw, "type")
		if err := readType(s, r); err != nil {
			return err
		}
	}
	if r, ok := raw["nullable"]; ok { // OpenAPI 3.0
		delete(raw, "nullable")
		readNullable(s, r)
	}
	if r, ok := raw["properties"]; ok {
		delete(raw, "properties")
		props, order, err := decodeOrderedSchemas(r)
		if err != nil {
			return fmt.Errorf("json schema keyword \"properties\": %w", err)
		}
		s.Properties, s.Order = props, order
	}
	var minimum, maximum json.Number
	var anyDefault, anyConst any
	steps := []error{
		dec("$ref", &s.Ref), dec("title", &s.Title), dec("description", &s.Description),
		dec("required", &s.Required), dec("items", &s.Items), dec("enum", &s.Enum),
		dec("const", &anyConst), dec("default", &anyDefault), dec("examples", &s.Examples),
		dec("format", &s.Format), dec("pattern", &s.Pattern),
		dec("minimum", &minimum), dec("maximum", &maximum),
		dec("minLength", &s.MinLength), dec("maxLength", &s.MaxLength),
		dec("minItems", &s.MinItems), dec("maxItems", &s.MaxItems),
		dec("anyOf", &s.AnyOf), dec("oneOf", &s.OneOf), dec("allOf", &s.AllOf),
		dec("deprecated", &s.Deprecated),
	}
	for _, err := range steps {
		if err != nil {
			return err
		}
	}
	s.Default, s.Const = anyDefault, anyConst
	if minimum != "" {
		f, err := minimum.Float64()
		if err != nil {
			return fmt.Errorf("json schema keyword \"minimum\": %w", err)
		}
		s.Minimum = &f
	}
	if maximum != "" {
		f, err := maximum.Float64()
		if err != nil {
			return fmt.Errorf("json schema keyword \"maximum\": %w", err)
		}
		s.Maximum = &f
	}
	if r, ok := raw["additionalProperties"]; ok {
		delete(raw, "additionalProperties")
		s.AdditionalProperties = append(json.RawMessage(nil), r...)
	}
	if len(raw) > 0 {
		s.Extra = raw
	}
	return nil
}

// decodeOrderedSchemas reads a JSON object of schemas, keeping key order.
func decodeOrderedSchemas(data []byte) (map[string]*Schema, []string, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	tok, err := d.Token()
	if err != nil {
		return nil, nil, err
	}
	if delim, ok := tok.(json.Delim); !ok || delim != '{' {
		return nil, nil, fmt.Errorf("want an object of schemas")
	}
	props := map[string]*Schema{}
	var order []string
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, nil, err
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("property %q: %w", name, err)
		}
		var p Schema
		if err := p.UnmarshalJSON(raw); err != nil {
			return nil, nil, fmt.Errorf("property %q: %w", name, err)
		}
		if _, dup := props[name]; !dup {
			order = append(order, name)
		}
		props[name] = &p
	}
	return props, order, nil
}

// marshalNoHTML marshals v without escaping <, > and &, which tool
// descriptions are full of.
func marshalNoHTML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// MarshalJSONNoHTML marshals v like json.Marshal but leaves <, > and &
// as they are.
func MarshalJSONNoHTML(v any) ([]byte, error) { return marshalNoHTML(v) }

// ErrSchemaTooDeep is the error of a schema nesting deeper than
// MaxSchemaDepth.
var ErrSchemaTooDeep = fmt.Errorf("the schema nests more than %d levels deep; flatten it, or describe the deep part as a JSON string", MaxSchemaDepth)

// maxSchemaJSONDepth is the JSON nesting of MaxSchemaDepth schema levels
// (each level is a schema object inside a properties object), with room.
const maxSchemaJSONDepth = 2*MaxSchemaDepth + 4

// MaxSchemaDepth is how deeply a tool's schema may nest (properties,
// items, anyOf/oneOf/allOf): deeper schemas are refused when a collection
// is loaded, since clients and libraries that walk them recursively give
// up (the MCP SDK panics past 1,000 levels of JSON) and no real API needs
// more.
const MaxSchemaDepth = 64

// CheckDepth returns an error when s nests more than MaxSchemaDepth levels
// (s itself is level 1) or contains itself.
func (s *Schema) CheckDepth() error {
	if s == nil {
		return nil
	}
	return newDepthWalk().check(s)
}

// check is CheckDepth within a walk that may have measured some of s's
// nodes already (as parts of other schemas). A measure taken is the depth
// of the node's own subtree, whatever the path that reached it, except
// when the walk was cut short or met a cycle, and then the schema being
// checked fails: a walk must not go on after an error.
func (d *depthWalk) check(s *Schema) error {
	if s == nil {
		return nil
	}
	n := d.depth(s)
	switch {
	case d.cycle:
		return errors.New("the schema contains itself; cut the recursion (describe the inner level as an object without properties)")
	case n > MaxSchemaDepth:
		return ErrSchemaTooDeep
	}
	return nil
}

// depthWalk measures a schema graph once per node, stopping past
// MaxSchemaDepth levels (a graph built in Go may share nodes or loop).
type depthWalk struct {
	done   map[*Schema]int
	path   map[*Schema]bool
	cycle  bool
	level  int
	walked int // nodes whose children were walked: each node at most once (a leaf has none)
}

func newDepthWalk() *depthWalk {
	return &depthWalk{done: map[*Schema]int{}, path: map[*Schema]bool{}}
}

// rawDepth is the depth of the schemas s's raw keywords (not,
// additionalProperties, $defs, ...) may hold: two levels of JSON make
// about one of schema.
func (d *depthWalk) rawDepth(s *Schema) int {
	deepest := (jsonDepth(s.AdditionalProperties) + 1) / 2
	for _, raw := range s.Extra {
		deepest = max(deepest, (jsonDepth(raw)+1)/2)
	}
	return deepest
}

func (d *depthWalk) depth(s *Schema) int {
	if s == nil {
		return 0
	}
	if len(s.Properties) == 0 && s.Items == nil && len(s.AnyOf)+len(s.OneOf)+len(s.AllOf) == 0 {
		// A leaf (most parameters) is in no cycle: its depth is its
		// raw keywords', which cost less to measure than to memoize.
		return 1 + d.rawDepth(s)
	}
	if n, ok := d.done[s]; ok {
		return n
	}
	if d.path[s] {
		d.cycle = true
		return MaxSchemaDepth + 1
	}
	d.level++
	defer func() { d.level-- }()
	if d.level > MaxSchemaDepth {
		return MaxSchemaDepth + 1 // deep enough to refuse: no need to go further
	}
	d.path[s] = true
	d.walked++
	deepest := 0
	visit := func(c *Schema) {
		if n := d.depth(c); n > deepest {
			deepest = n
		}
	}
	for _, c := range s.Properties {
		visit(c)
	}
	visit(s.Items)
	for _, list := range [][]*Schema{s.AnyOf, s.OneOf, s.AllOf} {
		for _, c := range list {
			visit(c)
		}
	}
	deepest = max(deepest, d.rawDepth(s))
	delete(d.path, s)
	d.done[s] = deepest + 1
	return deepest + 1
}

// jsonDepth returns the deepest nesting of objects and arrays in raw JSON
// (strings skipped).
func jsonDepth(raw []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
