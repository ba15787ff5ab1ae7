package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolenv/toolenv/backend/mcpsource"
)

// MCPSource is an MCP server toolenv serves the tools of (a collection of
// kind mcp, --mcp-server) and whose resources, resource templates,
// prompts and completions its MCP server offers beside its own: the full
// proxy. *mcpsource.Client is one. Each answer says whether it was
// replayed from a recording (the server being gone).
type MCPSource interface {
	Name() string
	Capabilities(ctx context.Context) *mcp.ServerCapabilities
	Resources(ctx context.Context) ([]*mcp.Resource, bool, error)
	ResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, bool, error)
	Prompts(ctx context.Context) ([]*mcp.Prompt, bool, error)
	ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, bool, error)
	GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, bool, error)
	Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, bool, error)
	Subscribe(ctx context.Context, uri string) error
	Unsubscribe(ctx context.Context, uri string) error
	OnResourceUpdated(func(uri string))
	OnListChanged(func(what string))
}

var _ MCPSource = (*mcpsource.Client)(nil)

// mcpProxy holds the sources and what the front-end learnt of them.
type mcpProxy struct {
	sources                         []MCPSource
	prompts, completions, resources bool // some source offers them

	mu      sync.Mutex
	uris    map[string]MCPSource // resource URI → the source that listed it
	names   map[string]mcpPromptOf
	subs    map[string]int // subscribed source URI → subscriptions
	changed sync.Once
}

// mcpPromptOf is a source's prompt under its MCP name.
type mcpPromptOf struct {
	src  MCPSource
	name string // the source's own name
}

// setupProxy learns what the sources offer (their capabilities, as
// recorded when one is down) and follows their changes.
func (f *mcpFrontend) setupProxy(sources []MCPSource) {
	p := &f.proxy
	p.sources = sources
	ctx := context.Background()
	for _, s := range sources {
		caps := s.Capabilities(ctx)
		if caps == nil {
			continue
		}
		p.prompts = p.prompts || caps.Prompts != nil
		p.completions = p.completions || caps.Completions != nil
		p.resources = p.resources || caps.Resources != nil
		s.OnResourceUpdated(func(uri string) {
			if err := f.srv.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
				f.log.Debug("resource update not sent", "uri", uri, "err", err)
			}
		})
		s.OnListChanged(func(what string) { f.sourceListChanged(what) })
	}
}

// sourceListChanged tells the clients that a source's tool (when it reads
// the same: a changed list replaces the collection, which tells them),
// resource or prompt list changed, through the SDK (a placeholder added and removed, as for
// tools).
func (f *mcpFrontend) sourceListChanged(what string) {
	const placeholder = "toolenv-placeholder"
	switch what {
	case "tools":
		f.notifyListChanged()
	case "prompts":
		if f.proxy.prompts {
			f.srv.AddPrompt(&mcp.Prompt{Name: placeholder}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return nil, errors.New("not a prompt")
			})
			f.srv.RemovePrompts(placeholder)
		}
	case "resources":
		uri := "toolenv://placeholder"
		f.srv.AddResource(&mcp.Resource{URI: uri, Name: placeholder}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return nil, mcp.ResourceNotFoundError(uri)
		})
		f.srv.RemoveResources(uri)
	}
}

// proxied answers what the sources offer beside toolenv's own: their
// resources, templates and prompts in the lists, and reads, prompts and
// completions of theirs. It is receiving middleware, inside route.
func (f *mcpFrontend) proxied(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		p := &f.proxy
		if len(p.sources) == 0 {
			return next(ctx, method, req)
		}
		switch method {
		case "resources/list":
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListResourcesResult); ok && err == nil && lr.NextCursor == "" {
				lr.Resources = append(lr.Resources, f.sourceResources(ctx)...)
			}
			return res, err
		case "resources/templates/list":
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListResourceTemplatesResult); ok && err == nil && lr.NextCursor == "" {
				for _, s := range f.sourcesWith(ctx, func(c *mcp.ServerCapabilities) bool { return c.Resources != nil }) {
					ts, _, err := s.ResourceTemplates(ctx)
					if err != nil {
						f.log.Warn("an MCP source's resource templates could not be listed", "source", s.Name(), "err", err)
					}
					lr.ResourceTemplates = append(lr.ResourceTemplates, ts...)
				}
			}
			return res, err
		case "resources/read":
			rr, _ := req.(*mcp.ReadResourceRequest)
			if rr == nil || rr.Params == nil || f.resourceExists(rr.Params.URI) {
				return next(ctx, method, req)
			}
			return f.readSource(ctx, rr)
		case "prompts/list":
			return f.listPrompts(ctx), nil
		case "prompts/get":
			gr, _ := req.(*mcp.GetPromptRequest)
			if gr == nil || gr.Params == nil {
				return next(ctx, method, req)
			}
			return f.getPrompt(ctx, gr)
		case "completion/complete":
			cr, _ := req.(*mcp.CompleteRequest)
			if cr == nil || cr.Params == nil || cr.Params.Ref == nil {
				return next(ctx, method, req)
			}
			return f.complete(ctx, cr)
		}
		return next(ctx, method, req)
	}
}

