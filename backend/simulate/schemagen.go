package simulate

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/ajvcompat"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// schemaGen makes a value that conforms to a JSON Schema (a tool's
// output schema): $ref resolved, allOf merged (required members inherited
// through it included), one branch of anyOf/oneOf chosen, and every
// constraint honoured — type, enum, const, pattern (a string generated
// from the pattern), format (date, date-time, time, email, uri, uuid,
// byte, ipv4, ...), length, bounds (exclusive ones and multipleOf), items
// (prefixItems, minItems, maxItems, uniqueItems), required, additional
// and pattern properties, minProperties and maxProperties.
//
// Within those constraints, values are made as plausible and as coherent
// as the generator can: from a base value (the nearest recorded answer,
// adapted to the call), arguments of the same name, recorded values at
// the same place, or made up from the member's name; array lengths follow
// an argument of the same name, a limit-like argument caps the top-level
// lists, and lists continue the steps of their recorded elements
// (consecutive dates, numbers).
type schemaGen struct {
	g      *generator
	doc    *schemaDoc
	strict bool
	alt    int // added to every anyOf/oneOf choice, to try other branches
	budget int // nodes left to make: bounds work on huge schemas
	limit  int // a limit-like argument's value, capping top-level lists (0: none)
}

// schemaDoc is what generation reads from one schema, worked out once:
// its $refs resolved, its patterns compiled. It is safe for concurrent
// use.
type schemaDoc struct {
	root     *toolenv.Schema
	mu       sync.Mutex
	rootJS   any // the root schema as decoded JSON, for $ref pointers
	refs     map[string]*toolenv.Schema
	patterns map[string]*compiledPattern
}

func newSchemaDoc(root *toolenv.Schema) *schemaDoc {
	return &schemaDoc{root: root, refs: map[string]*toolenv.Schema{}, patterns: map[string]*compiledPattern{}}
}

// pattern returns p compiled (nil when it does not compile).
func (d *schemaDoc) pattern(p string) *compiledPattern {
	d.mu.Lock()
	defer d.mu.Unlock()
	cp, ok := d.patterns[p]
	if !ok {
		cp = compilePattern(p)
		d.patterns[p] = cp
	}
	return cp
}

// newSchemaGen returns a generator of values of doc's root.
func newSchemaGen(g *generator, doc *schemaDoc) *schemaGen {
	sg := &schemaGen{g: g, doc: doc, budget: 20000}
	for k, v := range g.args {
		switch k {
		case "limit", "maxresults", "pagesize", "perpage", "top", "count", "max", "size", "num", "n", "numresults", "maxitems", "results":
			if f, ok := numberOf(v); ok && f >= 0 && f == math.Trunc(f) {
				sg.limit = int(f)
				if sg.limit == 0 {
					sg.limit = -1 // zero results asked for
				}
			}
		}
	}
	return sg
}

// node is a schema with its $ref resolved and its allOf merged, and the
// keywords toolenv.Schema keeps in Extra that generation honours.
type node struct {
	s            *toolenv.Schema
	patterns     []string
	exMin, exMax *float64
	multipleOf   float64
	unique       bool
	minProps     int
	maxProps     int // -1: none
	addlFalse    bool
	addl         *toolenv.Schema
	prefix       []*toolenv.Schema
	itemsFalse   bool
	patternProps []patternProp
	groups       []choice // anyOf and oneOf lists, from every merged part
	enum         []any    // nil: none
	hasEnum      bool
	consts       []any
	types        map[string]bool // allowed types ("" key unused); nil: any
	nullable     bool
	notNull      bool
}

type patternProp struct {
	pattern string
	s       *toolenv.Schema
}

type choice struct {
	branches []*toolenv.Schema
	one      bool // oneOf
}

// resolve returns the schema $ref points to (within the root), or s.
func (sg *schemaGen) resolve(s *toolenv.Schema) *toolenv.Schema {
	if s == nil || s.Ref == "" {
		return s
	}
	d := sg.doc
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := 0; s != nil && s.Ref != "" && i < 32; i++ {
		ref := s.Ref
		if r, ok := d.refs[ref]; ok {
			s = r
			continue
		}
		var target *toolenv.Schema
		if strings.HasPrefix(ref, "#") {
			if d.rootJS == nil {
				raw, err := d.root.MarshalJSON()
				if err == nil {
					_ = json.Unmarshal(raw, &d.rootJS)
				}
			}
			if v, ok := jsonPointer(d.rootJS, strings.TrimPrefix(ref, "#")); ok {
				if raw, err := json.Marshal(v); err == nil {
					var t toolenv.Schema
					if t.UnmarshalJSON(raw) == nil {
						target = &t
					}
				}
			}
		}
		if target == nil {
			target = &toolenv.Schema{} // outside the schema: anything
		}
		// Keywords beside $ref apply too (2020-12).
		if len(s.Properties) > 0 || s.Type != "" || len(s.Required) > 0 || len(s.AllOf) > 0 {
			sib := *s
			sib.Ref = ""
			target = &toolenv.Schema{AllOf: []*toolenv.Schema{target, &sib}}
		}
		d.refs[ref] = target
		s = target
	}
	return s
}

