package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/openai"
	"github.com/toolenv/toolenv/validate"
)

// The MCP resources toolenv offers: the documentation of each collection
// (Markdown: what it holds, each listed tool by its MCP name with its
// description and parameters) and of each listed tool (JSON: name,
// description, input and output schemas, example answer). They follow
// the registry: a hot-loaded version's documentation is read at once,
// subscribers of its resources are sent notifications/resources/updated,
// and a collection added or removed changes resources/list (with
// notifications/resources/list_changed).
const (
	mcpCollectionURIPrefix = "toolenv://collections/"
	mcpToolURIPrefix       = "toolenv://tools/"
	mcpToolURITemplate     = mcpToolURIPrefix + "{collection}/{tool}"
)

// MCPCollectionURI is the URI of the MCP resource documenting a
// collection.
func MCPCollectionURI(collection string) string {
	return mcpCollectionURIPrefix + url.PathEscape(collection)
}

// MCPToolURI is the URI of the MCP resource documenting a tool.
func MCPToolURI(collection, tool string) string {
	return mcpToolURIPrefix + url.PathEscape(collection) + "/" + url.PathEscape(tool)
}

// mcpResources keeps the SDK's resource list in step with the registry
// and remembers what clients subscribed to.
type mcpResources struct {
	mu     sync.Mutex
	listed []string       // collection names whose resources the SDK holds
	subs   map[string]int // subscribed URI → subscriptions
}

// setupResources adds the tool template and the collections' resources;
// registryChanged keeps them in step.
func (f *mcpFrontend) setupResources() {
	f.srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "tool-documentation",
		Title:       "Documentation of a tool",
		URITemplate: mcpToolURITemplate,
		MIMEType:    "application/json",
		Description: "The documentation of one tool: its MCP name, description, input schema, output schema and an example answer, " +
			"as the server enforces them now. {collection} and {tool} are the collection's name and the tool's own name (its ID is collection/tool).",
	}, f.readToolDoc)
	f.syncResources()
}

// syncResources makes the SDK list one resource per collection served.
func (f *mcpFrontend) syncResources() {
	colls := f.registry.Collections()
	names := make([]string, len(colls))
	for i, c := range colls {
		names[i] = c.Name
	}
	f.resources.mu.Lock()
	defer f.resources.mu.Unlock()
	var gone []string
	for _, n := range f.resources.listed {
		if !slices.Contains(names, n) {
			gone = append(gone, MCPCollectionURI(n))
		}
	}
	if len(gone) > 0 {
		f.srv.RemoveResources(gone...)
	}
	for _, c := range colls {
		if slices.Contains(f.resources.listed, c.Name) {
			continue
		}
		desc := c.Description
		if desc == "" {
			desc = fmt.Sprintf("The %s collection", c.Name)
		}
		f.srv.AddResource(&mcp.Resource{
			URI:         MCPCollectionURI(c.Name),
			Name:        c.Name,
			Title:       "Documentation of " + c.Name,
			MIMEType:    "text/markdown",
			Description: desc + ": what it holds and every tool with its description and parameters (each tool's full documentation is " + mcpToolURITemplate + ").",
		}, f.readCollectionDoc)
	}
	f.resources.listed = names
}

// resourcesChanged tells the subscribers of a replaced collection's
// resources that they changed.
func (f *mcpFrontend) resourcesChanged(collection string) {
	f.resources.mu.Lock()
	var uris []string
	for uri := range f.resources.subs {
		if uri == MCPCollectionURI(collection) || strings.HasPrefix(uri, mcpToolURIPrefix+url.PathEscape(collection)+"/") {
			uris = append(uris, uri)
		}
	}
	f.resources.mu.Unlock()
	for _, uri := range uris {
		if err := f.srv.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			f.log.Debug("resource update not sent", "uri", uri, "err", err)
		}
	}
}

// subscribe accepts a subscription to a resource the server holds.
func (f *mcpFrontend) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	if !f.resourceExists(uri) {
		return f.subscribeSource(ctx, uri) // an MCP source's, or none
	}
	f.resources.mu.Lock()
	if f.resources.subs == nil {
		f.resources.subs = map[string]int{}
	}
	f.resources.subs[uri]++
	f.resources.mu.Unlock()
	return nil
}

// unsubscribe ends a subscription (of an unknown resource too: nothing
// to end).
func (f *mcpFrontend) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	uri := req.Params.URI
	if !f.resourceExists(uri) {
		return f.unsubscribeSource(ctx, uri)
	}
	f.resources.mu.Lock()
	if n := f.resources.subs[uri]; n > 1 {
		f.resources.subs[uri] = n - 1
	} else {
		delete(f.resources.subs, uri)
	}
	f.resources.mu.Unlock()
	return nil
}