// sourcesWith returns the sources whose capabilities hold what want asks.
func (f *mcpFrontend) sourcesWith(ctx context.Context, want func(*mcp.ServerCapabilities) bool) []MCPSource {
	var out []MCPSource
	for _, s := range f.proxy.sources {
		if c := s.Capabilities(ctx); c != nil && want(c) {
			out = append(out, s)
		}
	}
	return out
}

// sourceResources lists the sources' resources (the first to list a URI
// serves it), remembering which source holds each.
func (f *mcpFrontend) sourceResources(ctx context.Context) []*mcp.Resource {
	var out []*mcp.Resource
	uris := map[string]MCPSource{}
	for _, s := range f.sourcesWith(ctx, func(c *mcp.ServerCapabilities) bool { return c.Resources != nil }) {
		rs, _, err := s.Resources(ctx)
		if err != nil {
			f.log.Warn("an MCP source's resources could not be listed", "source", s.Name(), "err", err)
			continue
		}
		for _, r := range rs {
			if _, dup := uris[r.URI]; dup || f.resourceExists(r.URI) {
				continue
			}
			uris[r.URI] = s
			out = append(out, r)
		}
	}
	f.proxy.mu.Lock()
	f.proxy.uris = uris
	f.proxy.mu.Unlock()
	return out
}

// sourceOf finds the source that serves uri: the one that listed it, else
// one whose template it matches, else (tried in order) every source with
// resources.
func (f *mcpFrontend) sourceOf(ctx context.Context, uri string) []MCPSource {
	f.proxy.mu.Lock()
	s := f.proxy.uris[uri]
	f.proxy.mu.Unlock()
	if s != nil {
		return []MCPSource{s}
	}
	all := f.sourcesWith(ctx, func(c *mcp.ServerCapabilities) bool { return c.Resources != nil })
	for _, s := range all {
		ts, _, _ := s.ResourceTemplates(ctx)
		for _, t := range ts {
			if prefix, _, _ := strings.Cut(t.URITemplate, "{"); prefix != "" && strings.HasPrefix(uri, prefix) {
				return []MCPSource{s}
			}
		}
	}
	return all
}

// readSource reads a source's resource.
func (f *mcpFrontend) readSource(ctx context.Context, req *mcp.ReadResourceRequest) (mcp.Result, error) {
	var lastErr error = mcp.ResourceNotFoundError(req.Params.URI)
	params := *req.Params
	params.Meta = ownMeta(params.Meta)
	for _, s := range f.sourceOf(ctx, req.Params.URI) {
		res, replayed, err := s.ReadResource(ctx, &params)
		if err != nil {
			lastErr = sourceError(err, lastErr)
			continue
		}
		markReplayed(&res.Meta, replayed)
		return f.fulfilRead(ctx, req, s, res)
	}
	return nil, lastErr
}

// sourceError is the error a client is given for a source's failure: a
// JSON-RPC error it answered as it is (an unknown resource stays one).
func sourceError(err, prev error) error {
	var ce *mcpsource.CallError
	if errors.As(err, &ce) {
		return &jsonrpc.Error{Code: ce.Code, Message: ce.Message, Data: ce.Data}
	}
	if prev != nil {
		var we *jsonrpc.Error
		if errors.As(prev, &we) && we.Code == mcpCodeInvalidParams {
			// Not found, as far as toolenv can tell: the source that
			// would hold it is gone, and nothing of it is recorded.
			return &jsonrpc.Error{Code: we.Code, Data: we.Data,
				Message: we.Message + " (the MCP server that would hold it cannot be reached, and no answer of it is recorded: " + err.Error() + ")"}
		}
	}
	return err
}

