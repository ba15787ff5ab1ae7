package toolbench

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net/url"
	"strings"
	"unicode/utf8"

	sjson "github.com/segmentio/encoding/json"

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
	params map[paramKey]paramRef
	inputs map[string]*toolenv.Schema
	key    []byte // extra's key, reused
	ikey   []byte // input's key, reused
	props  []prop // input's parameters, reused

	typeText map[string]string // ToolBench type → its JSON text
	last     lastTool          // the tool of the previous doc
	fdesc    []byte            // function description, reused
	cbuf     []byte            // compacted template, reused
	buf      bytes.Buffer
	mem      arena
}

// prop is one parameter of an input being built.
type prop struct {
	name     string
	schema   *toolenv.Schema
	required bool
}

// paramRef is a parameter schema the builder made and its number, by
// which input keys name it (shorter to hash than its text).
type paramRef struct {
	s  *toolenv.Schema
	id uint32
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
		params: make(map[paramKey]paramRef, n),
		inputs: make(map[string]*toolenv.Schema, n/2),

		typeText: map[string]string{},
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
func (b *builder) param(pn string, p *ParamDoc) paramRef {
	typ, ok := typeMap[p.Type]
	if !ok {
		typ = "string"
	}
	tb, ok := b.typeText[p.Type]
	if !ok {
		tb = jsonText(p.Type)
		b.typeText[b.str(p.Type)] = tb
	}
	k := paramKey{typ: typ, desc: p.Description, tbType: tb}
	if pyStr(p.Default) != "" {
		k.example = jsonText(p.Default)
	}
	if pn != p.Name {
		k.xname = jsonText(p.Name)
	}
	if r, ok := b.params[k]; ok {
		return r
	}
	s := b.mem.schema()
	s.Type, s.Description = b.str(typ), b.mem.str(p.Description)
	s.Extra = b.extra("example_value", k.example, "x-name", k.xname, "x-toolbench-type", k.tbType)
	r := paramRef{s, uint32(len(b.params))}
	b.params[k] = r
	return r
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
			r := b.param(pn, &params[i])
			props = append(props, prop{pn, r.s, required})
			// The name, the schema's number, required: an input's
			// identity, without its texts.
			key = append(append(key, pn...), 0)
			key = binary.LittleEndian.AppendUint32(key, r.id)
			if required {
				key = append(key, 1)
			} else {
				key = append(key, 0)
			}
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

// lastTool is what the builder made of the tool-level fields of the
// previous doc: a tool's APIs are neighbours, and their docs share these
// strings (one decoded copy per file), so most docs compare equal at
// once (same pointer) and nothing is hashed or standardized again.
type lastTool struct {
	category, tool, toolDesc, host string // as in the doc
	cat, stdCat, group, stdTool    string // kept
	desc, hostKept                 string
	set                            bool // the fields above were set once
}

// tool converts one doc (see APIDoc.Tool).
func (b *builder) tool(d *APIDoc) *toolenv.Tool {
	l := &b.last
	if !l.set || d.CategoryName != l.category {
		l.category = d.CategoryName
		l.cat, l.stdCat = b.str(d.CategoryName), b.str(StandardizeCategory(d.CategoryName))
	}
	if !l.set || d.ToolName != l.tool {
		l.tool = d.ToolName
		l.group, l.stdTool = b.str(d.ToolName), b.str(Standardize(d.ToolName))
	}
	if !l.set || d.ToolDescription != l.toolDesc {
		l.toolDesc, l.desc = d.ToolDescription, b.str(d.ToolDescription)
	}
	if !l.set || d.Host != l.host {
		l.host, l.hostKept = d.Host, b.str(d.Host)
	}
	l.set = true
	stdTool := l.stdTool
	apiName := APIName(d.APIName)
	name := lastChars(apiName+"_for_"+stdTool, 64) // FunctionName(d.APIName, d.ToolName)
	fdesc := append(b.fdesc[:0], `This is the subfunction for tool "`...)
	fdesc = append(append(fdesc, stdTool...), `", you can use this tool.`...)
	if desc := strings.TrimSpace(d.APIDescription); desc != "" {
		desc = strings.ReplaceAll(desc, d.APIName, name)
		if len(desc) > descriptionMax && utf8.RuneCountInString(desc) > descriptionMax {
			desc = string([]rune(desc)[:descriptionMax])
		}
		fdesc = append(append(append(fdesc, `The description of this function is: "`...), desc...), '"')
	}
	b.fdesc = fdesc
	name = b.mem.str(name)
	t := b.mem.tool()
	*t = toolenv.Tool{
		Name:             name,
		Title:            b.mem.str(d.APIName),
		Description:      b.mem.str(d.APIDescription),
		Category:         l.cat,
		Group:            l.group,
		GroupDescription: l.desc,
		Input:            b.input(d),
		Meta: map[string]string{
			"function_description": b.mem.bytes(fdesc),
			"std_category":         l.stdCat,
			"std_tool":             stdTool,
			"api_name":             b.str(apiName),
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
		t.Meta["host"] = l.hostKept
	}
	return t
}

// compactJSON returns a copy of raw without insignificant whitespace
// (tool files indent their templates; JSON output compacts them anyway),
// or a plain copy when raw is not valid JSON.
func (b *builder) compactJSON(raw json.RawMessage) json.RawMessage {
	// The fast way: a text segmentio's validator accepts, without its
	// whitespace outside strings (FuzzCompactJSON holds it to
	// encoding/json.Compact); anything else goes the slow way.
	if nestsAtMost(raw, fastDecodeMaxDepth) && sjson.Valid(raw) {
		if out, ok := stripSpace(b.cbuf[:0], raw); ok {
			b.cbuf = out
			return b.mem.raw(out)
		}
	}
	b.buf.Reset()
	if err := json.Compact(&b.buf, raw); err != nil {
		return b.mem.raw(raw)
	}
	return b.mem.raw(b.buf.Bytes())
}

// stripSpace appends raw to dst without the JSON whitespace outside
// strings; ok is false when a string does not end.
func stripSpace(dst, raw []byte) (out []byte, ok bool) {
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case ' ', '\t', '\n', '\r':
		case '"':
			j := i + 1
			for ; j < len(raw) && raw[j] != '"'; j++ {
				if raw[j] == '\\' {
					j++
				}
			}
			if j >= len(raw) {
				return dst, false
			}
			dst = append(dst, raw[i:j+1]...)
			i = j
		default:
			dst = append(dst, c)
		}
	}
	return dst, true
}
