package openapi

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	toolenv "github.com/toolenv/toolenv"
)

// op is one operation of a document with its surroundings.
type op struct {
	path   string
	method string // upper case
	item   *openapi3.PathItem
	op     *openapi3.Operation
	at     place // the operation in the source
}

func (o op) String() string { return o.method + " " + o.path }

// methodOrder is the order of operations within a path item when the
// source order is not known.
var methodOrder = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace", "query", "connect"}

// operations lists the document's operations in source order and checks
// that operationIds are unique.
func operations(doc *openapi3.T, order *sourceOrder) ([]op, error) {
	if doc.Paths == nil {
		return nil, nil
	}
	items := doc.Paths.Map()
	names := make(map[string]bool, len(items))
	for p := range items {
		names[p] = true
	}
	var ops []op
	for _, p := range ordered(names, order.keys(place{ptr: []string{"paths"}})) {
		item := items[p]
		if item == nil {
			continue
		}
		at := place{ptr: []string{"paths", p}}
		if item.Ref != "" {
			at = order.resolve(at, item.Ref)
		}
		byMethod := map[string]*openapi3.Operation{}
		methods := map[string]bool{}
		for m, o := range item.Operations() {
			if o != nil {
				byMethod[strings.ToLower(m)] = o
				methods[strings.ToLower(m)] = true
			}
		}
		keys := append(order.keys(at), methodOrder...)
		for _, m := range ordered(methods, keys) {
			ops = append(ops, op{path: p, method: strings.ToUpper(m), item: item, op: byMethod[m], at: at.child(m)})
		}
	}
	seen := map[string]op{}
	for _, o := range ops {
		id := o.op.OperationID
		if id == "" {
			continue
		}
		if prev, dup := seen[id]; dup {
			return nil, toolenv.Errorw(toolenv.StatusBadRequest, "operationIds must be unique within a document: rename one",
				"duplicate operationId %q: %s and %s", id, prev, o)
		}
		seen[id] = o
	}
	return ops, nil
}

// builder turns operations into tools.
type builder struct {
	doc     *openapi3.T
	order   *sourceOrder
	schemas *schemaConverter
	names   map[string]string // tool name → operation, for uniqueness
}

// param is one input parameter of an operation.
type param struct {
	p  *openapi3.Parameter
	at place
}

// tool converts one operation. why, when not empty, says why its
// schemas are not exact (a parameter or body without a typed schema).
func (b *builder) tool(o op) (t *toolenv.Tool, why string) {
	summary := o.op.Summary
	if summary == o.op.OperationID {
		// A summary that repeats the operationId says nothing more
		// (Document writes one so that every operation has a summary).
		summary = ""
	}
	t = &toolenv.Tool{
		Name:        b.toolName(o),
		Title:       summary,
		Description: o.op.Description,
		Input:       toolenv.ObjectSchema(),
		Binding:     &toolenv.Binding{Method: o.method, Path: o.path, BaseURL: baseURL(o, b.doc), In: map[string]string{}},
		Meta:        map[string]string{},
	}
	if t.Description == "" {
		t.Description = summary
	}
	if o.op.OperationID != "" && o.op.OperationID != t.Name {
		t.Meta["operation_id"] = o.op.OperationID
	}
	if len(o.op.Tags) > 0 {
		t.Group = o.op.Tags[0]
		if tag := b.doc.Tags.Get(t.Group); tag != nil {
			t.GroupDescription = tag.Description
		}
	}
	if o.op.Deprecated {
		t.Deprecated = &toolenv.Deprecation{Message: "this operation is deprecated in the OpenAPI document"}
		if s, ok := o.op.Extensions["x-successor"].(string); ok {
			t.Deprecated.Successor = s
		}
	}
	exs := newExamples()
	for _, pr := range b.params(o) {
		w := b.addParam(t, pr, exs)
		if why == "" && w != "" {
			why = fmt.Sprintf("%s: %s", o, w)
		}
	}
	if w := b.addBody(t, o, exs); why == "" && w != "" {
		why = fmt.Sprintf("%s: %s", o, w)
	}
	b.addOutput(t, o, exs)
	t.Examples = exs.build(t.Input)
	if len(t.Meta) == 0 {
		t.Meta = nil
	}
	return t, why
}

