package toolenv

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"unicode/utf8"
)

// readSchema reads data — valid JSON without surrounding space, nesting
// no deeper than maxSchemaJSONDepth — into s (zero) as unmarshalSchema
// does, in one walk over each object's bytes. It reports false when it
// cannot be sure to read it alike (a member of an unexpected type, a
// key written with escapes or given twice, a string that is not plain
// UTF-8): the caller then resets s and reads data with unmarshalSchema,
// whose reading and errors stand.
func readSchema(s *Schema, data []byte) bool {
	switch string(data) {
	case "true", "false", "null":
		return true
	}
	if len(data) < 2 || data[0] != '{' {
		return false
	}
	var buf [16]schemaMember
	ms, ok := objectMembers(data, buf[:0])
	if !ok {
		return false
	}
	if repeatedKey(ms) {
		return false // the last one stands: unmarshalSchema's map says so
	}
	// The members by keyword, applied in unmarshalSchema's order (type
	// before nullable, whatever the document's order).
	var typ, nullable, props, minimum, maximum []byte
	var extra []schemaMember
	for _, m := range ms {
		r := m.value
		switch m.key {
		case "type":
			typ = r
		case "nullable":
			nullable = r
		case "properties":
			props = r
		case "$ref", "title", "description", "format", "pattern":
			v, ok := schemaString(r)
			if !ok {
				return false
			}
			switch m.key {
			case "$ref":
				s.Ref = v
			case "title":
				s.Title = v
			case "description":
				s.Description = v
			case "format":
				s.Format = v
			default:
				s.Pattern = v
			}
		case "required":
			if json.Unmarshal(r, &s.Required) != nil {
				return false
			}
		case "items":
			if string(r) != "null" {
				s.Items = &Schema{}
				if !readSchema(s.Items, r) {
					return false
				}
			}
		case "enum":
			if decodeNumbers(r, &s.Enum) != nil {
				return false
			}
		case "const":
			if decodeNumbers(r, &s.Const) != nil {
				return false
			}
		case "default":
			if decodeNumbers(r, &s.Default) != nil {
				return false
			}
		case "examples":
			if decodeNumbers(r, &s.Examples) != nil {
				return false
			}
		case "minimum":
			minimum = r
		case "maximum":
			maximum = r
		case "minLength", "maxLength", "minItems", "maxItems":
			var p **int
			switch m.key {
			case "minLength":
				p = &s.MinLength
			case "maxLength":
				p = &s.MaxLength
			case "minItems":
				p = &s.MinItems
			default:
				p = &s.MaxItems
			}
			if json.Unmarshal(r, p) != nil {
				return false
			}
		case "anyOf", "oneOf", "allOf":
			p := &s.AnyOf
			if m.key == "oneOf" {
				p = &s.OneOf
			} else if m.key == "allOf" {
				p = &s.AllOf
			}
			if !readSchemaList(p, r) {
				return false
			}
		case "deprecated":
			if json.Unmarshal(r, &s.Deprecated) != nil {
				return false
			}
		case "additionalProperties":
			s.AdditionalProperties = append(json.RawMessage(nil), r...)
		default:
			extra = append(extra, m)
		}
	}
	if typ != nil && readType(s, typ) != nil {
		return false
	}
	if nullable != nil {
		readNullable(s, nullable)
	}
	if props != nil {
		if !readProperties(s, props) {
			return false
		}
	}
	for _, m := range []struct {
		raw []byte
		to  **float64
	}{{minimum, &s.Minimum}, {maximum, &s.Maximum}} {
		if m.raw == nil {
			continue
		}
		var n json.Number
		if json.Unmarshal(m.raw, &n) != nil {
			return false
		}
		if n != "" {
			f, err := n.Float64()
			if err != nil {
				return false
			}
			*m.to = &f
		}
	}
	if len(extra) > 0 {
		s.Extra = make(map[string]json.RawMessage, len(extra))
		for _, m := range extra {
			s.Extra[m.key] = append(json.RawMessage(nil), m.value...)
		}
	}
	return true
}

// readProperties reads a properties object as decodeOrderedSchemas does:
// each property's schema, the names in their first order, a repeated
// name's last schema kept.
func readProperties(s *Schema, data []byte) bool {
	if len(data) < 2 || data[0] != '{' {
		return false
	}
	ms, ok := objectMembers(data, nil)
	if !ok {
		return false
	}
	props := make(map[string]*Schema, len(ms))
	var order []string
	for _, m := range ms {
		p := &Schema{}
		if !readSchema(p, m.value) {
			return false
		}
		if _, dup := props[m.key]; !dup {
			order = append(order, m.key)
		}
		props[m.key] = p
	}
	s.Properties, s.Order = props, order
	return true
}

