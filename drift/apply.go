package drift

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/toolbench"
)

// The tool Meta keys drift writes.
const (
	// MetaStub marks a tool left at an old name or endpoint ("true").
	MetaStub = "drift_stub"
	// MetaHidden hides a tool from the tools offered to agents
	// (toolenv.MetaHidden: listings leave it out, calls still reach it).
	MetaHidden = toolenv.MetaHidden
	// MetaErrorStyle holds the tool's error format (JSON ErrorStyle).
	MetaErrorStyle = "error_style"
)

// Patterns a parameter turned into a string gets, so that the value stays
// convertible back without loss.
const (
	integerPattern = `^-?(0|[1-9][0-9]*)$`
	numberPattern  = `^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`
)

// applyEnv is what applying a change needs to know beyond the tool.
type applyEnv struct {
	from, to string // the step's versions
}

// apply makes the change to t's documentation (input schema, binding,
// output schema, examples). It fails when t does not look the way the
// change says it did: the manifest does not match the collection.
func (c *Change) apply(t *toolenv.Tool, env applyEnv) error {
	in := t.Input
	switch c.Op {
	case OpRenameTool:
		if t.Name != c.From {
			return fmt.Errorf("rename_tool: the tool is %q, not %q", t.Name, c.From)
		}
		t.Name = c.To
		if c.ToTitle != "" {
			if c.FromTitle != "" && t.Title != c.FromTitle {
				return fmt.Errorf("rename_tool: the tool's title is %q, not %q", t.Title, c.FromTitle)
			}
			t.Title = c.ToTitle
		}
		if t.Meta["toolbench_name"] != "" {
			t.Meta["toolbench_name"] = c.To
			if c.ToTitle != "" {
				t.Meta["api_name"] = toolbench.APIName(c.ToTitle)
			}
			if fd := t.Meta["function_description"]; fd != "" {
				t.Meta["function_description"] = strings.ReplaceAll(fd, c.From, c.To)
			}
		}
	case OpEndpoint:
		b := t.Binding
		if b == nil || (Endpoint{Method: b.Method, Path: b.Path, BaseURL: b.BaseURL}) != *c.OldEndpoint {
			return fmt.Errorf("endpoint: the tool's binding is not %+v", *c.OldEndpoint)
		}
		b.Method, b.Path, b.BaseURL = c.NewEndpoint.Method, c.NewEndpoint.Path, c.NewEndpoint.BaseURL
	case OpRenameParam:
		if err := renameProp(in, c.Param, c.To); err != nil {
			return err
		}
		p := in.Properties[c.To]
		delete(p.Extra, "x-name")
		if b := t.Binding; b != nil {
			if where, ok := b.In[c.Param]; ok {
				delete(b.In, c.Param)
				b.In[c.To] = where
			}
			b.Path = strings.ReplaceAll(b.Path, "{"+c.Param+"}", "{"+c.To+"}")
		}
	case OpRetype:
		p := in.Prop(c.Param)
		if p == nil || p.Type != c.FromType {
			return fmt.Errorf("retype: %q is not a parameter of type %s", c.Param, c.FromType)
		}
		retypeSchema(p, c.FromType, c.ToType)
	case OpEnumCase:
		p := in.Prop(c.Param)
		if p == nil || len(p.Enum) != len(c.Values) {
			return fmt.Errorf("enum_case: %q is not an enum of %d values", c.Param, len(c.Values))
		}
		mapv := func(v any) any {
			for _, pair := range c.Values {
				if sameValue(v, pair.From) {
					return value(pair.To)
				}
			}
			return v
		}
		for i, v := range p.Enum {
			if !sameValue(v, c.Values[i].From) {
				return fmt.Errorf("enum_case: value %d of %q is not %s", i+1, c.Param, c.Values[i].From)
			}
			p.Enum[i] = value(c.Values[i].To)
		}
		mapSchemaValues(p, mapv)
	case OpMakeOptional:
		p := in.Prop(c.Param)
		if p == nil || !in.IsRequired(c.Param) {
			return fmt.Errorf("make_optional: %q is not a required parameter", c.Param)
		}
		in.Required = removeName(in.Required, c.Param)
		p.Default = value(c.NewValue)
		p.Description = addSentence(p.Description, fmt.Sprintf("Optional since %s; defaults to %s.", env.to, showValue(c.NewValue)))
		syncOptional(in)
	case OpMakeRequired:
		p := in.Prop(c.Param)
		if p == nil || in.IsRequired(c.Param) || p.Default == nil || !sameValue(p.Default, c.OldValue) {
			return fmt.Errorf("make_required: %q is not an optional parameter defaulting to %s", c.Param, showValue(c.OldValue))
		}
		p.Default = nil
		in.Required = append(in.Required, c.Param)
		p.Description = addSentence(p.Description, fmt.Sprintf("Required since %s (it used to default to %s).", env.to, showValue(c.OldValue)))
		syncOptional(in)
	case OpFlipDefault:
		p := in.Prop(c.Param)
		if p == nil || p.Default == nil || !sameValue(p.Default, c.OldValue) {
			return fmt.Errorf("flip_default: %q does not default to %s", c.Param, showValue(c.OldValue))
		}
		p.Default = value(c.NewValue)
		p.Description = replaceDefaultMention(p.Description, value(c.OldValue), value(c.NewValue))
	case OpNest:
		return nestProps(t, c)
	case OpRenameField:
		found := false
		if renameOutputProp(t.Output, c.Path, c.From, c.To) {
			found = true
		}
		if len(t.OutputExample) > 0 {
			if out := renameBodyField(t.OutputExample, c.Path, c.From, c.To); string(out) != string(t.OutputExample) {
				t.OutputExample, found = out, true
			}
		}
		for i := range t.Examples {
			if len(t.Examples[i].Response) > 0 {
				if out := renameBodyField(t.Examples[i].Response, c.Path, c.From, c.To); string(out) != string(t.Examples[i].Response) {
					t.Examples[i].Response, found = out, true
				}
			}
		}
		if !found {
			return fmt.Errorf("rename_field: no documented response field %q at %q", c.From, c.Path)
		}
	case OpErrorFormat:
		raw, _ := json.Marshal(c.Style)
		if t.Meta == nil {
			t.Meta = map[string]string{}
		}
		t.Meta[MetaErrorStyle] = string(raw)
	case OpDeprecate:
		// A marker: the stub (ToolChange.StubListed) carries the
		// deprecation; the successor itself is unchanged.
	}
	// Documented example calls follow the change.
	for i := range t.Examples {
		if t.Examples[i].Args != nil {
			args := copyArgs(t.Examples[i].Args)
			c.forwardArgs(args)
			t.Examples[i].Args = args
		}
	}
	return nil
}