// toolName is the operationId made safe and unique, else method and
// path.
func (b *builder) toolName(o op) string {
	name := o.op.OperationID
	if name == "" {
		name = strings.ToLower(o.method) + "_" + strings.NewReplacer("{", "", "}", "").Replace(o.path)
	}
	name = toolName(name)
	if _, taken := b.names[name]; taken {
		base := name
		for i := 2; ; i++ {
			suffix := "_" + strconv.Itoa(i)
			name = base[:min(len(base), 64-len(suffix))] + suffix
			if _, taken := b.names[name]; !taken {
				break
			}
		}
	}
	b.names[name] = o.String()
	return name
}

// toolName makes s a function name: [A-Za-z0-9_-], runs of other
// characters become one '_', at most 64 bytes (a longer name keeps a
// hash of itself).
func toolName(s string) string {
	var sb strings.Builder
	under := false
	for _, r := range s {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			sb.WriteRune(r)
			under = r == '_'
		} else if !under {
			sb.WriteByte('_')
			under = true
		}
	}
	out := strings.Trim(sb.String(), "_")
	if out == "" {
		out = "operation"
	}
	if len(out) > 64 {
		h := fnv.New32a()
		h.Write([]byte(out))
		suffix := fmt.Sprintf("_%08x", h.Sum32())
		out = out[:64-len(suffix)] + suffix
	}
	return out
}

// params returns the operation's parameters: the path item's, overridden
// by the operation's of the same name and location, in that order.
// Header parameters named Accept, Content-Type or Authorization are
// ignored, as the specification says.
func (b *builder) params(o op) []param {
	var out []param
	index := map[string]int{}
	add := func(list openapi3.Parameters, at place) {
		for i, pr := range list {
			if pr == nil || pr.Value == nil {
				continue
			}
			p := pr.Value
			if p.In == openapi3.ParameterInHeader {
				switch strings.ToLower(p.Name) {
				case "accept", "content-type", "authorization":
					continue
				}
			}
			pat := at.index("parameters", i)
			if pr.Ref != "" {
				pat = b.order.resolve(pat, pr.Ref)
			}
			k := p.In + " " + p.Name
			if j, ok := index[k]; ok {
				out[j] = param{p: p, at: pat}
				continue
			}
			index[k] = len(out)
			out = append(out, param{p: p, at: pat})
		}
	}
	itemAt := place{ptr: o.at.ptr[:len(o.at.ptr)-1], file: o.at.file}
	add(o.item.Parameters, itemAt)
	add(o.op.Parameters, o.at)
	return out
}

// addParam adds one parameter to the input; it returns why its schema is
// not exact, if it is not.
func (b *builder) addParam(t *toolenv.Tool, pr param, exs *examples) (why string) {
	p := pr.p
	sr, sat := p.Schema, pr.at.child("schema")
	if sr == nil { // the content form: one media type with a schema
		for _, mt := range slices.Sorted(maps.Keys(p.Content)) {
			if m := p.Content[mt]; m != nil && m.Schema != nil {
				sr, sat = m.Schema, pr.at.child("content", mt, "schema")
				break
			}
		}
	}
	s := b.schemas.top(sr, sat, request)
	if s == nil {
		s = &toolenv.Schema{}
	}
	if !typed(s) {
		why = fmt.Sprintf("parameter %q has no typed schema", p.Name)
	}
	if p.Description != "" {
		s.Description = p.Description
	}
	if p.Deprecated {
		s.Deprecated = true
	}
	name := p.Name
	if t.Input.Prop(name) != nil { // the same name in two places
		name = p.In + "_" + p.Name
		t.Meta["wire_name."+name] = p.Name
	}
	var ex any
	switch {
	case p.Example != nil:
		ex = jsonValue(p.Example)
	case len(p.Examples) > 0:
		for _, k := range orderedKeys(p.Examples, b.order.keys(pr.at.child("examples"))) {
			if e := p.Examples[k]; e != nil && e.Value != nil && e.Value.Value != nil {
				ex = jsonValue(e.Value.Value)
				break
			}
		}
	}
	if ex != nil && !containsValue(s.Examples, ex) {
		s.Examples = append(s.Examples, ex)
	}
	if ex == nil && len(s.Examples) > 0 {
		ex = s.Examples[0]
	}
	if ex != nil {
		exs.param(name, ex)
	}
	t.Input.SetProp(name, s)
	if p.Required || p.In == openapi3.ParameterInPath {
		t.Input.Required = append(t.Input.Required, name)
	}
	t.Binding.In[name] = p.In
	if f := arrayFormat(p, s); f != "" {
		t.Meta[MetaArrayFormat+name] = f
	}
	return why
}

