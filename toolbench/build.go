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
//
// A doc's strings may point into a buffer that is reused once the doc is
// built (LoadCollection decodes without copying): everything the builder
// keeps of a doc, in its tools or in its maps' keys, is a copy it made,
// and lastTool is reset between such buffers.
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
	// validJSON tells that the docs' raw values were decoded from JSON
	// (a decoder validated them), so compactJSON need not check them.
	validJSON bool
	// coll, when set, is the collection the tools will be in: each
	// tool's ID is made with its name, which is the end of it.
	coll string
	// docKey is the Key of the doc tool built last.
	docKey string
	fdesc  []byte // function description, reused
	cbuf   []byte // compacted template, reused
	buf    bytes.Buffer
	mem    arena
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
	v := b.mem.rawString(s)
	b.raws[string(v)] = v
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
		switch {
		case kv[i+1] == "":
		case kv[i] == "example_value":
			m[kv[i]] = b.mem.rawString(kv[i+1]) // most examples differ: not worth a lookup
		default:
			m[kv[i]] = b.raw(kv[i+1])
		}
	}
	b.extras[k] = m
	return m
}

// jsonText is the JSON text of v, "" when it does not marshal.
func jsonText(v any) string {
	switch v := v.(type) {
	case string:
		if isPlainString(v) {
			return `"` + v + `"` // the common case, without an encoder
		}
	case []string:
		if text, ok := plainStrings(v); ok {
			return text
		}
	}
	raw, err := toolenv.MarshalJSONNoHTML(v)
	if err != nil {
		return ""
	}
	return string(raw)
}

// plainStrings is the JSON text of list when each string in it is plain
// (isPlainString); ok is false otherwise.
func plainStrings(list []string) (text string, ok bool) {
	n := 2
	for _, s := range list {
		if !isPlainString(s) {
			return "", false
		}
		n += len(s) + 3
	}
	var sb strings.Builder
	sb.Grow(n)
	sb.WriteByte('[')
	for i, s := range list {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte('"')
		sb.WriteString(s)
		sb.WriteByte('"')
	}
	sb.WriteByte(']')
	return sb.String(), true
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
	s.Type, s.Description = typ, b.mem.str(p.Description) // typ is one of typeMap's constants
	s.Extra = b.extra("example_value", k.example, "x-name", k.xname, "x-toolbench-type", k.tbType)
	r := paramRef{s, uint32(len(b.params))}
	k.desc = s.Description // the doc's may point into a read buffer (LoadCollection)
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
	set                            bool   // the fields above were set once
	base, baseKept                 string // the last URL's scheme://host, as in the doc and kept
}

// tool converts one doc (see APIDoc.Tool).
func (b *builder) tool(d *APIDoc) *toolenv.Tool {
	l := &b.last
	if !l.set || d.CategoryName != l.category {
		l.category = d.CategoryName
		l.cat, l.stdCat = b.str(d.CategoryName), b.str(StandardizeCategory(d.CategoryName))
	}
	// A tool's name, description and host are its own: copied, not
	// looked up among the others (the tool's APIs share the copy).
	if !l.set || d.ToolName != l.tool {
		l.tool = d.ToolName
		l.stdTool = b.str(Standardize(d.ToolName))
		l.group = l.stdTool
		if d.ToolName != l.stdTool {
			l.group = b.mem.str(d.ToolName)
		}
	}
	if !l.set || d.ToolDescription != l.toolDesc {
		l.toolDesc, l.desc = d.ToolDescription, b.mem.str(d.ToolDescription)
	}
	if !l.set || d.Host != l.host {
		l.host, l.hostKept = d.Host, b.mem.str(d.Host)
	}
	l.set = true
	stdTool := l.stdTool
	apiName := APIName(d.APIName)
	b.docKey = key(l.stdCat, stdTool, apiName)     // d.Key(), from the parts at hand
	name := lastChars(apiName+"_for_"+stdTool, 64) // FunctionName(d.APIName, d.ToolName)
	fdesc := append(b.fdesc[:0], `This is the subfunction for tool "`...)
	fdesc = append(append(fdesc, stdTool...), `", you can use this tool.`...)
	if desc := strings.TrimSpace(d.APIDescription); desc != "" {
		desc = strings.ReplaceAll(desc, d.APIName, name)
		if len(desc) > descriptionMax && utf8.RuneCountInString(desc) > descriptionMax {
			desc = firstRunes(desc, descriptionMax)
		}
		fdesc = append(append(append(fdesc, `The description of this function is: "`...), desc...), '"')
	}
	b.fdesc = fdesc
	var id string
	if b.coll != "" {
		id = b.mem.concat(b.coll, "/", name)
		name = id[len(b.coll)+1:]
	} else {
		name = b.mem.str(name)
	}
	// The API name is the start of the function name unless that was
	// cut; the title is most often the API name itself.
	apiKept := name[:min(len(apiName), len(name))]
	if len(name) != len(apiName)+len("_for_")+len(stdTool) {
		apiKept = b.str(apiName)
	}
	title := apiKept
	if d.APIName != apiName {
		title = b.mem.str(d.APIName)
	}
	t := b.mem.tool()
	*t = toolenv.Tool{
		ID:               id,
		Collection:       b.coll,
		Name:             name,
		Title:            title,
		Description:      b.mem.str(d.APIDescription),
		Category:         l.cat,
		Group:            l.group,
		GroupDescription: l.desc,
		Input:            b.input(d),
		Meta: map[string]string{
			"function_description": b.mem.bytes(fdesc),
			"std_category":         l.stdCat,
			"std_tool":             stdTool,
			"api_name":             apiKept,
			"toolbench_name":       name,
		},
	}
	if len(d.TemplateResponse) > 0 && string(d.TemplateResponse) != "null" {
		t.OutputExample = b.compactJSON(d.TemplateResponse)
	}
	t.Binding = b.mem.binding()
	t.Binding.Method = b.method(d.Method)
	if d.URL != "" {
		t.Binding.BaseURL, t.Binding.Path = b.url(d.URL)
	}
	if d.Host != "" {
		t.Meta["host"] = l.hostKept
	}
	return t
}