func (f *mcpFrontend) resourceExists(uri string) bool {
	if name, ok := strings.CutPrefix(uri, mcpCollectionURIPrefix); ok {
		name, err := url.PathUnescape(name)
		return err == nil && f.registry.Collection(name) != nil
	}
	_, _, ok := f.toolOfURI(uri)
	return ok
}

// toolOfURI finds the listed tool a tool URI names.
func (f *mcpFrontend) toolOfURI(uri string) (*mcpEntry, *mcpCatalog, bool) {
	rest, ok := strings.CutPrefix(uri, mcpToolURIPrefix)
	if !ok {
		return nil, nil, false
	}
	coll, tool, ok := strings.Cut(rest, "/")
	if !ok {
		return nil, nil, false
	}
	coll, err1 := url.PathUnescape(coll)
	tool, err2 := url.PathUnescape(tool)
	if err1 != nil || err2 != nil {
		return nil, nil, false
	}
	cat := f.current()
	e := cat.byID(coll + "/" + tool)
	if e == nil || e.tool == nil || e.tool.Hidden() {
		return nil, nil, false
	}
	return e, cat, true
}

// readCollectionDoc reads a collection's documentation.
func (f *mcpFrontend) readCollectionDoc(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	name, _ := strings.CutPrefix(uri, mcpCollectionURIPrefix)
	name, err := url.PathUnescape(name)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	cat := f.current()
	c := f.registry.Collection(name)
	if c == nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI: uri, MIMEType: "text/markdown", Text: collectionMarkdown(c, cat),
	}}}, nil
}

// collectionMarkdown documents a collection for a client or a model.
func collectionMarkdown(c *toolenv.Collection, cat *mcpCatalog) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", c.Name)
	if c.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", c.Description)
	}
	var tools []*mcpEntry
	for _, e := range cat.listed {
		if e.coll != nil && e.coll.Name == c.Name {
			tools = append(tools, e)
		}
	}
	fmt.Fprintf(&b, "Kind: %s", c.Kind)
	if c.Version != "" {
		fmt.Fprintf(&b, "; version: %s", c.Version)
	}
	fmt.Fprintf(&b, "; %d tools. Each tool below is named as tools/list names it; its full documentation (schemas, an example answer) is the resource %s.\n",
		len(tools), MCPToolURI(c.Name, "TOOL"))
	for _, e := range tools {
		fmt.Fprintf(&b, "\n## %s\n\n", e.name)
		if e.tool.Title != "" && e.tool.Title != e.name {
			fmt.Fprintf(&b, "%s.\n\n", strings.TrimSuffix(e.tool.Title, "."))
		}
		if d := openai.Description(e.tool); d != "" {
			fmt.Fprintf(&b, "%s\n\n", d)
		}
		fmt.Fprintf(&b, "%s.\n", strings.TrimSuffix(validate.ParamHelp(e.tool), "."))
	}
	return b.String()
}

// mcpToolDoc is the documentation of one tool, as its resource gives it.
type mcpToolDoc struct {
	Name          string               `json:"name"`
	ID            string               `json:"id"`
	Collection    string               `json:"collection"`
	Title         string               `json:"title,omitempty"`
	Description   string               `json:"description"`
	InputSchema   json.RawMessage      `json:"inputSchema"`
	OutputSchema  json.RawMessage      `json:"outputSchema,omitempty"`
	OutputExample json.RawMessage      `json:"outputExample,omitempty"`
	Method        string               `json:"method,omitempty"`
	Path          string               `json:"path,omitempty"`
	Deprecated    *toolenv.Deprecation `json:"deprecated,omitempty"`
	Resource      string               `json:"collectionResource"`
}

// readToolDoc reads a tool's documentation.
func (f *mcpFrontend) readToolDoc(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	e, _, ok := f.toolOfURI(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	def, err := mcpTool(e)
	if err != nil {
		return nil, fmt.Errorf("the documentation of %s does not render: %w", e.tool.ID, err)
	}
	doc := mcpToolDoc{
		Name: e.name, ID: e.tool.ID, Collection: e.coll.Name, Title: e.tool.Title, Description: def.Description,
		InputSchema: def.InputSchema.(json.RawMessage), Deprecated: e.tool.Deprecated, Resource: MCPCollectionURI(e.coll.Name),
	}
	if e.tool.Output != nil {
		if raw, err := e.tool.Output.MarshalJSON(); err == nil {
			doc.OutputSchema = raw
		}
	}
	if len(e.tool.OutputExample) > 0 && json.Valid(e.tool.OutputExample) {
		doc.OutputExample = e.tool.OutputExample
	}
	if b := e.tool.Binding; b != nil {
		doc.Method, doc.Path = b.Method, b.Path
	}
	body, err := toolenv.MarshalJSONNoHTML(doc)
	if err != nil {
		return nil, fmt.Errorf("the documentation of %s does not encode: %w", e.tool.ID, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(body)}}}, nil
}