// markReplayed notes in a result's _meta that it was answered from a
// recording.
func markReplayed(meta *mcp.Meta, replayed bool) {
	if !replayed {
		return
	}
	if *meta == nil {
		*meta = mcp.Meta{}
	}
	(*meta)[MCPMetaSource] = "cache"
}

// listPrompts lists the sources' prompts, a name two sources share
// prefixed with each's name (as tools are).
func (f *mcpFrontend) listPrompts(ctx context.Context) *mcp.ListPromptsResult {
	type item struct {
		src MCPSource
		p   *mcp.Prompt
	}
	var items []item
	count := map[string]int{}
	for _, s := range f.sourcesWith(ctx, func(c *mcp.ServerCapabilities) bool { return c.Prompts != nil }) {
		ps, _, err := s.Prompts(ctx)
		if err != nil {
			f.log.Warn("an MCP source's prompts could not be listed", "source", s.Name(), "err", err)
			continue
		}
		for _, p := range ps {
			items = append(items, item{s, p})
			count[p.Name]++
		}
	}
	names := map[string]mcpPromptOf{}
	out := &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{}, Cacheable: mcpCacheable(f.listTTL)}
	for _, it := range items {
		name := it.p.Name
		if count[name] > 1 {
			name = mcpPrefixed(it.src.Name(), name)
		}
		cp := *it.p
		cp.Name = name
		names[name] = mcpPromptOf{src: it.src, name: it.p.Name}
		out.Prompts = append(out.Prompts, &cp)
	}
	f.proxy.mu.Lock()
	f.proxy.names = names
	f.proxy.mu.Unlock()
	return out
}

// promptOf finds the source and own name of a prompt's MCP name.
func (f *mcpFrontend) promptOf(ctx context.Context, name string) (mcpPromptOf, bool) {
	f.proxy.mu.Lock()
	known := f.proxy.names
	f.proxy.mu.Unlock()
	if known == nil {
		f.listPrompts(ctx)
		f.proxy.mu.Lock()
		known = f.proxy.names
		f.proxy.mu.Unlock()
	}
	p, ok := known[name]
	return p, ok
}

