package toolbench

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"unicode/utf8"

	toolenv "github.com/toolenv/toolenv"
)

// builder turns API docs into tools. One builder serves a whole
// collection and shares what the tools have in common instead of
// allocating it per tool: equal strings (categories, tool names, hosts),
// equal parameter schemas, equal input schemas (every API without
// parameters has the same one) and equal keyword maps. At ToolBench's
// scale (50,000 APIs) this is most of what the tools weigh; see
// BenchmarkLoadToolBenchScale.
//
// Shared schemas are never changed after the build: code that edits a
// tool's schema (drift) works on Tool.Clone, which copies deeply.
type builder struct {
	strs   map[string]string
	raws   map[string]json.RawMessage
	extras map[string]map[string]json.RawMessage
	params map[paramKey]*toolenv.Schema
	inputs map[string]*toolenv.Schema
	key    []byte // extra's key, reused
	ikey   []byte // input's key, reused
	props  []prop // input's parameters, reused
	buf    bytes.Buffer
	mem    arena
}

// prop is one parameter of an input being built.
type prop struct {
	name     string
	schema   *toolenv.Schema
	required bool
}

// paramKey is everything a parameter's schema is made of (its name is
// not: that is the key it has in the input's properties, so "page" and
// "offset" documented alike share one schema).
type paramKey struct {
	typ, desc, example, xname, tbType string
}

// newBuilder returns a builder sized for about n docs.
func newBuilder(n int) *builder {
	return &builder{
		strs:   make(map[string]string, n/2),
		raws:   make(map[string]json.RawMessage, n/4),
		extras: make(map[string]map[string]json.RawMessage, n/4),
		params: make(map[paramKey]*toolenv.Schema, n),
		inputs: make(map[string]*toolenv.Schema, n/2),
	}
}

// str returns the one copy of s the builder keeps.
func (b *builder) str(s string) string {
	if v, ok := b.strs[s]; ok {
		return v
	}
	v := b.mem.str(s)
	b.strs[v] = v
	return v
}

// raw returns the one copy of the JSON text s.
func (b *builder) raw(s string) json.RawMessage {
	if v, ok := b.raws[s]; ok {
		return v
	}
	v := b.mem.raw([]byte(s))
	b.raws[s] = v
	return v
}

// extra returns the one map of the given keywords (pairs of key and JSON
// text), in which an empty text means the keyword is absent.
func (b *builder) extra(kv ...string) map[string]json.RawMessage {
	key := b.key[:0]
	n := 0
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] != "" {
			n++
		}
		key = append(append(key, kv[i]...), 0)
		key = append(append(key, kv[i+1]...), 0)
	}
	b.key = key
	if m, ok := b.extras[string(key)]; ok {
		return m
	}
	k := string(key)
	m := make(map[string]json.RawMessage, n)
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] != "" {
			m[kv[i]] = b.raw(kv[i+1])
		}
	}
	b.extras[k] = m
	return m
}

// jsonText is the JSON text of v, "" when it does not marshal.
func jsonText(v any) string {
	if s, ok := v.(string); ok && isPlainString(s) {
		return `"` + s + `"` // the common case, without an encoder
	}
	raw, err := toolenv.MarshalJSONNoHTML(v)
	if err != nil {
		return ""
	}
	return string(raw)
}

// isPlainString reports whether MarshalJSONNoHTML writes s as itself
// between quotes: printable ASCII without '"' or '\\'.
func isPlainString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// param returns the schema of one documented parameter named pn.
func (b *builder) param(pn string, p *ParamDoc) (*toolenv.Schema, paramKey) {
	typ, ok := typeMap[p.Type]
	if !ok {
		typ = "string"
	}
	k := paramKey{typ: typ, desc: p.Description, tbType: jsonText(p.Type)}
	if pyStr(p.Default) != "" {
		k.example = jsonText(p.Default)
	}
	if pn != p.Name {
		k.xname = jsonText(p.Name)
	}
	if s, ok := b.params[k]; ok {
		return s, k
	}
	s := b.mem.schema()
	s.Type, s.Description = b.str(typ), b.mem.str(p.Description)
	s.Extra = b.extra("example_value", k.example, "x-name", k.xname, "x-toolbench-type", k.tbType)
	b.params[k] = s
	return s, k
}