// MetaArrayFormat, followed by a parameter's name, is the Tool.Meta key
// saying how an array parameter's items are written in one value of the
// query string, a path segment or a header: "csv" (a,b), "ssv" (a b) or
// "pipes" (a|b), from the parameter's style (a Swagger 2.0 document's
// collectionFormat). Without it a query array is one value per
// repetition (?id=1&id=2), or a JSON array.
const MetaArrayFormat = "array_format."

// arrayFormat is the MetaArrayFormat value of parameter p with schema s.
func arrayFormat(p *openapi3.Parameter, s *toolenv.Schema) string {
	if s.Type != "array" {
		return ""
	}
	switch p.In {
	case openapi3.ParameterInPath, openapi3.ParameterInHeader:
		if p.Style == "" || p.Style == openapi3.SerializationSimple {
			return "csv"
		}
	case openapi3.ParameterInQuery:
		switch p.Style {
		case openapi3.SerializationSpaceDelimited:
			return "ssv"
		case openapi3.SerializationPipeDelimited:
			return "pipes"
		case "", openapi3.SerializationForm:
			if p.Explode != nil && !*p.Explode {
				return "csv"
			}
		}
	}
	return ""
}

// typed reports whether a schema says what values it takes.
func typed(s *toolenv.Schema) bool {
	return s.Type != "" || len(s.Enum) > 0 || s.Const != nil || len(s.AnyOf) > 0 || len(s.OneOf) > 0 || len(s.AllOf) > 0
}

// jsonMediaType picks the media type whose schema becomes the body or
// the output: application/json, else any JSON (+json, json;charset=),
// else form encodings (whose fields are properties too); "" when there
// is no schema-bearing one.
func jsonMediaType(content openapi3.Content) string {
	keys := slices.Sorted(maps.Keys(content))
	for _, pass := range []func(string) bool{
		func(k string) bool { return k == "application/json" },
		func(k string) bool { return strings.Contains(strings.SplitN(k, ";", 2)[0], "json") },
		func(k string) bool {
			return strings.HasPrefix(k, "application/x-www-form-urlencoded") || strings.HasPrefix(k, "multipart/form-data")
		},
		func(k string) bool { return true },
	} {
		for _, k := range keys {
			if pass(k) && content[k] != nil {
				return k
			}
		}
	}
	return ""
}

// addBody adds the request body: its properties when it is an object
// whose names clash with no parameter, else one "body" argument.
func (b *builder) addBody(t *toolenv.Tool, o op, exs *examples) (why string) {
	rbr := o.op.RequestBody
	if rbr == nil || rbr.Value == nil {
		return ""
	}
	rb := rbr.Value
	at := o.at.child("requestBody")
	if rbr.Ref != "" {
		at = b.order.resolve(at, rbr.Ref)
	}
	mt := jsonMediaType(rb.Content)
	if mt == "" {
		return ""
	}
	media := rb.Content[mt]
	mat := at.child("content", mt)
	if mt != "application/json" {
		t.Meta["content_type"] = mt
	}
	s := b.schemas.top(media.Schema, mat.child("schema"), request)
	if s == nil {
		s = &toolenv.Schema{}
		if strings.Contains(mt, "json") {
			why = "request body has no schema"
		} else {
			s.Type = "string"
		}
	} else if !typed(s) {
		why = "request body has no typed schema"
	}
	if rb.Description != "" && s.Description == "" {
		s.Description = rb.Description
	}
	obj := flattenObject(s)
	if obj != nil {
		for _, n := range obj.Names() {
			if t.Input.Prop(n) != nil {
				obj = nil // a body property clashes with a parameter
				break
			}
		}
	}
	for _, ex := range mediaExamples(media, b.order.keys(mat.child("examples"))) {
		exs.body(ex.name, ex.value, obj != nil)
	}
	if obj == nil {
		name := "body"
		for i := 2; t.Input.Prop(name) != nil; i++ {
			name = "body" + strconv.Itoa(i)
		}
		t.Input.SetProp(name, s)
		if rb.Required {
			t.Input.Required = append(t.Input.Required, name)
		}
		t.Binding.In[name] = "body"
		t.Meta["body_param"] = name
		exs.bodyParam = name
		return why
	}
	for _, n := range obj.Names() {
		t.Input.SetProp(n, obj.Properties[n])
		t.Binding.In[n] = "body"
	}
	if rb.Required {
		t.Input.Required = append(t.Input.Required, obj.Required...)
	}
	if ap := strings.TrimSpace(string(obj.AdditionalProperties)); ap != "" && ap != "false" {
		// A body that takes more fields than it lists lets extra
		// arguments through (closed is what strict validation assumes
		// anyway, so "false" need not be said).
		t.Input.AdditionalProperties = obj.AdditionalProperties
	}
	return why
}