// getPrompt gets a source's prompt.
func (f *mcpFrontend) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (mcp.Result, error) {
	p, ok := f.promptOf(ctx, req.Params.Name)
	if !ok {
		return nil, &jsonrpc.Error{Code: mcpCodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q (prompts/list names them)", req.Params.Name)}
	}
	params := *req.Params
	params.Name, params.Meta = p.name, ownMeta(params.Meta)
	res, replayed, err := p.src.GetPrompt(ctx, &params)
	if err != nil {
		return nil, sourceError(err, nil)
	}
	markReplayed(&res.Meta, replayed)
	if res.InputRequests == nil {
		return res, nil
	}
	return f.fulfilPrompt(ctx, req, p, res)
}

// complete asks the source a completion reference belongs to.
func (f *mcpFrontend) complete(ctx context.Context, req *mcp.CompleteRequest) (mcp.Result, error) {
	params := *req.Params
	params.Meta = ownMeta(params.Meta)
	ref := *params.Ref
	params.Ref = &ref
	var srcs []MCPSource
	switch ref.Type {
	case "ref/prompt":
		p, ok := f.promptOf(ctx, ref.Name)
		if !ok {
			return nil, &jsonrpc.Error{Code: mcpCodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", ref.Name)}
		}
		ref.Name = p.name
		srcs = []MCPSource{p.src}
	case "ref/resource":
		srcs = f.sourceOf(ctx, ref.URI)
	}
	var lastErr error = &jsonrpc.Error{Code: mcpCodeInvalidParams, Message: fmt.Sprintf("nothing to complete for %s %q%s", ref.Type, ref.Name, ref.URI)}
	for _, s := range srcs {
		if c := s.Capabilities(ctx); c == nil || c.Completions == nil {
			continue
		}
		res, _, err := s.Complete(ctx, &params)
		if err != nil {
			lastErr = sourceError(err, nil)
			continue
		}
		return res, nil
	}
	return nil, lastErr
}

// subscribeSource subscribes to a source's resource: the source is asked
// once, however many clients subscribe (the SDK tells each subscribed
// session of the updates).
func (f *mcpFrontend) subscribeSource(ctx context.Context, uri string) error {
	p := &f.proxy
	p.mu.Lock()
	n := p.subs[uri]
	p.mu.Unlock()
	if n == 0 {
		var lastErr error = mcp.ResourceNotFoundError(uri)
		done := false
		for _, s := range f.sourceOf(ctx, uri) {
			if c := s.Capabilities(ctx); c == nil || c.Resources == nil || !c.Resources.Subscribe {
				continue
			}
			if err := s.Subscribe(ctx, uri); err != nil {
				lastErr = sourceError(err, lastErr)
				continue
			}
			done = true
			break
		}
		if !done {
			return lastErr
		}
	}
	p.mu.Lock()
	if p.subs == nil {
		p.subs = map[string]int{}
	}
	p.subs[uri]++
	p.mu.Unlock()
	return nil
}

// unsubscribeSource ends a subscription to a source's resource, asking
// the source to stop when no client is left subscribed.
func (f *mcpFrontend) unsubscribeSource(ctx context.Context, uri string) error {
	p := &f.proxy
	p.mu.Lock()
	n := p.subs[uri]
	if n > 1 {
		p.subs[uri] = n - 1
	} else {
		delete(p.subs, uri)
	}
	p.mu.Unlock()
	if n != 1 {
		return nil
	}
	for _, s := range f.sourceOf(ctx, uri) {
		if c := s.Capabilities(ctx); c != nil && c.Resources != nil && c.Resources.Subscribe {
			if err := s.Unsubscribe(ctx, uri); err == nil {
				return nil
			}
		}
	}
	return nil
}

// syncHeaderTools registers with the go-sdk, as placeholders, the tools
// of MCP sources whose input schemas carry x-mcp-header annotations
// (MCP 2026-07-28): the SDK then checks each call's Mcp-Param-* headers
// against its arguments, as the source itself would. The placeholders
// are never listed or called: the catalog answers tools/list and
// tools/call. f.rebuildMu is held.
func (f *mcpFrontend) syncHeaderTools(cat *mcpCatalog) {
	want := map[string]*mcp.Tool{}
	for i := range cat.entries {
		e := &cat.entries[i]
		if e.coll.Kind != mcpSourceKind || e.tool.Hidden() {
			continue
		}
		raw, err := MCPInputSchema(e.tool)
		if err != nil || !bytes.Contains(raw, []byte(`"x-mcp-header"`)) {
			continue
		}
		want[e.name] = &mcp.Tool{Name: e.name, InputSchema: raw}
	}
	var gone []string
	for name := range f.headerTools {
		if want[name] == nil {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		f.srv.RemoveTools(gone...)
	}
	next := map[string]bool{}
	for name, t := range want {
		if f.headerTools[name] {
			next[name] = true
			continue
		}
		if err := addPlaceholderTool(f.srv, t); err != nil {
			f.log.Warn("an MCP source's tool has header annotations the go-sdk refuses: its Mcp-Param headers are not checked", "tool", name, "err", err)
			continue
		}
		next[name] = true
	}
	f.headerTools = next
}

// addPlaceholderTool adds t to srv with a handler that is never called,
// turning the SDK's panic on an invalid tool into an error.
func addPlaceholderTool(srv *mcp.Server, t *mcp.Tool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	srv.AddTool(t, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("not called: the catalog answers tools/call")
	})
	return nil
}

// ownMeta is a request's _meta without the protocol's own keys (the
// revision, the client's identity and capabilities of MCP 2026-07-28),
// which toolenv's connection to a source sets for itself.
func ownMeta(m mcp.Meta) mcp.Meta {
	var out mcp.Meta
	for k, v := range m {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			continue
		}
		if out == nil {
			out = mcp.Meta{}
		}
		out[k] = v
	}
	return out
}