// renameProp renames property old of object schema s to new, keeping its
// place in the declaration order and its requiredness.
func renameProp(s *toolenv.Schema, old, new string) error {
	if s == nil || s.Properties[old] == nil {
		return fmt.Errorf("rename_param: %q is not a parameter", old)
	}
	if _, dup := s.Properties[new]; dup {
		return fmt.Errorf("rename_param: %q is already a parameter", new)
	}
	names := s.Names()
	s.Properties[new] = s.Properties[old]
	delete(s.Properties, old)
	for i, n := range names {
		if n == old {
			names[i] = new
		}
	}
	s.Order = names
	for i, r := range s.Required {
		if r == old {
			s.Required[i] = new
		}
	}
	renameOptional(s, old, new)
	return nil
}

// optionalList reads ToolBench's "optional" extension of an input schema.
func optionalList(s *toolenv.Schema) ([]string, bool) {
	raw, ok := s.Extra["optional"]
	if !ok {
		return nil, false
	}
	var list []string
	if json.Unmarshal(raw, &list) != nil {
		return nil, false
	}
	return list, true
}

func renameOptional(s *toolenv.Schema, old, new string) {
	list, ok := optionalList(s)
	if !ok {
		return
	}
	for i, n := range list {
		if n == old {
			list[i] = new
		}
	}
	s.Extra["optional"], _ = toolenv.MarshalJSONNoHTML(list)
}