// input returns the input schema of d's parameters.
func (b *builder) input(d *APIDoc) *toolenv.Schema {
	props := b.props[:0] // reused
	defer func() { b.props = props[:0] }()
	key := b.ikey[:0] // reused: most inputs are met before, and a lookup by string(key) copies nothing
	add := func(params []ParamDoc, required bool) {
		for i := range params {
			pn := ParamName(params[i].Name)
			if pn == "" {
				pn = "is_"
			}
			dup := false
			for _, q := range props {
				dup = dup || q.name == pn
			}
			if dup {
				continue // two documented names standardize alike; ToolBench keeps the last, we keep the first
			}
			s, k := b.param(pn, &params[i])
			props = append(props, prop{pn, s, required})
			for _, f := range []string{pn, k.typ, k.desc, k.example, k.xname, k.tbType} {
				key = append(append(key, f...), 0)
			}
			if required {
				key = append(key, 1)
			}
			key = append(key, 2)
		}
	}
	add(d.RequiredParameters, true)
	add(d.OptionalParameters, false)
	b.ikey = key
	if in, ok := b.inputs[string(key)]; ok {
		return in
	}
	k := string(key)
	nreq := 0
	for _, p := range props {
		if p.required {
			nreq++
		}
	}
	in := b.mem.schema()
	in.Type, in.Properties, in.Order, in.Required = "object", make(map[string]*toolenv.Schema, len(props)), b.mem.list(len(props)), b.mem.list(nreq)
	var optional []string
	for _, p := range props {
		name := b.str(p.name)
		in.Properties[name] = p.schema
		in.Order = append(in.Order, name)
		if p.required {
			in.Required = append(in.Required, name)
		} else {
			optional = append(optional, name)
		}
	}
	if optional == nil {
		optional = []string{}
	}
	in.Extra = b.extra("optional", jsonText(optional))
	b.inputs[k] = in
	return in
}

// tool converts one doc (see APIDoc.Tool).
func (b *builder) tool(d *APIDoc) *toolenv.Tool {
	stdTool := b.str(Standardize(d.ToolName))
	name := FunctionName(d.APIName, d.ToolName)
	fdesc := `This is the subfunction for tool "` + stdTool + `", you can use this tool.`
	if desc := strings.TrimSpace(d.APIDescription); desc != "" {
		desc = strings.ReplaceAll(desc, d.APIName, name)
		if utf8.RuneCountInString(desc) > descriptionMax {
			desc = string([]rune(desc)[:descriptionMax])
		}
		fdesc += `The description of this function is: "` + desc + `"`
	}
	name = b.mem.str(name)
	t := b.mem.tool()
	*t = toolenv.Tool{
		Name:             name,
		Title:            b.mem.str(d.APIName),
		Description:      b.mem.str(d.APIDescription),
		Category:         b.str(d.CategoryName),
		Group:            b.str(d.ToolName),
		GroupDescription: b.str(d.ToolDescription),
		Input:            b.input(d),
		Meta: map[string]string{
			"function_description": b.mem.str(fdesc),
			"std_category":         b.str(StandardizeCategory(d.CategoryName)),
			"std_tool":             stdTool,
			"api_name":             b.str(APIName(d.APIName)),
			"toolbench_name":       name,
		},
	}
	if len(d.TemplateResponse) > 0 && string(d.TemplateResponse) != "null" {
		t.OutputExample = b.compactJSON(d.TemplateResponse)
	}
	method := strings.ToUpper(d.Method)
	if method == "" {
		method = "GET"
	}
	t.Binding = b.mem.binding()
	t.Binding.Method = b.str(method)
	if d.URL != "" {
		if u, err := url.Parse(d.URL); err == nil && u.Host != "" {
			t.Binding.BaseURL = b.str(u.Scheme + "://" + u.Host)
			t.Binding.Path = b.mem.str(u.EscapedPath())
		}
	}
	if d.Host != "" {
		t.Meta["host"] = b.str(d.Host)
	}
	return t
}

// compactJSON returns a copy of raw without insignificant whitespace
// (tool files indent their templates; JSON output compacts them anyway),
// or a plain copy when raw is not valid JSON.
func (b *builder) compactJSON(raw json.RawMessage) json.RawMessage {
	b.buf.Reset()
	if err := json.Compact(&b.buf, raw); err != nil {
		return b.mem.raw(raw)
	}
	return b.mem.raw(b.buf.Bytes())
}
