package toolbench

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// APIDoc is the documentation of one API as StableToolBench query files
// embed it in their api_list (and as ToolBench's tool files describe it).
type APIDoc struct {
	CategoryName       string          `json:"category_name"`
	ToolName           string          `json:"tool_name"`
	APIName            string          `json:"api_name"`
	APIDescription     string          `json:"api_description"`
	RequiredParameters []ParamDoc      `json:"required_parameters"`
	OptionalParameters []ParamDoc      `json:"optional_parameters"`
	Method             string          `json:"method"`
	TemplateResponse   json.RawMessage `json:"template_response,omitempty"`
	// The fields below come from ToolBench tool files only.
	URL             string `json:"url,omitempty"`
	ToolDescription string `json:"tool_description,omitempty"`
	Host            string `json:"host,omitempty"`
}

// ParamDoc documents one parameter.
type ParamDoc struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	// Default is the example value ToolBench shows as example_value.
	Default any `json:"default"`
}

// Key identifies an API the way StableToolBench's server does: the
// standardized category, tool and API names.
func (d *APIDoc) Key() string {
	return key(StandardizeCategory(d.CategoryName), Standardize(d.ToolName), APIName(d.APIName))
}

func key(cat, tool, api string) string { return cat + "\x00" + tool + "\x00" + api }

// typeMap is ToolBench's map_type; other declared types become strings.
var typeMap = map[string]string{"NUMBER": "integer", "STRING": "string", "BOOLEAN": "boolean"}

// descriptionMax is ToolBench's description_max_length.
const descriptionMax = 256

// Tool converts the documentation to a toolenv Tool named as ToolBench
// names its function. Parameter names are standardized as ToolBench's
// function JSON standardizes them ("id" becomes "is_id"); the original
// name is kept in the property's "x-name" and the declared ToolBench type
// in "x-toolbench-type". Meta carries the function description ToolBench
// shows models and the standardized names the /virtual front-end resolves.
func (d *APIDoc) Tool() *toolenv.Tool {
	stdTool := Standardize(d.ToolName)
	name := FunctionName(d.APIName, d.ToolName)
	in := toolenv.ObjectSchema()
	var optional []any
	addParams := func(params []ParamDoc, required bool) {
		for _, p := range params {
			pn := ParamName(p.Name)
			if pn == "" {
				pn = "is_"
			}
			typ, ok := typeMap[p.Type]
			if !ok {
				typ = "string"
			}
			ps := &toolenv.Schema{Type: typ, Description: p.Description, Extra: map[string]json.RawMessage{}}
			if pyStr(p.Default) != "" {
				raw, _ := toolenv.MarshalJSONNoHTML(p.Default)
				ps.Extra["example_value"] = raw
			}
			if pn != p.Name {
				raw, _ := toolenv.MarshalJSONNoHTML(p.Name)
				ps.Extra["x-name"] = raw
			}
			tt, _ := toolenv.MarshalJSONNoHTML(p.Type)
			ps.Extra["x-toolbench-type"] = tt
			if _, dup := in.Properties[pn]; dup {
				continue // two documented names standardize alike; ToolBench keeps the last, we keep the first
			}
			in.SetProp(pn, ps)
			if required {
				in.Required = append(in.Required, pn)
			} else {
				optional = append(optional, pn)
			}
		}
	}
	addParams(d.RequiredParameters, true)
	addParams(d.OptionalParameters, false)
	if optional == nil {
		optional = []any{}
	}
	opt, _ := toolenv.MarshalJSONNoHTML(optional)
	in.Extra = map[string]json.RawMessage{"optional": opt}
	if in.Required == nil {
		in.Required = []string{}
	}

	fdesc := fmt.Sprintf("This is the subfunction for tool \"%s\", you can use this tool.", stdTool)
	if desc := strings.TrimSpace(d.APIDescription); desc != "" {
		desc = strings.ReplaceAll(desc, d.APIName, name)
		if r := []rune(desc); len(r) > descriptionMax {
			desc = string(r[:descriptionMax])
		}
		fdesc += fmt.Sprintf("The description of this function is: \"%s\"", desc)
	}
	t := &toolenv.Tool{
		Name:             name,
		Title:            d.APIName,
		Description:      d.APIDescription,
		Category:         d.CategoryName,
		Group:            d.ToolName,
		GroupDescription: d.ToolDescription,
		Input:            in,
		Meta: map[string]string{
			"function_description": fdesc,
			"std_category":         StandardizeCategory(d.CategoryName),
			"std_tool":             stdTool,
			"api_name":             APIName(d.APIName),
			"toolbench_name":       name,
		},
	}
	if len(d.TemplateResponse) > 0 && string(d.TemplateResponse) != "null" {
		t.OutputExample = append(json.RawMessage(nil), d.TemplateResponse...)
	}
	method := strings.ToUpper(d.Method)
	if method == "" {
		method = "GET"
	}
	t.Binding = &toolenv.Binding{Method: method}
	if d.URL != "" {
		if u, err := url.Parse(d.URL); err == nil && u.Host != "" {
			t.Binding.BaseURL = u.Scheme + "://" + u.Host
			t.Binding.Path = u.EscapedPath()
		}
	}
	if d.Host != "" {
		t.Meta["host"] = d.Host
	}
	return t
}