// syncOptional rewrites ToolBench's "optional" extension, when the schema
// has one, as the non-required properties in order.
func syncOptional(s *toolenv.Schema) {
	if _, ok := optionalList(s); !ok {
		return
	}
	list := []string{}
	for _, n := range s.Names() {
		if !s.IsRequired(n) {
			list = append(list, n)
		}
	}
	s.Extra["optional"], _ = toolenv.MarshalJSONNoHTML(list)
}

func removeName(list []string, name string) []string {
	out := make([]string, 0, len(list))
	for _, x := range list {
		if x != name {
			out = append(out, x)
		}
	}
	return out
}

// toolbenchType is the type name ToolBench documents for a JSON type.
var toolbenchType = map[string]string{"string": "STRING", "integer": "NUMBER", "number": "NUMBER", "boolean": "BOOLEAN", "object": "OBJECT"}

// retypeSchema converts a parameter's schema, and every value it
// documents, from one type to the other.
func retypeSchema(p *toolenv.Schema, from, to string) {
	p.Type = to
	conv := func(v any) any { return convertValue(v, from, to) }
	for i, v := range p.Enum {
		p.Enum[i] = conv(v)
	}
	mapSchemaValues(p, conv)
	switch {
	case to == "string" && from == "integer":
		p.Pattern = integerPattern
	case to == "string" && from == "number":
		p.Pattern = numberPattern
	case to == "string" && from == "boolean":
		if len(p.Enum) == 0 {
			p.Enum = []any{"true", "false"}
		}
	case from == "string" && (p.Pattern == integerPattern || p.Pattern == numberPattern):
		p.Pattern = ""
	case from == "string" && to == "boolean" && isTrueFalse(p.Enum):
		p.Enum = nil
	}
	if _, ok := p.Extra["x-toolbench-type"]; ok {
		p.Extra["x-toolbench-type"], _ = toolenv.MarshalJSONNoHTML(toolbenchType[to])
	}
}

func isTrueFalse(enum []any) bool {
	if len(enum) != 2 {
		return false
	}
	a, _ := enum[0].(string)
	b, _ := enum[1].(string)
	return (a == "true" && b == "false") || (a == "false" && b == "true")
}

// mapSchemaValues maps the default, const, examples and ToolBench example
// value of a parameter schema.
func mapSchemaValues(p *toolenv.Schema, f func(any) any) {
	if p.Default != nil {
		p.Default = f(p.Default)
	}
	if p.Const != nil {
		p.Const = f(p.Const)
	}
	for i, v := range p.Examples {
		p.Examples[i] = f(v)
	}
	if raw, ok := p.Extra["example_value"]; ok {
		var v any
		if toolenv.DecodeJSON(raw, &v) == nil {
			p.Extra["example_value"], _ = toolenv.MarshalJSONNoHTML(f(v))
		}
	}
}

// addSentence appends a sentence to a description.
func addSentence(desc, s string) string {
	desc = strings.TrimSpace(desc)
	if desc == "" {
		return s
	}
	if !strings.HasSuffix(desc, ".") {
		desc += "."
	}
	return desc + " " + s
}

// replaceDefaultMention rewrites "default: asc"-style mentions of the old
// default in a description to the new one.
func replaceDefaultMention(desc string, old, new any) string {
	o, n := fmt.Sprint(old), fmt.Sprint(new)
	re := regexp.MustCompile(`(?i)(defaults?(?: value)?(?: is| to|:|=)?\s*["'` + "`" + `]?)` + regexp.QuoteMeta(o) + `\b`)
	return re.ReplaceAllString(desc, "${1}"+strings.ReplaceAll(n, "$", "$$"))
}

