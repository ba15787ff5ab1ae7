package toolenv

import (
	"encoding/json"
	"strings"
)

// Tool is one invocable API: a function a model can call.
type Tool struct {
	// ID is "<collection>/<name>", unique across a server and stable: it
	// is the tool part of every cache key.
	ID string `json:"id"`
	// Collection names the collection the tool belongs to.
	Collection string `json:"collection"`
	// Name is the function name models call: letters, digits, '_' and
	// '-', at most 64 bytes, unique within its collection. For ToolBench
	// APIs it is ToolBench's own "<api>_for_<tool>" name.
	Name string `json:"name"`
	// Title is the API's name as documented ("Songkick concert").
	Title string `json:"title,omitempty"`
	// Description says what the API does.
	Description string `json:"description,omitempty"`
	// Category is the ToolBench/RapidAPI category, if any.
	Category string `json:"category,omitempty"`
	// Group is the tool (ToolBench) or tag (OpenAPI) several APIs share.
	Group string `json:"group,omitempty"`
	// GroupDescription describes the group.
	GroupDescription string `json:"group_description,omitempty"`
	// Input is the JSON Schema of the arguments: an object schema.
	Input *Schema `json:"input"`
	// Output is the JSON Schema of the response, when documented.
	Output *Schema `json:"output,omitempty"`
	// OutputExample is an example or template of the response
	// (ToolBench's template_response).
	OutputExample json.RawMessage `json:"output_example,omitempty"`
	// Binding says how the tool is reached over HTTP.
	Binding *Binding `json:"binding,omitempty"`
	// Examples are documented calls with their responses.
	Examples []Example `json:"examples,omitempty"`
	// Deprecated, when set, says the tool is retired and what replaces it.
	Deprecated *Deprecation `json:"deprecated,omitempty"`
	// Meta holds collection-specific details (the SQL template of a REST
	// tool, the table a getter reads).
	Meta map[string]string `json:"meta,omitempty"`
}

// Binding is how a tool maps onto HTTP.
type Binding struct {
	// Method is the HTTP method ("GET", "POST").
	Method string `json:"method"`
	// Path is the route, with {name} placeholders for path parameters.
	Path string `json:"path"`
	// BaseURL is the real upstream's base URL, when there is one.
	BaseURL string `json:"base_url,omitempty"`
	// In says where each parameter goes: "query" (default), "path",
	// "header" or "body".
	In map[string]string `json:"in,omitempty"`
}

// ParamIn returns where parameter name goes: In[name], else "path" if the
// path has a {name} placeholder, else "body" for methods with a body,
// else "query".
func (b *Binding) ParamIn(name string) string {
	if b == nil {
		return "query"
	}
	if in, ok := b.In[name]; ok {
		return in
	}
	if strings.Contains(b.Path, "{"+name+"}") {
		return "path"
	}
	switch strings.ToUpper(b.Method) {
	case "POST", "PUT", "PATCH":
		return "body"
	}
	return "query"
}

// Example is one documented call and its response.
type Example struct {
	Args     map[string]any  `json:"args"`
	Response json.RawMessage `json:"response,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// Deprecation marks a retired tool.
type Deprecation struct {
	// Successor is the name of the tool that replaces this one.
	Successor string `json:"successor,omitempty"`
	// Since is the collection version that retired it.
	Since string `json:"since,omitempty"`
	// Message explains the change.
	Message string `json:"message,omitempty"`
}

// TitleOrName returns the API's documented name, else its function name.
func (t *Tool) TitleOrName() string {
	if t.Title != "" {
		return t.Title
	}
	return t.Name
}

// GroupOrCollection returns the name of the tool the API belongs to (its
// Group), else its collection's name.
func (t *Tool) GroupOrCollection() string {
	if t.Group != "" {
		return t.Group
	}
	return t.Collection
}

// MetaHidden is the Tool.Meta key that, set to "true", keeps a tool out of
// the listings shown to agents (tools lists, OpenAPI, MCP tools/list) while
// it stays callable: the hidden initialisation step of SLOT/SEL tasks.
const MetaHidden = "hidden"

// Hidden reports whether t is kept out of listings (Meta["hidden"]).
func (t *Tool) Hidden() bool { return t.Meta[MetaHidden] == "true" }

// MetaLabelArg is the Tool.Meta key naming the argument through which
// the tool takes a NESTful output label (the SLOT/SEL tools store their
// result under it: "label"). A tool without it takes no label, whatever
// its arguments are called: an API parameter that happens to be called
// "label" is the API's own and never receives toolenv's label.
const MetaLabelArg = "label_arg"

// LabelArg returns the argument that carries a NESTful label into t
// (Meta["label_arg"]), or "" when t takes none.
func (t *Tool) LabelArg() string {
	if t == nil {
		return ""
	}
	return t.Meta[MetaLabelArg]
}

// Listed returns the tools of c that listings show: all but hidden ones.
func (c *Collection) Listed() []*Tool {
	out := make([]*Tool, 0, len(c.Tools))
	for _, t := range c.Tools {
		if !t.Hidden() {
			out = append(out, t)
		}
	}
	return out
}

// ToolID joins a collection and a tool name into a tool ID.
func ToolID(collection, name string) string { return collection + "/" + name }

// SplitToolID splits a tool ID at its first '/'.
func SplitToolID(id string) (collection, name string, ok bool) {
	collection, name, ok = strings.Cut(id, "/")
	return collection, name, ok && collection != "" && name != ""
}

// Params returns the input's parameter names in documentation order.
func (t *Tool) Params() []string { return t.Input.Names() }

// Clone returns a deep copy of t.
func (t *Tool) Clone() *Tool {
	if t == nil {
		return nil
	}
	c := *t
	c.Input = t.Input.Clone()
	c.Output = t.Output.Clone()
	c.OutputExample = append(json.RawMessage(nil), t.OutputExample...)
	if t.Binding != nil {
		b := *t.Binding
		if t.Binding.In != nil {
			b.In = make(map[string]string, len(t.Binding.In))
			for k, v := range t.Binding.In {
				b.In[k] = v
			}
		}
		c.Binding = &b
	}
	if t.Examples != nil {
		raw, _ := json.Marshal(t.Examples)
		c.Examples = nil
		_ = DecodeJSON(raw, &c.Examples)
	}
	if t.Deprecated != nil {
		d := *t.Deprecated
		c.Deprecated = &d
	}
	if t.Meta != nil {
		c.Meta = make(map[string]string, len(t.Meta))
		for k, v := range t.Meta {
			c.Meta[k] = v
		}
	}
	return &c
}