// repeatedKey reports whether a key appears twice in ms: pair by pair
// for a few members, through a set for many (a schema may carry any
// number of unknown keywords, and comparing every pair of 100,000 would
// take minutes).
func repeatedKey(ms []schemaMember) bool {
	if len(ms) <= 16 {
		for i := range ms {
			for j := range i {
				if ms[i].key == ms[j].key {
					return true
				}
			}
		}
		return false
	}
	seen := make(map[string]struct{}, len(ms))
	for _, m := range ms {
		if _, dup := seen[m.key]; dup {
			return true
		}
		seen[m.key] = struct{}{}
	}
	return false
}

// readSchemaList reads a list of schemas (anyOf, oneOf, allOf) as
// encoding/json reads data into a []*Schema: null leaves *p nil, [] is
// an empty list, a null element a nil schema, and each other element is
// read by readSchema from its own span (not decoded, checked and read
// again at each level, as json.Unmarshal and UnmarshalJSON would).
func readSchemaList(p *[]*Schema, data []byte) bool {
	if string(data) == "null" {
		return true
	}
	if len(data) < 2 || data[0] != '[' {
		return false
	}
	list := []*Schema{}
	i := jsonSpace(data, 1)
	if i < len(data) && data[i] == ']' {
		*p = list
		return true
	}
	for i < len(data) {
		end := jsonValueEnd(data, i)
		if end < 0 {
			return false
		}
		var x *Schema
		if v := data[i:end]; string(v) != "null" {
			x = &Schema{}
			if !readSchema(x, v) {
				return false
			}
		}
		list = append(list, x)
		i = jsonSpace(data, end)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = jsonSpace(data, i+1)
		case ']':
			*p = list
			return true
		default:
			return false
		}
	}
	return false
}

// decodeNumbers decodes data into v with numbers kept as json.Number,
// as unmarshalSchema's keywords are decoded.
func decodeNumbers(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	return d.Decode(v)
}

// schemaString reads a JSON string (or null, as "") that encoding/json
// would read as its bytes: no escapes, valid UTF-8. Otherwise it asks
// encoding/json, and reports false where that fails.
func schemaString(r []byte) (string, bool) {
	if len(r) >= 2 && r[0] == '"' {
		in := r[1 : len(r)-1]
		if bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
			return string(in), true
		}
	}
	var v string
	if json.Unmarshal(r, &v) != nil {
		return "", false
	}
	return v, true
}

// schemaMember is one member of a JSON object: its key and its value's
// bytes, without the space around them.
type schemaMember struct {
	key   string
	value []byte
}

// objectMembers appends the members of data, a valid JSON object, to ms,
// in their order. It reports false for a key written with escapes or not
// in UTF-8 (encoding/json's reading of it is left to encoding/json), and
// for anything that is not an object it can walk.
func objectMembers(data []byte, ms []schemaMember) ([]schemaMember, bool) {
	i := jsonSpace(data, 1)
	if i < len(data) && data[i] == '}' {
		return ms, true
	}
	for i < len(data) {
		if data[i] != '"' {
			return nil, false
		}
		end := jsonStringEnd(data, i)
		if end < 0 {
			return nil, false
		}
		key := data[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			return nil, false
		}
		i = jsonSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = jsonSpace(data, i+1)
		vend := jsonValueEnd(data, i)
		if vend < 0 {
			return nil, false
		}
		ms = append(ms, schemaMember{string(key), data[i:vend]})
		i = jsonSpace(data, vend)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = jsonSpace(data, i+1)
		case '}':
			return ms, true
		default:
			return nil, false
		}
	}
	return nil, false
}