// method is the binding's method for a documented one: upper case, GET
// when none is given.
func (b *builder) method(m string) string {
	switch m {
	case "GET", "get", "":
		return "GET"
	case "POST", "post":
		return "POST"
	case "PUT", "put":
		return "PUT"
	case "DELETE", "delete":
		return "DELETE"
	case "PATCH", "patch":
		return "PATCH"
	}
	return b.str(strings.ToUpper(m))
}

// url splits a documented URL into the binding's base (scheme://host)
// and escaped path, both "" when it is not an absolute URL with a host.
// The common URL, plain http(s) with a plain host and path, is split
// without url.Parse, to the same strings (FuzzSplitPlainURL), and a
// tool's APIs share their base.
func (b *builder) url(raw string) (base, path string) {
	baseIn, pathIn, ok := splitPlainURL(raw)
	if !ok {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return "", ""
		}
		return b.str(u.Scheme + "://" + u.Host), b.mem.str(u.EscapedPath())
	}
	l := &b.last
	if baseIn != l.base || l.baseKept == "" {
		l.base, l.baseKept = baseIn, b.mem.str(baseIn)
	}
	return l.baseKept, b.mem.str(pathIn)
}

// splitPlainURL splits an http or https URL whose host is letters,
// digits, dots and dashes (and maybe a port) and whose path is letters,
// digits and "-._~/" only, with no query or fragment: for such a URL,
// url.Parse gives Scheme+"://"+Host = base and EscapedPath() = path.
// ok is false for any other text.
func splitPlainURL(raw string) (base, path string, ok bool) {
	var rest string
	switch {
	case strings.HasPrefix(raw, "https://"):
		rest = raw[len("https://"):]
	case strings.HasPrefix(raw, "http://"):
		rest = raw[len("http://"):]
	default:
		return "", "", false
	}
	host := rest
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		host = rest[:i]
	}
	if host == "" {
		return "", "", false
	}
	port := false
	for i := 0; i < len(host); i++ {
		c := host[i]
		switch {
		case c >= '0' && c <= '9':
		case !port && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '-'):
		case !port && c == ':' && i > 0 && i < len(host)-1:
			port = true
		default:
			return "", "", false
		}
	}
	path = rest[len(host):]
	for i := 0; i < len(path); i++ {
		c := path[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
			return "", "", false
		}
	}
	return raw[:len(raw)-len(path)], path, true
}

// firstRunes is string([]rune(s)[:n]) without converting all of s: s cut
// after its first n characters (an invalid byte counts as one, and
// becomes U+FFFD as the conversion makes it).
func firstRunes(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if utf8.ValidString(s[:i]) {
		return s[:i]
	}
	return string([]rune(s[:i]))
}

// compactJSON returns a copy of raw without insignificant whitespace
// (tool files indent their templates; JSON output compacts them anyway),
// or a plain copy when raw is not valid JSON.
func (b *builder) compactJSON(raw json.RawMessage) json.RawMessage {
	// The fast way: a text segmentio's validator accepts, without its
	// whitespace outside strings (FuzzCompactJSON holds it to
	// encoding/json.Compact); anything else goes the slow way.
	if b.validJSON || nestsAtMost(raw, fastDecodeMaxDepth) && sjson.Valid(raw) {
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