// flattenObject returns s as one object schema, merging an allOf of
// object schemas into it; nil when s is not a plain object (an array, a
// scalar, a oneOf/anyOf of alternatives, or untyped).
func flattenObject(s *toolenv.Schema) *toolenv.Schema {
	if len(s.AnyOf) > 0 || len(s.OneOf) > 0 || s.Nullable {
		return nil
	}
	if len(s.AllOf) == 0 {
		if s.Type != "object" && !(s.Type == "" && len(s.Properties) > 0) {
			return nil
		}
		return s
	}
	out := &toolenv.Schema{Type: "object", Description: s.Description, Properties: map[string]*toolenv.Schema{}, AdditionalProperties: s.AdditionalProperties}
	parts := append([]*toolenv.Schema{{Type: "object", Properties: s.Properties, Order: s.Order, Required: s.Required}}, s.AllOf...)
	for _, p := range parts {
		if p.Type != "" && p.Type != "object" {
			return nil
		}
		if p != parts[0] {
			if p = flattenObject(p); p == nil {
				return nil
			}
		}
		for _, n := range p.Names() {
			out.SetProp(n, p.Properties[n])
		}
		for _, r := range p.Required {
			if !out.IsRequired(r) {
				out.Required = append(out.Required, r)
			}
		}
	}
	return out
}

// addOutput sets the output schema and example from the 200 response,
// else the first 2XX one with content.
func (b *builder) addOutput(t *toolenv.Tool, o op, exs *examples) {
	if o.op.Responses == nil {
		return
	}
	m := o.op.Responses.Map()
	var codes []string
	for code := range m {
		if len(code) == 3 && code[0] == '2' {
			codes = append(codes, code)
		}
	}
	rank := func(code string) int { // 200 first, then 201…299, then 2XX
		if n, err := strconv.Atoi(code); err == nil {
			return n
		}
		return 1000
	}
	sort.Slice(codes, func(i, j int) bool { return rank(codes[i]) < rank(codes[j]) })
	for _, code := range codes {
		rr := m[code]
		if rr == nil || rr.Value == nil {
			continue
		}
		at := o.at.child("responses", code)
		if rr.Ref != "" {
			at = b.order.resolve(at, rr.Ref)
		}
		mt := jsonMediaType(rr.Value.Content)
		if mt == "" {
			continue
		}
		media := rr.Value.Content[mt]
		mat := at.child("content", mt)
		t.Output = b.schemas.top(media.Schema, mat.child("schema"), response)
		list := mediaExamples(media, b.order.keys(mat.child("examples")))
		for _, ex := range list {
			exs.response(ex.name, ex.value)
		}
		switch {
		case len(list) > 0:
			t.OutputExample = marshalValue(list[0].value)
		case t.Output != nil && len(t.Output.Examples) > 0:
			t.OutputExample = marshalValue(t.Output.Examples[0])
		}
		return
	}
}

type namedValue struct {
	name  string
	value any
}