// jsonSpace returns the index of the first byte at or after i that is
// not JSON white space.
func jsonSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// jsonStringEnd returns the index just after the string that starts at
// data[i] ('"'), or -1.
func jsonStringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// jsonValueEnd returns the index just after the value that starts at
// data[i], or -1 (data is valid JSON: a scalar ends where a delimiter or
// space begins).
func jsonValueEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return jsonStringEnd(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end := jsonStringEnd(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	for j := i; j < len(data); j++ {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
	}
	return len(data)
}

// writeSchema writes s as marshalSchema does, into b, nested schemas
// included, each byte written once. An error means a value it cannot
// write as marshalSchema would; the caller then leaves b and asks
// marshalSchema.
func writeSchema(b *bytes.Buffer, s *Schema) error {
	if s == nil {
		b.WriteString("null")
		return nil
	}
	b.WriteByte('{')
	n := 0
	key := func(k string) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		writeJSONString(b, k)
		b.WriteByte(':')
	}
	value := func(k string, v any) error {
		raw, err := marshalNoHTML(v)
		if err != nil {
			return err
		}
		key(k)
		b.Write(raw)
		return nil
	}
	list := func(k string, ss []*Schema) error {
		key(k)
		b.WriteByte('[')
		for i, x := range ss {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeSchema(b, x); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	}
	raw := func(k string, r json.RawMessage) error {
		key(k)
		return json.Compact(b, r)
	}
	if s.Ref != "" {
		key("$ref")
		writeJSONString(b, s.Ref)
	}
	if s.Type != "" {
		key("type")
		if s.Nullable {
			b.WriteByte('[')
			writeJSONString(b, s.Type)
			b.WriteString(`,"null"]`)
		} else {
			writeJSONString(b, s.Type)
		}
	}
	if s.Title != "" {
		key("title")
		writeJSONString(b, s.Title)
	}
	if s.Description != "" {
		key("description")
		writeJSONString(b, s.Description)
	}
	if s.Properties != nil {
		key("properties")
		b.WriteByte('{')
		for i, name := range s.Names() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, name)
			b.WriteByte(':')
			if err := writeSchema(b, s.Properties[name]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	}
	if len(s.Required) > 0 {
		key("required")
		b.WriteByte('[')
		for i, r := range s.Required {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, r)
		}
		b.WriteByte(']')
	}
	if s.Items != nil {
		key("items")
		if err := writeSchema(b, s.Items); err != nil {
			return err
		}
	}
	steps := []struct {
		k  string
		on bool
		v  func() any
	}{
		{"enum", len(s.Enum) > 0, func() any { return s.Enum }},
		{"const", s.Const != nil, func() any { return s.Const }},
		{"default", s.Default != nil, func() any { return s.Default }},
		{"examples", len(s.Examples) > 0, func() any { return s.Examples }},
	}
	for _, st := range steps {
		if st.on {
			if err := value(st.k, st.v()); err != nil {
				return err
			}
		}
	}
	if s.Format != "" {
		key("format")
		writeJSONString(b, s.Format)
	}
	if s.Pattern != "" {
		key("pattern")
		writeJSONString(b, s.Pattern)
	}
	for _, f := range []struct {
		k string
		v *float64
	}{{"minimum", s.Minimum}, {"maximum", s.Maximum}} {
		if f.v != nil {
			if err := value(f.k, *f.v); err != nil {
				return err
			}
		}
	}
	for _, f := range []struct {
		k string
		v *int
	}{{"minLength", s.MinLength}, {"maxLength", s.MaxLength}, {"minItems", s.MinItems}, {"maxItems", s.MaxItems}} {
		if f.v != nil {
			key(f.k)
			b.Write(strconv.AppendInt(nil, int64(*f.v), 10))
		}
	}
	for _, l := range []struct {
		k  string
		ss []*Schema
	}{{"anyOf", s.AnyOf}, {"oneOf", s.OneOf}, {"allOf", s.AllOf}} {
		if len(l.ss) > 0 {
			if err := list(l.k, l.ss); err != nil {
				return err
			}
		}
	}
	if len(s.AdditionalProperties) > 0 {
		if err := raw("additionalProperties", s.AdditionalProperties); err != nil {
			return err
		}
	}
	if s.Deprecated {
		key("deprecated")
		b.WriteString("true")
	}
	if len(s.Extra) > 0 {
		keys := make([]string, 0, len(s.Extra))
		for k := range s.Extra {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := raw(k, s.Extra[k]); err != nil {
				return err
			}
		}
	}
	b.WriteByte('}')
	return nil
}

// writeJSONString writes s as a JSON string as marshalNoHTML does: as
// it is when nothing in it needs escaping, else by encoding/json.
func writeJSONString(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			raw, _ := marshalNoHTML(s) // a string always marshals
			b.Write(raw)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}