// pyStr mimics Python's str() closely enough to tell ToolBench's
// "len(str(default)) != 0" test: only an empty string is empty.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return "x"
}

// DocOf rebuilds the ToolBench documentation of a tool made by
// (*APIDoc).Tool, for prompts that show documentation in ToolBench's own
// shape (the simulators).
func DocOf(t *toolenv.Tool) APIDoc {
	d := APIDoc{
		CategoryName:    t.Category,
		ToolName:        t.Group,
		APIName:         t.Title,
		APIDescription:  t.Description,
		ToolDescription: t.GroupDescription,
		TemplateResponse: func() json.RawMessage {
			if len(t.OutputExample) == 0 {
				return nil
			}
			return t.OutputExample
		}(),
	}
	if t.Binding != nil {
		d.Method = t.Binding.Method
		if t.Binding.BaseURL != "" {
			d.URL = t.Binding.BaseURL + t.Binding.Path
		}
	}
	for _, n := range t.Input.Names() {
		p := t.Input.Properties[n]
		pd := ParamDoc{Name: n, Type: strings.ToUpper(p.Type), Description: p.Description, Default: ""}
		if raw, ok := p.Extra["x-name"]; ok {
			_ = json.Unmarshal(raw, &pd.Name)
		}
		if raw, ok := p.Extra["x-toolbench-type"]; ok {
			_ = json.Unmarshal(raw, &pd.Type)
		}
		if raw, ok := p.Extra["example_value"]; ok {
			_ = toolenv.DecodeJSON(raw, &pd.Default)
		}
		if t.Input.IsRequired(n) {
			d.RequiredParameters = append(d.RequiredParameters, pd)
		} else {
			d.OptionalParameters = append(d.OptionalParameters, pd)
		}
	}
	if d.RequiredParameters == nil {
		d.RequiredParameters = []ParamDoc{}
	}
	if d.OptionalParameters == nil {
		d.OptionalParameters = []ParamDoc{}
	}
	return d
}

// CollectionOptions name and configure a ToolBench collection.
type CollectionOptions struct {
	// Name is the collection's name; default "toolbench".
	Name string
}

// NewCollection turns API docs into a collection of the "virtual" backend
// with the lenient validation policy and caching on. Docs of the same API
// (same standardized category, tool and API) are merged, first one wins.
// Function names that collide (ToolBench keeps only the last 64
// characters, and one tool may sit in two categories) stay as ToolBench
// names them for the first API in sorted order and get a short, stable
// prefix for the others; Meta["toolbench_name"] keeps ToolBench's name.
func NewCollection(docs []APIDoc, opts CollectionOptions) *toolenv.Collection {
	name := opts.Name
	if name == "" {
		name = "toolbench"
	}
	seen := map[string]bool{}
	var uniq []APIDoc
	for _, d := range docs {
		k := d.Key()
		if seen[k] {
			continue
		}
		seen[k] = true
		uniq = append(uniq, d)
	}
	sort.SliceStable(uniq, func(i, j int) bool { return uniq[i].Key() < uniq[j].Key() })
	used := map[string]bool{}
	tools := make([]*toolenv.Tool, 0, len(uniq))
	for i := range uniq {
		t := uniq[i].Tool()
		if used[t.Name] {
			t.Name = disambiguate(t.Name, uniq[i].Key(), used)
		}
		used[t.Name] = true
		tools = append(tools, t)
	}
	c := toolenv.NewCollection(name, "toolbench", tools)
	c.Description = "ToolBench/StableToolBench APIs served virtually: cache, then the real upstream if configured, then the simulator"
	c.Policy = toolenv.Policy{Validation: toolenv.ValidationLenient, Cache: true, Feedback: toolenv.FeedbackHelpful}
	c.Backend = toolenv.BackendSpec{Type: "virtual"}
	return c
}

func disambiguate(name, k string, used map[string]bool) string {
	h := uint32(2166136261)
	for i := 0; i < len(k); i++ {
		h ^= uint32(k[i])
		h *= 16777619
	}
	for salt := uint32(0); ; salt++ {
		prefix := fmt.Sprintf("x%05x_", (h+salt)&0xfffff)
		cand := prefix + lastChars(name, 64-len(prefix))
		if !used[cand] {
			return cand
		}
	}
}