// mediaExamples returns a media type's example, or its named examples in
// source order.
func mediaExamples(m *openapi3.MediaType, keys []string) []namedValue {
	if m == nil {
		return nil
	}
	if m.Example != nil {
		return []namedValue{{"", jsonValue(m.Example)}}
	}
	var out []namedValue
	for _, k := range orderedKeys(m.Examples, keys) {
		if e := m.Examples[k]; e != nil && e.Value != nil && e.Value.Value != nil {
			out = append(out, namedValue{k, jsonValue(e.Value.Value)})
		}
	}
	return out
}

// baseURL is the first server of the operation, else its path, else the
// document, with variables replaced by their defaults.
func baseURL(o op, doc *openapi3.T) string {
	for _, servers := range []openapi3.Servers{ptrServers(o.op.Servers), o.item.Servers, doc.Servers} {
		if len(servers) == 0 || servers[0] == nil {
			continue
		}
		s := servers[0]
		u := s.URL
		for name, v := range s.Variables {
			if v != nil && v.Default != "" {
				u = strings.ReplaceAll(u, "{"+name+"}", v.Default)
			}
		}
		if u == "/" {
			return ""
		}
		return strings.TrimRight(u, "/")
	}
	return ""
}

func ptrServers(s *openapi3.Servers) openapi3.Servers {
	if s == nil {
		return nil
	}
	return *s
}

// examples gathers an operation's documented calls.
type examples struct {
	params    map[string]any
	order     []string
	bodies    []namedValue
	bodyProps bool   // the body's properties are arguments (else one argument)
	bodyParam string // the argument holding a whole body
	responses []namedValue
}

func newExamples() *examples { return &examples{params: map[string]any{}} }

func (e *examples) param(name string, v any) {
	if _, ok := e.params[name]; !ok {
		e.order = append(e.order, name)
	}
	e.params[name] = v
}

func (e *examples) body(name string, v any, props bool) {
	e.bodies = append(e.bodies, namedValue{name, v})
	e.bodyProps = props
}

func (e *examples) response(name string, v any) {
	e.responses = append(e.responses, namedValue{name, v})
}

// build returns the examples whose arguments give every required input:
// one per body example (with the parameters' examples), else one of the
// parameters' examples alone. A response example of the same name (or
// the only one) is paired with each.
func (e *examples) build(in *toolenv.Schema) []toolenv.Example {
	var calls []namedValue
	base := func() map[string]any {
		args := make(map[string]any, len(e.params))
		for k, v := range e.params {
			args[k] = v
		}
		return args
	}
	for _, b := range e.bodies {
		args := base()
		if m, ok := b.value.(map[string]any); ok && e.bodyProps {
			for k, v := range m {
				if in.Prop(k) != nil {
					args[k] = v
				}
			}
		} else if e.bodyParam != "" {
			args[e.bodyParam] = b.value
		} else {
			continue
		}
		calls = append(calls, namedValue{b.name, args})
	}
	if len(calls) == 0 && len(e.params) > 0 {
		calls = append(calls, namedValue{"", base()})
	}
	var out []toolenv.Example
	for _, c := range calls {
		args := c.value.(map[string]any)
		complete := true
		for _, r := range in.Required {
			if _, ok := args[r]; !ok {
				complete = false
			}
		}
		if !complete {
			continue
		}
		ex := toolenv.Example{Args: args}
		for _, r := range e.responses {
			if r.name == c.name || len(e.responses) == 1 {
				ex.Response = marshalValue(r.value)
				break
			}
		}
		out = append(out, ex)
	}
	return out
}

func marshalValue(v any) json.RawMessage {
	raw, err := toolenv.MarshalJSONNoHTML(v)
	if err != nil {
		return nil
	}
	return raw
}

func containsValue(list []any, v any) bool {
	want := marshalValue(v)
	for _, x := range list {
		if string(marshalValue(x)) == string(want) {
			return true
		}
	}
	return false
}

// orderedKeys returns m's keys in source order.
func orderedKeys[V any](m map[string]V, keys []string) []string {
	names := make(map[string]bool, len(m))
	for k := range m {
		names[k] = true
	}
	return ordered(names, keys)
}
