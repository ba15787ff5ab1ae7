package toolbench

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

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
func (d *APIDoc) Tool() *toolenv.Tool { return newBuilder(1).tool(d) }

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

// name is the collection's name: Name, or "toolbench".
func (o CollectionOptions) name() string {
	if o.Name == "" {
		return "toolbench"
	}
	return o.Name
}

// NewCollection turns API docs into a collection of the "virtual" backend
// with the lenient validation policy and caching on. Docs of the same API
// (same standardized category, tool and API) are merged, first one wins.
// Function names that collide (ToolBench keeps only the last 64
// characters, and one tool may sit in two categories) stay as ToolBench
// names them for the first API in sorted order and get a short, stable
// prefix for the others; Meta["toolbench_name"] keeps ToolBench's name.
func NewCollection(docs []APIDoc, opts CollectionOptions) *toolenv.Collection {
	// Keys computed once (on every core): merging and sorting need them.
	all := make([]string, len(docs))
	parallel(len(docs), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			all[i] = docs[i].Key()
		}
	})
	keys := make([]string, 0, len(docs))
	uniq := make([]*APIDoc, 0, len(docs))
	seen := make(map[string]bool, len(docs))
	for i, k := range all {
		if seen[k] {
			continue
		}
		seen[k] = true
		keys, uniq = append(keys, k), append(uniq, &docs[i])
	}
	// Tools are built on every core, each worker sharing within its own
	// run of APIs (a tool's APIs are neighbours in the docs).
	tools := make([]*toolenv.Tool, len(uniq))
	parallel(len(uniq), func(lo, hi int) {
		b := newBuilder(hi - lo)
		b.coll = opts.name()
		for i := lo; i < hi; i++ {
			tools[i] = b.tool(uniq[i])
		}
	})
	return finishCollection(opts, tools, keys)
}

// parallel calls f on every core with a part [lo, hi) of [0, n), in runs
// of at least 2,000, and returns when all have returned.
func parallel(n int, f func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), max(1, n/2000))
	var wg sync.WaitGroup
	for w := range parts {
		lo, hi := w*n/parts, (w+1)*n/parts
		wg.Go(func() { f(lo, hi) })
	}
	wg.Wait()
}

// finishCollection makes the collection of tools, built from docs whose
// keys are keys (both in the docs' order, each key once): the tools in
// key order, colliding names made unique in that order.
func finishCollection(opts CollectionOptions, tools []*toolenv.Tool, keys []string) *toolenv.Collection {
	name := opts.name()
	order := make([]int, len(tools))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return keys[order[i]] < keys[order[j]] })
	sorted := make([]*toolenv.Tool, len(order))
	used := make(map[string]bool, len(tools))
	for i, o := range order {
		t := tools[o]
		if used[t.Name] {
			t.Name = disambiguate(t.Name, keys[o], used)
		}
		used[t.Name] = true
		sorted[i] = t
	}
	c := toolenv.NewCollection(name, "toolbench", sorted)
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
