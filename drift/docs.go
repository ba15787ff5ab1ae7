package drift

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/validate"
)

// DocsToolName is the name of the documentation tool (AddDocsTool).
const DocsToolName = "get_api_documentation"

// MetaDocsTool marks the documentation tool in a collection.
const MetaDocsTool = "docs_tool"

// DocsTool returns the documentation tool: given the name of an API as
// the caller knows it (current or from an older version), it returns the
// API's current documentation and what changed.
func DocsTool() *toolenv.Tool {
	in := toolenv.ObjectSchema()
	in.SetProp("name", &toolenv.Schema{Type: "string", Description: "The name of the API (function) as you know it; an old name is resolved to the current one."})
	in.Required = []string{"name"}
	in.AdditionalProperties = json.RawMessage("false")
	return &toolenv.Tool{
		Name:  DocsToolName,
		Title: "API documentation",
		Description: "Returns the current documentation of an API: its name, description and parameters as the server enforces them now, " +
			"and what changed since older versions (renamed parameters, new types, new defaults). Use it when a call fails because the API has changed.",
		Input: in,
		Meta:  map[string]string{MetaDocsTool: "true"},
	}
}

// AddDocsTool adds the documentation tool to c (in memory), unless c has
// a tool of that name already.
func AddDocsTool(c *toolenv.Collection) {
	if c.Tool(DocsToolName) != nil {
		return
	}
	c.Tools = append(c.Tools, DocsTool())
	c.Reindex()
}

// APIDoc is what the documentation tool returns for one API.
type APIDoc struct {
	Name        string          `json:"name"`
	Version     string          `json:"version,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  *toolenv.Schema `json:"parameters"`
	// Usage is the parameters in one line, as validation feedback shows
	// them.
	Usage string `json:"usage"`
	// AskedFor is the name asked for when it was an older one.
	AskedFor   string   `json:"asked_for,omitempty"`
	Deprecated string   `json:"deprecated,omitempty"`
	Changes    []string `json:"changes,omitempty"`
	ErrorStyle string   `json:"error_format,omitempty"`
}

// Docs answers documentation requests for collections, drifted or not.
type Docs struct {
	byCol atomic.Pointer[map[string]*Lineage]
	setMu sync.Mutex
}

// NewDocs returns the documentation of the collections of ls (NewLineage
// for collections that were never drifted).
func NewDocs(ls ...*Lineage) *Docs {
	m := map[string]*Lineage{}
	for _, l := range ls {
		m[l.Current.Name] = l
	}
	d := &Docs{}
	d.byCol.Store(&m)
	return d
}

// Set documents l from now on, in place of the collection of the same
// name: a version hot-loaded into a running server.
func (d *Docs) Set(l *Lineage) {
	d.setMu.Lock()
	defer d.setMu.Unlock()
	m := maps.Clone(*d.byCol.Load())
	m[l.Current.Name] = l
	d.byCol.Store(&m)
}

// Lookup returns the current documentation of the API known as name in
// collection coll: a current tool, or a tool of an older version followed
// to its current name.
func (d *Docs) Lookup(coll, name string) (*APIDoc, error) {
	l := (*d.byCol.Load())[coll]
	if l == nil {
		return nil, toolenv.Errorw(toolenv.StatusNotFound, "", "no documentation for collection %q", coll)
	}
	cur := len(l.versions) - 1
	current, asked := name, ""
	t := l.ToolAt(cur, name)
	if t != nil && t.Meta[MetaStub] == "true" {
		if i, old := l.stubOrigin(name); i >= 0 {
			current, _, _ = l.Manifest.Forward(l.Versions()[i], old, nil)
			asked = name
		}
	}
	if t == nil {
		for i := cur - 1; i >= 0 && t == nil; i-- {
			if l.ToolAt(i, name) != nil {
				current, _, _ = l.Manifest.Forward(l.Versions()[i], name, nil)
				asked = name
				t = l.ToolAt(cur, current)
			}
		}
	}
	if asked != "" {
		t = l.ToolAt(cur, current)
	}
	if t == nil || t.Meta[MetaDocsTool] == "true" {
		names := make([]string, 0, len(l.Current.Tools))
		for _, x := range l.Current.Tools {
			if !x.Hidden() && x.Meta[MetaDocsTool] != "true" {
				names = append(names, x.Name)
			}
		}
		hint := fmt.Sprintf("%s has %d APIs", coll, len(names))
		if s := validate.Suggest(name, names); s != "" {
			hint = fmt.Sprintf("did you mean %q? ", s) + hint
		}
		return nil, toolenv.Errorw(toolenv.StatusNotFound, hint, "no API %q in %s, in any version", name, coll)
	}
	doc := &APIDoc{Name: t.Name, Version: l.Manifest.Version, Description: t.Description, Parameters: t.Input, Usage: validate.ParamHelp(t), AskedFor: asked}
	if t.Deprecated != nil {
		doc.Deprecated = fmt.Sprintf("deprecated since %s; use %s", t.Deprecated.Since, t.Deprecated.Successor)
	}
	if st := styleOf(t); st != nil {
		doc.ErrorStyle = st.Template + " (codes: " + st.CodeStyle + ")"
	}
	vs := l.Versions()
	for k := range l.Manifest.Steps {
		s := &l.Manifest.Steps[k]
		if tc := s.change(l.Manifest.NameAt(vs[k], t.Name)); tc != nil {
			for _, c := range tc.Changes {
				doc.Changes = append(doc.Changes, s.To+": "+strings.ReplaceAll(describe(&c, s), "**", ""))
			}
		}
	}
	return doc, nil
}

// Middleware answers calls to the documentation tool (AddDocsTool) of
// any collection it knows; other calls pass through. It goes ahead of
// the enforcer, in the middleware before validation.
func (d *Docs) Middleware() toolenv.Middleware {
	return func(next toolenv.Handler) toolenv.Handler {
		return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
			if call.Tool == nil || call.Tool.Meta[MetaDocsTool] != "true" {
				return next.Invoke(ctx, call)
			}
			name, _ := call.Args["name"].(string)
			if name == "" {
				return toolenv.Errorf(toolenv.StatusInvalidArguments, validate.ParamHelp(call.Tool), "missing required argument `name` (string)")
			}
			doc, err := d.Lookup(call.Tool.Collection, name)
			if err != nil {
				return toolenv.ResultOf(err)
			}
			body, err := toolenv.MarshalJSONNoHTML(doc)
			if err != nil {
				return toolenv.Errorf(toolenv.StatusInternal, "", "encode documentation: %v", err)
			}
			return &toolenv.Result{Status: toolenv.StatusOK, Body: body, Source: toolenv.SourcePipeline}
		})
	}
}

// ShownTools returns the tools a model sees when it is shown the
// documentation of version docs (an older version of env's collection)
// while env serves the calls: each offered tool of the current version,
// by its name and documentation in docs. Tools docs does not have (new in
// a later version) are shown as they are now.
func ShownTools(env *Lineage, docs *toolenv.Collection, offered []*toolenv.Tool) []*toolenv.Tool {
	out := make([]*toolenv.Tool, 0, len(offered))
	for _, t := range offered {
		if old := docs.Tool(env.Manifest.NameAt(docs.Version, t.Name)); old != nil {
			out = append(out, old)
			continue
		}
		out = append(out, t)
	}
	return out
}