// jsonPointer follows a JSON pointer ("/$defs/Item") into v.
func jsonPointer(v any, p string) (any, bool) {
	if p == "" {
		return v, true
	}
	if !strings.HasPrefix(p, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(p[1:], "/") {
		tok, _ = url.PathUnescape(tok)
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// build merges s (its $ref and allOf resolved, recursively) into one node.
func (sg *schemaGen) build(s *toolenv.Schema) *node {
	n := &node{s: &toolenv.Schema{}, maxProps: -1}
	sg.merge(n, s, 0)
	if n.s.Type == "" && len(n.types) == 1 {
		for t := range n.types {
			n.s.Type = t
		}
	}
	return n
}

func (sg *schemaGen) merge(n *node, s *toolenv.Schema, depth int) {
	s = sg.resolve(s)
	if s == nil || depth > 32 {
		return
	}
	m := n.s
	if s.Type != "" {
		allowed := map[string]bool{s.Type: true}
		if s.Type == "number" {
			allowed["integer"] = true
		}
		if s.Nullable || s.Type == "null" {
			allowed["null"] = true
		}
		if n.types == nil {
			n.types = allowed
		} else {
			for t := range n.types {
				if !allowed[t] && !(t == "number" && allowed["integer"]) {
					delete(n.types, t)
				}
			}
			if n.types["number"] && s.Type == "integer" {
				delete(n.types, "number")
				n.types["integer"] = true
			}
		}
		if m.Type == "" || m.Type == "number" && s.Type == "integer" {
			m.Type = s.Type
		}
	}
	if s.Type != "" && !s.Nullable && s.Type != "null" {
		n.notNull = true
	}
	for _, name := range s.Names() {
		p := s.Properties[name]
		if old, ok := m.Properties[name]; ok {
			m.Properties[name] = &toolenv.Schema{AllOf: []*toolenv.Schema{old, p}}
		} else {
			m.SetProp(name, p)
		}
	}
	for _, r := range s.Required {
		if !m.IsRequired(r) {
			m.Required = append(m.Required, r)
		}
	}
	if s.Items != nil {
		if m.Items == nil {
			m.Items = s.Items
		} else {
			m.Items = &toolenv.Schema{AllOf: []*toolenv.Schema{m.Items, s.Items}}
		}
	}
	if len(s.Enum) > 0 {
		if !n.hasEnum {
			n.enum, n.hasEnum = append([]any(nil), s.Enum...), true
		} else {
			var keep []any
			for _, e := range n.enum {
				for _, f := range s.Enum {
					if sameJSON(e, f) {
						keep = append(keep, e)
						break
					}
				}
			}
			n.enum = keep
		}
	}
	if s.Const != nil {
		n.consts = append(n.consts, s.Const)
	}
	if m.Format == "" {
		m.Format = s.Format
	}
	if s.Pattern != "" {
		n.patterns = append(n.patterns, s.Pattern)
	}
	if s.Minimum != nil && (m.Minimum == nil || *s.Minimum > *m.Minimum) {
		m.Minimum = s.Minimum
	}
	if s.Maximum != nil && (m.Maximum == nil || *s.Maximum < *m.Maximum) {
		m.Maximum = s.Maximum
	}
	m.MinLength = maxIntPtr(m.MinLength, s.MinLength)
	m.MaxLength = minIntPtr(m.MaxLength, s.MaxLength)
	m.MinItems = maxIntPtr(m.MinItems, s.MinItems)
	m.MaxItems = minIntPtr(m.MaxItems, s.MaxItems)
	if f, ok := extraNumber(s, "exclusiveMinimum"); ok && (n.exMin == nil || f > *n.exMin) {
		n.exMin = &f
	}
	if f, ok := extraNumber(s, "exclusiveMaximum"); ok && (n.exMax == nil || f < *n.exMax) {
		n.exMax = &f
	}
	if f, ok := extraNumber(s, "multipleOf"); ok && f > 0 {
		if n.multipleOf == 0 {
			n.multipleOf = f
		} else if f != n.multipleOf {
			n.multipleOf = lcmFloat(n.multipleOf, f)
		}
	}
	if b, ok := extraBool(s, "uniqueItems"); ok && b {
		n.unique = true
	}
	if f, ok := extraNumber(s, "minProperties"); ok && int(f) > n.minProps {
		n.minProps = int(f)
	}
	if f, ok := extraNumber(s, "maxProperties"); ok && (n.maxProps < 0 || int(f) < n.maxProps) {
		n.maxProps = int(f)
	}
	if raw := s.AdditionalProperties; len(raw) > 0 {
		switch strings.TrimSpace(string(raw)) {
		case "false":
			n.addlFalse = true
		case "true", "{}":
		default:
			var a toolenv.Schema
			if a.UnmarshalJSON(raw) == nil {
				if n.addl == nil {
					n.addl = &a
				} else {
					n.addl = &toolenv.Schema{AllOf: []*toolenv.Schema{n.addl, &a}}
				}
			}
		}
	}
	if raw, ok := s.Extra["prefixItems"]; ok && n.prefix == nil {
		var list []*toolenv.Schema
		if json.Unmarshal(raw, &list) == nil {
			n.prefix = list
		}
	}
	if raw, ok := s.Extra["items"]; ok && strings.TrimSpace(string(raw)) == "false" {
		n.itemsFalse = true
	}
	if raw, ok := s.Extra["patternProperties"]; ok {
		props, order, err := decodeSchemaObject(raw)
		if err == nil {
			for _, p := range order {
				n.patternProps = append(n.patternProps, patternProp{p, props[p]})
			}
		}
	}
	if len(s.AnyOf) > 0 {
		n.groups = append(n.groups, choice{branches: s.AnyOf})
	}
	if len(s.OneOf) > 0 {
		n.groups = append(n.groups, choice{branches: s.OneOf, one: true})
	}
	for _, a := range s.AllOf {
		sg.merge(n, a, depth+1)
	}
}

// decodeSchemaObject reads an object of schemas keeping its key order.
func decodeSchemaObject(raw json.RawMessage) (map[string]*toolenv.Schema, []string, error) {
	var wrap toolenv.Schema
	if err := wrap.UnmarshalJSON([]byte(`{"properties":` + string(raw) + `}`)); err != nil {
		return nil, nil, err
	}
	return wrap.Properties, wrap.Names(), nil
}

func maxIntPtr(a, b *int) *int {
	if a == nil || b != nil && *b > *a {
		return b
	}
	return a
}

func minIntPtr(a, b *int) *int {
	if a == nil || b != nil && *b < *a {
		return b
	}
	return a
}

func lcmFloat(a, b float64) float64 {
	if a == math.Trunc(a) && b == math.Trunc(b) && a < 1e9 && b < 1e9 {
		x, y := int64(a), int64(b)
		g := x
		for r := y; r != 0; {
			g, r = r, g%r
		}
		return float64(x / g * y)
	}
	return a * b
}

// extraNumber reads a numeric keyword kept in Extra; a draft-04 boolean
// exclusiveMinimum/Maximum (true) takes the value of minimum/maximum.
func extraNumber(s *toolenv.Schema, key string) (float64, bool) {
	raw, ok := s.Extra[key]
	if !ok {
		return 0, false
	}
	switch strings.TrimSpace(string(raw)) {
	case "true":
		if key == "exclusiveMinimum" && s.Minimum != nil {
			return *s.Minimum, true
		}
		if key == "exclusiveMaximum" && s.Maximum != nil {
			return *s.Maximum, true
		}
		return 0, false
	case "false":
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
	return f, err == nil
}

func extraBool(s *toolenv.Schema, key string) (bool, bool) {
	raw, ok := s.Extra[key]
	if !ok {
		return false, false
	}
	var b bool
	return b, json.Unmarshal(raw, &b) == nil
}

// sameJSON reports whether two decoded JSON values are equal.
func sameJSON(a, b any) bool {
	return string(encodeJSON(ordered(normalNumbers(a)))) == string(encodeJSON(ordered(normalNumbers(b))))
}

// normalNumbers writes numbers in one form, so that 1 and 1.0 compare equal.
func normalNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		return canonicalNumber(string(x))
	case float64:
		return canonicalNumber(strconv.FormatFloat(x, 'g', -1, 64))
	case int:
		return json.Number(strconv.Itoa(x))
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalNumbers(e)
		}
		return out
	case pyfmt.Dict:
		out := make(pyfmt.Dict, len(x))
		for i, m := range x {
			out[i] = pyfmt.Item{Key: m.Key, Value: normalNumbers(m.Value)}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalNumbers(e)
		}
		return out
	}
	return v
}

func canonicalNumber(s string) json.Number {
	if c, err := toolenv.CanonicalNumber(s); err == nil {
		return json.Number(c)
	}
	return json.Number(s)
}

// value makes a value of s for the member at path (key is its name);
// base, when has is set, is the value the nearest recorded answer holds
// there.
func (sg *schemaGen) value(s *toolenv.Schema, path, key string, base any, has bool, depth int) any {
	sg.budget--
	if depth > maxDepth || sg.budget < 0 {
		return nil
	}
	n := sg.build(s)
	if len(n.groups) > 0 {
		return sg.choose(n, s, path, key, base, has, depth)
	}
	return sg.make(n, path, key, base, has, depth)
}

// choose picks a branch of each anyOf/oneOf group (the first the base
// agrees with, else by alt), merges it with the rest and makes a value.
func (sg *schemaGen) choose(n *node, s *toolenv.Schema, path, key string, base any, has bool, depth int) any {
	parts := []*toolenv.Schema{withoutGroups(s)}
	for gi, g := range n.groups {
		pick := -1
		if has && !sg.strict {
			for i, b := range g.branches {
				if sg.fitsShallow(sg.build(b), base) {
					pick = i
					break
				}
			}
		}
		if pick < 0 || sg.alt > 0 {
			pick = (max(pick, 0) + sg.alt + gi) % len(g.branches)
		}
		parts = append(parts, g.branches[pick])
	}
	// The branches' own anyOf/oneOf are chosen from in turn.
	return sg.value(&toolenv.Schema{AllOf: parts}, path, key, base, has, depth+1)
}

// withoutGroups is s without its anyOf and oneOf (they are chosen from),
// and its allOf parts likewise, recursively.
func withoutGroups(s *toolenv.Schema) *toolenv.Schema {
	if s == nil {
		return nil
	}
	c := *s
	c.AnyOf, c.OneOf = nil, nil
	if len(s.AllOf) > 0 {
		c.AllOf = make([]*toolenv.Schema, len(s.AllOf))
		for i, a := range s.AllOf {
			c.AllOf[i] = withoutGroups(a)
		}
	}
	return &c
}

// kindOf is the JSON type the node makes: its type, else what its
// keywords imply, else the base value's.
func (n *node) kindOf(base any, has bool) string {
	t := n.s.Type
	if t == "null" && n.types != nil && len(n.types) > 1 {
		t = ""
	}
	if t != "" && (n.types == nil || n.types[t]) {
		return t
	}
	for _, k := range []string{"object", "array", "string", "integer", "number", "boolean", "null"} {
		if n.types[k] {
			return k
		}
	}
	switch {
	case len(n.s.Properties) > 0 || len(n.s.Required) > 0 || n.addl != nil || n.addlFalse || n.minProps > 0:
		return "object"
	case n.s.Items != nil || n.prefix != nil || n.s.MinItems != nil:
		return "array"
	case len(n.patterns) > 0 || n.s.Format != "" && !numberFormat(n.s.Format) || n.s.MinLength != nil || n.s.MaxLength != nil:
		return "string"
	case n.s.Minimum != nil || n.s.Maximum != nil || n.exMin != nil || n.exMax != nil || n.multipleOf > 0:
		return "number"
	}
	if has && base != nil {
		switch kindOfValue(base) {
		case kindObject:
			return "object"
		case kindArray:
			return "array"
		case kindInt:
			return "integer"
		case kindFloat:
			return "number"
		case kindBool:
			return "boolean"
		}
	}
	return "string"
}

func numberFormat(f string) bool {
	switch f {
	case "int32", "int64", "float", "double":
		return true
	}
	return false
}

// make makes a value of the node (its groups already chosen).
func (sg *schemaGen) make(n *node, path, key string, base any, has bool, depth int) any {
	if len(n.consts) > 0 {
		return ordered(n.consts[0])
	}
	if n.hasEnum {
		return sg.fromEnum(n, path, base, has)
	}
	if has && base == nil && !sg.strict && (n.types == nil && !n.notNull || n.types["null"]) {
		return nil
	}
	switch n.kindOf(base, has) {
	case "object":
		return sg.object(n, path, key, base, has, depth)
	case "array":
		return sg.array(n, path, key, base, has, depth)
	case "integer":
		return sg.number(n, path, key, base, has, true)
	case "number":
		return sg.number(n, path, key, base, has, false)
	case "boolean":
		if b, ok := base.(bool); ok && has && !sg.strict {
			return b
		}
		if v, ok := sg.g.fromArgs(kindBool, key); ok && !sg.strict {
			return v
		}
		return hash64(sg.g.seed, path)>>17&1 == 1
	case "null":
		return nil
	}
	return sg.str(n, path, key, base, has)
}

// fromEnum picks an enum value: the base's or the argument's when listed,
// else one by the call's hash; values that break the node's other
// constraints are passed over.
func (sg *schemaGen) fromEnum(n *node, path string, base any, has bool) any {
	if len(n.enum) == 0 {
		return nil
	}
	if has && !sg.strict {
		for _, e := range n.enum {
			if sameJSON(e, base) {
				return ordered(e)
			}
		}
	}
	h := hash64(sg.g.seed, path)
	for i := range n.enum {
		e := n.enum[(h+uint64(i))%uint64(len(n.enum))]
		if sg.fitsShallow(&node{s: n.s, patterns: n.patterns, exMin: n.exMin, exMax: n.exMax, multipleOf: n.multipleOf, maxProps: -1, types: n.types}, ordered(e)) {
			return ordered(e)
		}
	}
	return ordered(n.enum[h%uint64(len(n.enum))])
}

// deepObject is the depth past which objects hold their required members
// only, so that a recursive schema (a tree whose children are optional)
// ends.
const deepObject = 12

// object makes an object: every declared property, the required ones not
// declared, and the base's other members where more are allowed.
func (sg *schemaGen) object(n *node, path, key string, base any, has bool, depth int) any {
	bo, _ := base.(pyfmt.Dict)
	if sg.strict {
		bo = nil
	}
	names := n.s.Names()
	if depth > deepObject {
		// Deep down (a recursive schema), only the required members.
		names = nil
		for _, name := range n.s.Names() {
			if n.s.IsRequired(name) {
				names = append(names, name)
			}
		}
	}
	for _, r := range n.s.Required {
		if n.s.Properties[r] == nil {
			names = append(names, r)
		}
	}
	if !n.addlFalse && n.addl == nil && len(n.patternProps) == 0 {
		for _, m := range bo {
			if n.s.Properties[m.Key] == nil && !n.s.IsRequired(m.Key) {
				names = append(names, m.Key)
			}
		}
	}
	// maxProperties: the optional members go first.
	if n.maxProps >= 0 && len(names) > n.maxProps {
		var keep []string
		for _, name := range names {
			if n.s.IsRequired(name) {
				keep = append(keep, name)
			}
		}
		for _, name := range names {
			if len(keep) >= n.maxProps {
				break
			}
			if !n.s.IsRequired(name) {
				keep = append(keep, name)
			}
		}
		names = keep
	}
	for i := 0; len(names) < n.minProps && !n.addlFalse && i < n.minProps+8; i++ {
		extra := fmt.Sprintf("property_%d", i+1)
		if !containsString(names, extra) && sg.allowedName(n, extra) {
			names = append(names, extra)
		}
	}
	o := make(pyfmt.Dict, 0, len(names))
	for _, name := range names {
		ps := sg.propSchema(n, name)
		bv, bhas := bo.Get(name)
		v := sg.value(ps, joinPath(path, name), name, bv, bhas, depth+1)
		o = append(o, pyfmt.Item{Key: name, Value: v})
	}
	if !sg.strict {
		applyRelations(sg.g.relations[poolPath(path)], o)
	}
	return o
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// propSchema is the schema a member named name must conform to: its
// property's, and every pattern property's whose pattern it matches, else
// additionalProperties'.
func (sg *schemaGen) propSchema(n *node, name string) *toolenv.Schema {
	var parts []*toolenv.Schema
	if p := n.s.Properties[name]; p != nil {
		parts = append(parts, p)
	}
	for _, pp := range n.patternProps {
		if sg.doc.pattern(pp.pattern).matches(name) {
			parts = append(parts, pp.s)
		}
	}
	if len(parts) == 0 && n.addl != nil {
		parts = append(parts, n.addl)
	}
	switch len(parts) {
	case 0:
		return &toolenv.Schema{}
	case 1:
		return parts[0]
	}
	return &toolenv.Schema{AllOf: parts}
}

// allowedName reports whether an undeclared member named name may be
// added (no pattern property refuses it by its own schema).
func (sg *schemaGen) allowedName(n *node, name string) bool {
	if n.addlFalse {
		return false
	}
	for _, pp := range n.patternProps {
		if sg.doc.pattern(pp.pattern).matches(name) {
			return false // its schema may not be satisfiable by what is made; keep to others
		}
	}
	return true
}

// array makes a list: its length from an argument of the same name, the
// base's, or 3, capped by a limit-like argument at the top level, within
// minItems and maxItems; elements past the base's continue its steps.
func (sg *schemaGen) array(n *node, path, key string, base any, has bool, depth int) any {
	ba, _ := base.([]any)
	if sg.strict {
		ba = nil
	}
	length := 3
	if ba != nil {
		length = len(ba)
	}
	if f, ok := numberOf(sg.g.args[normName(key)]); ok && key != "" && f >= 0 && f == math.Trunc(f) && !sg.strict {
		length = int(f)
	} else if sg.limit != 0 && depth <= 1 && !sg.strict {
		if sg.limit < 0 {
			length = 0
		} else {
			length = min(length, sg.limit)
		}
	}
	length = min(length, sg.g.maxList)
	if n.s.MinItems != nil && length < *n.s.MinItems {
		length = *n.s.MinItems
	}
	if n.s.MaxItems != nil && length > *n.s.MaxItems {
		length = *n.s.MaxItems
	}
	if n.itemsFalse && length > len(n.prefix) {
		length = len(n.prefix)
	}
	length = max(length, 0)
	steps := continuation(ba, length, sg.g.lists[poolPath(path)])
	out := make([]any, 0, length)
	seen := map[string]bool{}
	for i := 0; len(out) < length && i < length*3+8; i++ {
		es := n.s.Items
		if i < len(n.prefix) {
			es = n.prefix[i]
		}
		idx := len(out)
		var bv any
		bhas := false
		switch {
		case idx < len(ba) && i == idx:
			bv, bhas = ba[idx], true
		case idx < len(steps) && steps[idx] != nil:
			bv, bhas = steps[idx], true
		}
		v := sg.value(es, path+"["+strconv.Itoa(idx)+"]"+strings.Repeat("'", i-idx), key, bv, bhas, depth+1)
		if n.unique {
			k := string(encodeJSON(normalNumbers(v)))
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		out = append(out, v)
	}
	return out
}

// continuation extends the base list to length elements: an element past
// its end takes, for every scalar member whose values step regularly in
// the base or, where the base is too short to tell, in another recorded
// list at the same place (dates a day apart, numbers by a constant), the
// next step from the base's last, and its other members from the base's
// element at the same position in the cycle. It returns nil when the
// base is empty.
func continuation(ba []any, length int, recorded [][]any) []any {
	if len(ba) == 0 || length <= len(ba) {
		return nil
	}
	// stepFor returns the element i of a progression that agrees with
	// the base's values vals (one or more).
	stepFor := func(vals []any, i int, member string, whole bool) (any, bool) {
		if next, ok := stepAt(vals, i); ok {
			return next, true
		}
		for _, r := range recorded {
			col := r
			if !whole {
				col = column(r, member)
			}
			if len(col) < 2 {
				continue
			}
			if _, ok := stepAt(col, 2); !ok {
				continue
			}
			// The recorded step, from the base's last value.
			if next, ok := stepAt([]any{col[0], col[1]}, i-len(vals)+1); ok {
				if shifted, ok := shift(vals[len(vals)-1], col[0], next); ok {
					return shifted, true
				}
			}
		}
		return nil, false
	}
	out := make([]any, length)
	copy(out, ba)
	for i := len(ba); i < length; i++ {
		row := ba[i%len(ba)]
		switch r := row.(type) {
		case pyfmt.Dict:
			o := make(pyfmt.Dict, len(r))
			for j, m := range r {
				v := m.Value
				if col := column(ba, m.Key); col != nil {
					if next, ok := stepFor(col, i, m.Key, false); ok {
						v = next
					}
				}
				o[j] = pyfmt.Item{Key: m.Key, Value: v}
			}
			out[i] = o
		default:
			if next, ok := stepFor(ba, i, "", true); ok {
				out[i] = next
			} else {
				out[i] = row
			}
		}
	}
	return out
}

// shift returns to + (next - from) where the three are dates of one
// layout or numbers: the step from one recorded value to a later one,
// taken from another value.
func shift(to, from, next any) (any, bool) {
	if a, ok := to.(string); ok {
		b, okB := from.(string)
		c, okC := next.(string)
		if !okB || !okC {
			return nil, false
		}
		for _, l := range []string{time.DateOnly, time.RFC3339} {
			ta, e1 := time.Parse(l, a)
			tb, e2 := time.Parse(l, b)
			tc, e3 := time.Parse(l, c)
			if e1 == nil && e2 == nil && e3 == nil {
				return ta.Add(tc.Sub(tb)).Format(l), true
			}
		}
		return nil, false
	}
	fa, okA := numberOf(to)
	fb, okB := numberOf(from)
	fc, okC := numberOf(next)
	if !okA || !okB || !okC {
		return nil, false
	}
	if kindOfValue(to) == kindInt && kindOfValue(next) == kindInt {
		return json.Number(strconv.FormatInt(int64(math.Round(fa+fc-fb)), 10)), true
	}
	return json.Number(strconv.FormatFloat(fa+fc-fb, 'f', decimals([]any{to, next}), 64)), true
}

// column is the values of member key across the rows (nil when a row
// lacks it or is not an object).
func column(rows []any, key string) []any {
	col := make([]any, len(rows))
	for i, r := range rows {
		d, ok := r.(pyfmt.Dict)
		if !ok {
			return nil
		}
		v, ok := d.Get(key)
		if !ok {
			return nil
		}
		col[i] = v
	}
	return col
}

// stepAt returns element i of the progression vals starts, when vals
// step regularly: dates (YYYY-MM-DD, or date-times) by a constant
// duration (two or more), numbers by a constant difference (three or
// more, or two that differ by one).
func stepAt(vals []any, i int) (any, bool) {
	if len(vals) < 2 {
		return nil, false
	}
	if s0, ok := vals[0].(string); ok {
		layout := ""
		for _, l := range []string{time.DateOnly, time.RFC3339} {
			if _, err := time.Parse(l, s0); err == nil {
				layout = l
				break
			}
		}
		if layout == "" {
			return nil, false
		}
		ts := make([]time.Time, len(vals))
		for j, v := range vals {
			s, ok := v.(string)
			t, err := time.Parse(layout, s)
			if !ok || err != nil {
				return nil, false
			}
			ts[j] = t
		}
		d := ts[1].Sub(ts[0])
		if d == 0 {
			return nil, false
		}
		for j := 2; j < len(ts); j++ {
			if ts[j].Sub(ts[j-1]) != d {
				return nil, false
			}
		}
		return ts[0].Add(time.Duration(i) * d).Format(layout), true
	}
	fs := make([]float64, len(vals))
	ints := true
	for j, v := range vals {
		f, ok := numberOf(v)
		if !ok {
			return nil, false
		}
		fs[j] = f
		ints = ints && kindOfValue(v) == kindInt
	}
	d := fs[1] - fs[0]
	// Any two numbers step by their difference: two make a progression
	// only when they count (1, 2), three or more when they keep a step.
	if d == 0 || len(fs) == 2 && math.Abs(d) != 1 {
		return nil, false
	}
	for j := 2; j < len(fs); j++ {
		if math.Abs(fs[j]-fs[j-1]-d) > 1e-9*math.Max(1, math.Abs(d)) {
			return nil, false
		}
	}
	f := fs[0] + float64(i)*d
	if ints {
		return json.Number(strconv.FormatInt(int64(math.Round(f)), 10)), true
	}
	return json.Number(strconv.FormatFloat(f, 'f', decimals(vals), 64)), true
}

// decimals is the most decimals any of the numbers is written with.
func decimals(vals []any) int {
	d := 0
	for _, v := range vals {
		s := ""
		switch x := v.(type) {
		case json.Number:
			s = x.String()
		case float64:
			s = strconv.FormatFloat(x, 'f', -1, 64)
		}
		if strings.ContainsAny(s, "eE") {
			continue
		}
		if i := strings.IndexByte(s, '.'); i >= 0 {
			d = max(d, len(s)-i-1)
		}
	}
	return d
}

// numberOf reads a JSON number (or a number written as text).
func numberOf(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil && !math.IsInf(f, 0)
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// number makes a number within the bounds: the base's, an argument's, a
// recorded value or a plausible one for the name, else one made to fit.
func (sg *schemaGen) number(n *node, path, key string, base any, has bool, integer bool) any {
	k := kindFloat
	if integer {
		k = kindInt
	}
	fits := func(v any) bool { return v != nil && sg.fitsShallow(n, v) && (!integer || kindOfValue(v) == kindInt) }
	if !sg.strict {
		if has && fits(base) {
			return base
		}
		if v, ok := sg.g.fromArgs(k, key); ok && fits(v) {
			return v
		}
		h := hash64(sg.g.seed, path)
		if v, ok := sg.g.fromPool(k, poolPath(path), h); ok && fits(v) {
			return v
		}
		var v any
		if integer {
			v = intValue(key, h)
		} else {
			v = floatValue(key, h)
		}
		if fits(v) {
			return v
		}
	}
	return sg.fitNumber(n, path, integer)
}

// fitNumber makes a number within the node's bounds, multiple and
// format.
func (sg *schemaGen) fitNumber(n *node, path string, integer bool) any {
	lo, hi := math.Inf(-1), math.Inf(1)
	loEx, hiEx := false, false
	if n.s.Minimum != nil {
		lo = *n.s.Minimum
	}
	if n.s.Maximum != nil {
		hi = *n.s.Maximum
	}
	if n.exMin != nil && *n.exMin >= lo {
		lo, loEx = *n.exMin, true
	}
	if n.exMax != nil && *n.exMax <= hi {
		hi, hiEx = *n.exMax, true
	}
	if n.s.Format == "int32" {
		lo, hi = math.Max(lo, math.MinInt32), math.Min(hi, math.MaxInt32)
	}
	step := n.multipleOf
	if integer {
		if step == 0 {
			step = 1
		} else if step != math.Trunc(step) {
			step = lcmFloat(step, 1)
		}
	}
	h := hash64(sg.g.seed, path)
	// A value near the middle of the range (or of [0, 100] where it is
	// open), then the multiples of step around it.
	target := float64(h%100) + float64(h%7)/8
	switch {
	case !math.IsInf(lo, 0) && !math.IsInf(hi, 0):
		target = lo + (hi-lo)*float64(h%1000)/1000
	case !math.IsInf(lo, 0):
		target = lo + float64(h%100)
	case !math.IsInf(hi, 0):
		target = hi - float64(h%100)
	}
	ok := func(f float64) bool {
		return (f > lo || !loEx && f == lo) && (f < hi || !hiEx && f == hi) && !math.IsInf(f, 0) && !math.IsNaN(f)
	}
	if step > 0 {
		m := math.Round(target / step)
		for d := 0.0; d < 1000; d++ {
			for _, c := range []float64{(m + d) * step, (m - d) * step} {
				if ok(c) && (n.multipleOf == 0 || isMultiple(c, n.multipleOf)) {
					return numberJSON(c, integer)
				}
			}
		}
		// A range narrower than the step: its lowest multiple.
		c := math.Ceil(lo/step) * step
		return numberJSON(c, integer)
	}
	for _, c := range []float64{target, (lo + hi) / 2, lo + 1, hi - 1, lo, hi, 0} {
		if ok(c) {
			if integer {
				c = math.Round(c)
				if !ok(c) {
					continue
				}
			}
			return numberJSON(c, integer)
		}
	}
	return numberJSON(math.Nextafter(lo, hi), integer)
}

func isMultiple(f, m float64) bool {
	q := f / m
	return math.Abs(q-math.Round(q)) < 1e-9
}

// numberJSON writes f as a JSON number (an integer without a point).
func numberJSON(f float64, integer bool) json.Number {
	if integer || f == math.Trunc(f) && math.Abs(f) < 1e15 {
		if integer {
			return json.Number(strconv.FormatFloat(math.Round(f), 'f', -1, 64))
		}
		return json.Number(strconv.FormatFloat(f, 'f', -1, 64) + ".0")
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

// str makes a string: the base's, an argument's, a recorded one or a
// plausible one for the name and format, when it fits every constraint;
// else one generated from the pattern (or the format) and fitted to the
// length bounds.
func (sg *schemaGen) str(n *node, path, key string, base any, has bool) any {
	fits := func(v any) bool { _, ok := v.(string); return ok && sg.fitsShallow(n, v) }
	h := hash64(sg.g.seed, path)
	if !sg.strict {
		if has && fits(base) {
			return base
		}
		if v, ok := sg.g.fromArgs(kindString, key); ok && fits(v) {
			return v
		}
		if v, ok := sg.g.fromPool(kindString, poolPath(path), h); ok && fits(v) {
			return v
		}
	}
	if v := sg.g.stringValue(key, n.s.Format, h); fits(v) {
		return v
	}
	if v, ok := formatString(n.s.Format, h); ok && fits(v) {
		return v
	}
	minLen, maxLen := 0, -1
	if n.s.MinLength != nil {
		minLen = *n.s.MinLength
	}
	if n.s.MaxLength != nil {
		maxLen = *n.s.MaxLength
	}
	for i, p := range n.patterns {
		if v, ok := sg.doc.pattern(p).generate(minLen, maxLen, h+uint64(i)); ok && fits(v) {
			return v
		}
	}
	// Fit a plausible string to the length bounds.
	v := sg.g.stringValue(key, n.s.Format, h)
	if f, ok := formatString(n.s.Format, h); ok {
		v = f
	}
	return fitLength(v, minLen, maxLen, h)
}

// fitLength pads (with letters) or cuts s to between minLen and maxLen
// runes.
func fitLength(s string, minLen, maxLen int, h uint64) string {
	if maxLen >= 0 && utf8.RuneCountInString(s) > maxLen {
		r := []rune(s)
		s = string(r[:maxLen])
	}
	for n := utf8.RuneCountInString(s); n < minLen; n++ {
		s += string(rune('a' + (h+uint64(n))%26))
	}
	return s
}

// formatString makes a string of the format as Ajv checks it.
func formatString(format string, h uint64) (string, bool) {
	t := dateFor(h)
	switch format {
	case "date":
		return t.Format(time.DateOnly), true
	case "date-time", "iso-date-time":
		return t.Format(time.RFC3339), true
	case "time", "iso-time":
		return t.Format("15:04:05Z"), true
	case "duration":
		return fmt.Sprintf("P%dDT%dH", h%30+1, h%24), true
	case "email", "idn-email":
		return fmt.Sprintf("user%d@example.com", h%10000), true
	case "hostname", "idn-hostname":
		return fmt.Sprintf("host%d.example.com", h%1000), true
	case "uri", "url", "iri":
		return fmt.Sprintf("https://example.com/%08x", uint32(h)), true
	case "uri-reference", "iri-reference":
		return fmt.Sprintf("/items/%08x", uint32(h)), true
	case "uri-template":
		return "https://example.com/items/{id}", true
	case "uuid":
		h2 := mix64(h)
		return fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", uint32(h), uint16(h>>32), uint16(h>>48)&0xfff, uint16(h2)&0xfff, h2>>16&0xffffffffffff), true
	case "byte":
		return base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("synthesized %d", h%100000))), true
	case "ipv4":
		return fmt.Sprintf("192.0.2.%d", h%254+1), true
	case "ipv6":
		return fmt.Sprintf("2001:db8::%x", h%0xffff+1), true
	case "json-pointer":
		return fmt.Sprintf("/items/%d", h%100), true
	case "relative-json-pointer":
		return fmt.Sprintf("%d/items", h%5), true
	case "regex":
		return "^[a-z]+$", true
	case "semver":
		return fmt.Sprintf("%d.%d.%d", h%5, h%20, h%50), true
	}
	return "", false
}

// fitsShallow reports whether v may stand for the node: its type, enum,
// const, bounds, length, patterns and format (the members of an object
// or the elements of a list are not looked into: they are made, and
// checked, each in turn).
func (sg *schemaGen) fitsShallow(n *node, v any) bool {
	k := kindOfValue(v)
	if n.types != nil {
		t := map[kind]string{kindObject: "object", kindArray: "array", kindString: "string", kindInt: "integer", kindFloat: "number", kindBool: "boolean", kindNull: "null"}[k]
		if !n.types[t] && !(t == "integer" && n.types["number"]) && !(t == "number" && n.types["integer"] && isIntegral(v)) {
			return false
		}
	}
	if n.hasEnum {
		found := false
		for _, e := range n.enum {
			if sameJSON(e, v) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	for _, c := range n.consts {
		if !sameJSON(c, v) {
			return false
		}
	}
	switch k {
	case kindString:
		s := v.(string)
		rc := utf8.RuneCountInString(s)
		if n.s.MinLength != nil && rc < *n.s.MinLength || n.s.MaxLength != nil && rc > *n.s.MaxLength {
			return false
		}
		for _, p := range n.patterns {
			if !sg.doc.pattern(p).matches(s) {
				return false
			}
		}
		if n.s.Format != "" && !ajvcompat.Check(n.s.Format, s) {
			return false
		}
	case kindInt, kindFloat:
		f, ok := numberOf(v)
		if !ok {
			return false
		}
		if n.s.Minimum != nil && f < *n.s.Minimum || n.s.Maximum != nil && f > *n.s.Maximum ||
			n.exMin != nil && f <= *n.exMin || n.exMax != nil && f >= *n.exMax {
			return false
		}
		if n.multipleOf > 0 && !isMultiple(f, n.multipleOf) {
			return false
		}
		if n.s.Format != "" && !ajvcompat.Check(n.s.Format, f) {
			return false
		}
	case kindArray:
		a := v.([]any)
		if n.s.MinItems != nil && len(a) < *n.s.MinItems || n.s.MaxItems != nil && len(a) > *n.s.MaxItems {
			return false
		}
	}
	return true
}

func isIntegral(v any) bool {
	f, ok := numberOf(v)
	return ok && f == math.Trunc(f)
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