// nestProps groups c.Members into the object parameter c.Param.
func nestProps(t *toolenv.Tool, c *Change) error {
	in := t.Input
	if _, dup := in.Properties[c.Param]; dup {
		return fmt.Errorf("nest: %q is already a parameter", c.Param)
	}
	obj := &toolenv.Schema{Type: "object", Properties: map[string]*toolenv.Schema{}, AdditionalProperties: json.RawMessage("false")}
	var descs []string
	required := false
	where := ""
	for i, m := range c.Members {
		p := in.Prop(m.Param)
		if p == nil {
			return fmt.Errorf("nest: %q is not a parameter", m.Param)
		}
		if t.Binding != nil {
			w, explicit := t.Binding.In[m.Param]
			if strings.Contains(t.Binding.Path, "{"+m.Param+"}") {
				return fmt.Errorf("nest: %q is a path parameter", m.Param)
			}
			if explicit {
				if i > 0 && w != where {
					return fmt.Errorf("nest: members sent in different places")
				}
				where = w
			}
		}
		ps := p.Clone()
		delete(ps.Extra, "x-name")
		obj.SetProp(m.Key, ps)
		if in.IsRequired(m.Param) {
			obj.Required = append(obj.Required, m.Key)
			required = true
		}
		descs = append(descs, fmt.Sprintf("%s (was %s)", m.Key, m.Param))
	}
	obj.Description = "Groups " + strings.Join(descs, ", ") + "."
	if _, ok := in.Properties[c.Members[0].Param].Extra["x-toolbench-type"]; ok {
		obj.Extra = map[string]json.RawMessage{"x-toolbench-type": json.RawMessage(`"OBJECT"`)}
	}
	// The object takes the first member's place.
	names := in.Names()
	order := make([]string, 0, len(names))
	members := map[string]bool{}
	for _, m := range c.Members {
		members[m.Param] = true
	}
	for _, n := range names {
		if n == c.Members[0].Param {
			order = append(order, c.Param)
		}
		if !members[n] {
			order = append(order, n)
		}
	}
	for _, m := range c.Members {
		delete(in.Properties, m.Param)
		in.Required = removeName(in.Required, m.Param)
		if t.Binding != nil {
			delete(t.Binding.In, m.Param)
		}
	}
	in.Properties[c.Param] = obj
	in.Order = order
	if required {
		in.Required = append(in.Required, c.Param)
	}
	if where != "" {
		t.Binding.In[c.Param] = where
	}
	syncOptional(in)
	return nil
}

// renameOutputProp renames a property of the object schema at path in an
// output schema, reporting whether it found it.
func renameOutputProp(s *toolenv.Schema, path, from, to string) bool {
	s = schemaAt(s, path)
	if s == nil || s.Properties[from] == nil || s.Properties[to] != nil {
		return false
	}
	return renameProp(s, from, to) == nil
}

// schemaAt follows a response path ("a.b[]") through an output schema.
func schemaAt(s *toolenv.Schema, path string) *toolenv.Schema {
	for _, seg := range splitPath(path) {
		if s == nil {
			return nil
		}
		if seg == "[]" {
			s = s.Items
			continue
		}
		s = s.Prop(seg)
	}
	return s
}

// splitPath splits "a.b[]" into "a", "b", "[]".
func splitPath(path string) []string {
	var out []string
	for _, part := range strings.Split(path, ".") {
		if part == "" {
			continue
		}
		name := strings.TrimRight(part, "[]")
		if name != "" {
			out = append(out, name)
		}
		for n := (len(part) - len(name)) / 2; n > 0; n-- {
			out = append(out, "[]")
		}
	}
	return out
}
