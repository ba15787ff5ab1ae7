package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/mcpsource"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/openai"
)

// MCPOptions configure NewMCPServer.
type MCPOptions struct {
	// Pipeline executes calls: invoke.New over Registry.
	Pipeline toolenv.Handler
	// Registry holds the collections whose tools are offered.
	Registry *invoke.Registry
	// Logger logs failures (and is the SDK's logger); nil discards.
	Logger *slog.Logger
	// Naming says how tools are named (default MCPNamesAuto).
	Naming MCPNaming
	// Name and Version identify the server to clients; default
	// "toolenv" and "dev".
	Name, Version string
	// PageSize is how many tools one tools/list page holds: 0 means
	// DefaultMCPPageSize, a negative size all of them in one page (for
	// clients that do not follow nextCursor).
	PageSize int
	// SearchAbove is the number of listed tools above which the server
	// also offers the search_tools tool, so that a client can find tools
	// among tens of thousands without listing them: 0 means
	// DefaultMCPSearchAbove, a negative number never.
	SearchAbove int
	// Search answers search_tools; nil means an index of the listed
	// tools built in the background (NewIndexSearch with its defaults).
	Search ToolSearch
	// ListTTL is how long a client may cache a list or read result (the
	// ttlMs of MCP 2026-07-28 results; their cacheScope is "public":
	// every client sees the same lists). 0, the default, marks them
	// stale at once: a collection may be hot-loaded at any moment, and a
	// client that caches without subscribing to list changes would not
	// see it. Set it when the served collections do not change.
	ListTTL time.Duration
	// Sources are the MCP servers whose tools the registry holds (kind
	// mcp collections) and whose resources, prompts and completions the
	// server offers beside its own; what a source sends about a call
	// (sampling, elicitation, roots, progress, logs, input requests) is
	// passed on to the client that made it. See MCPSource.
	Sources []MCPSource
	// Sessions checks the task sessions a tools/call names over HTTP
	// (_meta "toolenv/session" or X-Toolenv-Session): the server's
	// SessionIssuer. Nil: such names are scoped to the MCP session.
	Sessions SessionIssuer
	// Arguments, shared with the HTTP handler (MCPHTTPOptions.Arguments),
	// hands the server the large arguments the handler read ahead of the
	// SDK; nil: none are.
	Arguments *MCPArguments
}

// mcpCacheable is the cache hint of every list and read result: public
// (every client sees the same lists), fresh for ttl.
func mcpCacheable(ttl time.Duration) mcp.Cacheable {
	return mcp.Cacheable{TTLMs: int(max(ttl, 0) / time.Millisecond), CacheScope: "public"}
}

// DefaultMCPSearchAbove is the number of listed tools above which
// search_tools is offered unless MCPOptions.SearchAbove says otherwise.
const DefaultMCPSearchAbove = 1000

// NewMCPServer returns an MCP server offering every tool of the
// registry's collections (hidden tools are callable but not listed). A tool's input schema is its Input, its
// description openai.Description(tool) (what function-calling models are
// shown), its name as MCPToolNames says. A tools/call becomes a
// toolenv.Call (Frontend "mcp", Session the MCP session; see
// MCPMetaSession) invoked through the pipeline, and its Result is
// converted by MCPResult: a failing tool is an isError result, never a
// protocol error. A tool may also be called by its ID
// ("collection/name") or prefixed name ("collection__name"); an unknown
// name is a JSON-RPC invalid-params error that suggests the closest name.
//
// tools/list pages by tool name (MCPOptions.PageSize per page, the next
// page's cursor in nextCursor). Above MCPOptions.SearchAbove listed tools
// the list also holds search_tools, which finds tools by what they do.
// When a collection of the registry is replaced (a new version hot-loaded
// with invoke.Registry.Replace), the server offers the new tools at once
// and sends every session notifications/tools/list_changed.
//
// Serve it with NewMCPHandler (streamable HTTP) or its Run method with
// any SDK transport (stdio).
func NewMCPServer(opts MCPOptions) (*mcp.Server, error) {
	if opts.Pipeline == nil || opts.Registry == nil {
		return nil, errors.New("mcp server: Pipeline and Registry are required")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Name == "" {
		opts.Name = "toolenv"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	switch {
	case opts.PageSize == 0:
		opts.PageSize = DefaultMCPPageSize
	case opts.PageSize < 0:
		opts.PageSize = 0 // one page
	}
	switch {
	case opts.SearchAbove == 0:
		opts.SearchAbove = DefaultMCPSearchAbove
	case opts.SearchAbove < 0:
		opts.SearchAbove = 0 // never
	}
	var idPre [4]byte
	_, _ = rand.Read(idPre[:])
	f := &mcpFrontend{
		pipeline: opts.Pipeline, log: log, registry: opts.Registry, naming: opts.Naming,
		pageSize: opts.PageSize, searchAbove: opts.SearchAbove, search: opts.Search, listTTL: opts.ListTTL,
		idPre: "mcp-" + hex.EncodeToString(idPre[:]) + "-", arguments: opts.Arguments,
	}
	if f.search == nil && f.searchAbove > 0 {
		own := NewIndexSearch(IndexSearchOptions{Logger: log})
		f.search = own
		runtime.AddCleanup(f, func(s *IndexSearch) { s.Close() }, own)
	}
	f.sessions.issuer = opts.Sessions
	f.arguments.resolveWith(f.argsSchema)
	f.setupProxy(opts.Sources)
	f.srv = mcp.NewServer(&mcp.Implementation{Name: opts.Name, Title: "toolenv virtual API server", Version: opts.Version}, &mcp.ServerOptions{
		Logger:             sdkLogger(log),
		SubscribeHandler:   f.subscribe,
		UnsubscribeHandler: f.unsubscribe,
		// Tools are listed and called through f.route, from the catalog;
		// the list changes when a collection is hot-loaded, and so do
		// the instructions f.route puts in initialize and discover
		// results.
		Capabilities: f.capabilities(),
		// Every client sees the same lists (the catalog, the
		// collections' documentation).
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			*c = mcpCacheable(opts.ListTTL)
		},
	})
	// The last middleware added is the outermost: protocol sees every
	// request first and every answer last.
	f.srv.AddReceivingMiddleware(f.proxied)
	f.srv.AddReceivingMiddleware(f.route)
	f.srv.AddReceivingMiddleware(f.protocol)
	// The first catalog is built in the background: at 50,000 tools it
	// takes a fraction of a second that the server's start need not
	// wait for (the rest of the start-up runs on another core
	// meanwhile); a request that needs it before then waits for it.
	f.built = make(chan struct{})
	go func() {
		defer close(f.built)
		f.rebuild()
	}()
	f.setupResources()
	followRegistry(f, opts.Registry, func(f *mcpFrontend, name string) {
		f.rebuild()
		f.notifyListChanged()
		f.syncResources()
		f.resourcesChanged(name)
	})
	return f.srv, nil
}

// mcpFrontend adapts tools/list and tools/call requests onto the
// registry and the pipeline.
type mcpFrontend struct {
	pipeline    toolenv.Handler
	log         *slog.Logger
	registry    *invoke.Registry
	naming      MCPNaming
	pageSize    int // 0: one page
	listTTL     time.Duration
	searchAbove int // 0: no search_tools
	search      ToolSearch
	srv         *mcp.Server
	catalog     atomic.Pointer[mcpCatalog]
	built       chan struct{} // closed once the first catalog is in catalog
	rebuildMu   sync.Mutex    // one rebuild at a time: the last one reads the registry last
	sessions    mcpSessions
	resources   mcpResources
	logLevels   mcpLogLevels
	reqID       atomic.Uint64
	idPre       string
	proxy       mcpProxy        // the sources' resources, prompts, completions (mcp_proxy.go)
	headerTools map[string]bool // placeholders for x-mcp-header checks (syncHeaderTools)
	parks       mcpParks        // calls waiting for a sessionless client's answer (mcp_park.go)
	arguments   *MCPArguments   // large arguments read ahead of the SDK
}

// current returns the catalog, waiting for the first one to be built.
func (f *mcpFrontend) current() *mcpCatalog {
	if cat := f.catalog.Load(); cat != nil {
		return cat
	}
	<-f.built
	return f.catalog.Load()
}

// rebuild makes the catalog of the registry's collections as they are
// now and installs it.
func (f *mcpFrontend) rebuild() *mcpCatalog {
	f.rebuildMu.Lock()
	defer f.rebuildMu.Unlock()
	cat := newMCPCatalog(f.registry.Collections(), f.naming, f.searchAbove)
	cat.log = f.log
	if cat.search != nil {
		f.search.Update(cat.tools())
	}
	f.catalog.Store(cat)
	f.syncHeaderTools(cat)
	return cat
}

// notifyListChanged sends every session notifications/tools/list_changed
// through the SDK, which knows which sessions want it (those of the
// current protocol only when subscribed): adding and removing a
// placeholder tool is the SDK's one way to announce a change of a tool
// list it does not hold. The placeholder is never listed or called (the
// catalog answers tools/list and tools/call).
func (f *mcpFrontend) notifyListChanged() {
	const placeholder = "toolenv_tools_changed"
	f.srv.AddTool(&mcp.Tool{Name: placeholder, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, errors.New("not a tool")
		})
	f.srv.RemoveTools(placeholder)
}

// MCPInputSchema is t's input schema as MCP lists it: an object schema
// (MCP requires one), empty when t has none.
func MCPInputSchema(t *toolenv.Tool) (json.RawMessage, error) {
	in := t.Input
	if in == nil {
		in = toolenv.ObjectSchema()
	} else if in.Type == "" {
		cp := *in
		cp.Type = "object"
		in = &cp
	}
	raw, err := in.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	return raw, nil
}

// mcpTool is the MCP definition of one tool, rendered when a tools/list
// page holds it.
func mcpTool(e *mcpEntry) (*mcp.Tool, error) {
	raw, err := MCPInputSchema(e.tool)
	if err != nil {
		return nil, err
	}
	if e.coll.Policy.Sessions {
		if raw, err = withSessionArg(raw, mcpSessionArg(e.tool)); err != nil {
			return nil, err
		}
	}
	t := &mcp.Tool{
		Name:        e.name,
		Title:       e.tool.Title,
		Description: openai.Description(e.tool),
		InputSchema: json.RawMessage(raw),
		Meta:        mcp.Meta{MCPMetaTool: e.tool.ID},
	}
	if e.coll.Kind == mcpSourceKind {
		mcpSourceTool(t, e.tool)
	}
	if b := e.tool.Binding; b != nil && e.coll.Kind != "toolbench" {
		// Reading is safe to retry; ToolBench's documented methods
		// are RapidAPI's and mean little.
		switch strings.ToUpper(b.Method) {
		case http.MethodGet, http.MethodHead:
			t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
		}
	}
	if e.coll.Kind != mcpSourceKind {
		StateAnnotations(t, e.tool)
	}
	return t, nil
}

// argsSchema gives the input schema of the tool named name when its
// calls' arguments are parsed by callResult (see MCPArguments.schema).
func (f *mcpFrontend) argsSchema(name string) (*toolenv.Schema, bool) {
	cat := f.catalog.Load()
	if cat == nil {
		return nil, false
	}
	e := cat.resolve(name)
	if e == nil || e == cat.search || e.coll.Kind == mcpSourceKind {
		return nil, false
	}
	return e.tool.Input, true
}

// call runs one tools/call through the pipeline.
func (f *mcpFrontend) call(ctx context.Context, req *mcp.CallToolRequest, cat *mcpCatalog, e *mcpEntry) *mcp.CallToolResult {
	out, _ := f.callResult(ctx, req, cat, e)
	return out
}

// callResult is call, with the pipeline's result (nil when the call
// never reached it).
func (f *mcpFrontend) callResult(ctx context.Context, req *mcp.CallToolRequest, cat *mcpCatalog, e *mcpEntry) (*mcp.CallToolResult, *toolenv.Result) {
	raw := req.Params.Arguments
	kept, owned := f.arguments.take(raw)
	var parsed *toolenv.ParsedArgs
	var res *toolenv.Result
	switch {
	case owned && kept.parsed != nil && kept.schema == e.tool.Input:
		parsed = kept.parsed // parsed as the body was read, for this tool
	case owned:
		parsed, res = mcpParsedArgs(kept.text, e.tool.Input, true) // the body's own span, which no one else holds
	default:
		parsed, res = mcpParsedArgs(raw, e.tool.Input, false)
	}
	var args map[string]any
	if res == nil {
		args = map[string]any{} // absent or null: no arguments
		if parsed != nil {
			args = parsed.Args
		}
	}
	sc := mcpSessionCall{sessions: e.coll.Policy.Sessions, setup: e.coll.Policy.Sessions && e.tool.Hidden(), arg: mcpSessionArg(e.tool)}
	if res == nil && sc.sessions {
		sc.handle, res = takeSessionArg(args, mcpSessionArg(e.tool))
	}
	var session, minted string
	if res == nil {
		var release func()
		session, minted, release, res = f.sessions.sessionOf(ctx, req, sc)
		if res == nil {
			defer release()
		}
	}
	if res == nil {
		call := &toolenv.Call{
			Tool: e.tool, Collection: e.coll, Args: args,
			Session: session, RequestID: f.idPre + strconv.FormatUint(f.reqID.Add(1), 36), Frontend: "mcp",
		}
		if !sc.sessions && parsed != nil {
			call.ArgsFromParse(parsed) // the cache key from the arguments' parse
		}
		if fb, ok := req.Params.Meta[MCPMetaFeedback].(string); ok {
			call.Options.Feedback = fb
		}
		if nc, ok := req.Params.Meta[MCPMetaNoCache].(bool); ok {
			call.Options.NoCache = nc
		}
		if mcpsource.ExchangeFrom(ctx).Asked() {
			// It answers the source's questions: no recording stands
			// in for the source.
			call.Options.NoCache = true
		}
		logging := f.logging(req)
		if logging {
			f.logCall(ctx, req.Session, "debug", call, fmt.Sprintf("tools/call %s: calling %s", req.Params.Name, e.tool.ID))
		}
		res = f.pipeline.Invoke(ctx, call)
		if !res.OK() && len(cat.renamed[e.coll]) > 0 {
			cp := *res
			cp.Error, cp.Hint = cat.mcpRename(e.coll, res.Error), cat.mcpRename(e.coll, res.Hint)
			res = &cp
		}
		if logging {
			f.logResult(ctx, req.Session, call, res)
		}
	}
	var out *mcp.CallToolResult
	passed := false
	if e.coll.Kind == mcpSourceKind {
		// An MCP server's own result, recorded whole: passed through.
		out, passed = mcpSourceResult(res)
	}
	o := cat.output(e)
	switch {
	case !passed:
		out = MCPResult(res)
		if o != nil && res.OK() {
			conform(out, o, res, res.Body)
		}
	case o != nil && !out.IsError && out.InputRequests == nil:
		conform(out, o, res, structuredBytes(out))
	}
	out.Meta[MCPMetaTool] = e.tool.ID
	if session != "" {
		out.Meta[MCPMetaSession] = session
	}
	if minted != "" && !out.IsError {
		// The handle of the session made for this call, where a model
		// reads it too.
		out.Content = append(out.Content, &mcp.TextContent{Text: fmt.Sprintf(
			"session: %s (pass it as the %q argument of this task's later calls)", minted, mcpSessionArg(e.tool))})
	}
	return out, res
}

// mcpInstructions tells clients what the server holds.
func mcpInstructions(colls []*toolenv.Collection, tools int, search *mcpEntry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "toolenv serves %d documented APIs as tools", tools)
	if len(colls) > 0 {
		b.WriteString(" from ")
		for i, c := range colls {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s (%d)", c.Name, len(c.Listed()))
		}
	}
	b.WriteString(". ")
	if search != nil {
		fmt.Fprintf(&b, "tools/list pages them; %s finds tools by what they do, without listing them all. ", search.name)
	}
	b.WriteString("A call that fails returns an error result with a hint and each argument's problem; fix the call and retry. " +
		"Each result's _meta says where the answer came from (toolenv/source) and its status (toolenv/status).")
	return b.String()
}

// sdkLogger is the SDK's logger: its session comings and goings are
// logged at debug level rather than info, its warnings and errors as
// they are.
func sdkLogger(log *slog.Logger) *slog.Logger {
	return slog.New(demoteInfo{log.Handler()})
}

type demoteInfo struct{ slog.Handler }

func demote(l slog.Level) slog.Level {
	if l == slog.LevelInfo {
		return slog.LevelDebug
	}
	return l
}

func (h demoteInfo) Enabled(ctx context.Context, l slog.Level) bool {
	return h.Handler.Enabled(ctx, demote(l))
}

func (h demoteInfo) Handle(ctx context.Context, r slog.Record) error {
	r.Level = demote(r.Level)
	return h.Handler.Handle(ctx, r)
}

func (h demoteInfo) WithAttrs(attrs []slog.Attr) slog.Handler {
	return demoteInfo{h.Handler.WithAttrs(attrs)}
}

func (h demoteInfo) WithGroup(name string) slog.Handler { return demoteInfo{h.Handler.WithGroup(name)} }

// MCPHTTPOptions configure NewMCPHandler.
type MCPHTTPOptions struct {
	// Logger logs transport failures; nil discards.
	Logger *slog.Logger
	// SessionTimeout closes sessions idle this long; 0 means 30 minutes,
	// negative never.
	SessionTimeout time.Duration
	// MaxSessions caps the live sessions (default 4096; negative: no
	// cap): opening one more closes the session idle longest that has no
	// request in flight, or, when all have one, is refused with 503.
	MaxSessions int
	// OnSessionEnd, when set, is called with the id of every session the
	// cap closes or the handler finds closed (idle, DELETE): the
	// toolenv session of that id ends with it (DropSessions).
	OnSessionEnd func(id string)
	// OnEvict is told of every n sessions the cap closes
	// (Metrics.SessionsEvicted); evictions are also logged to Logger,
	// rate-limited (session.Evictions).
	OnEvict func(n int)
	// MaxSessionsPerClient caps the live sessions of one client (its
	// token, or its address without one: guard.ClientKey; default a
	// quarter of MaxSessions; negative: no cap): opening one more closes
	// that client's session idle longest that has no request in flight,
	// or, when all have one, is refused with 429.
	MaxSessionsPerClient int
	// MaxStreamsPerClient caps the event streams (GET /mcp) one client
	// holds open (default 64; negative: no cap); one more is refused
	// with 429.
	MaxStreamsPerClient int
	// StreamIdle ends an event stream that sent nothing this long
	// (default 5 min; negative: never); StreamMaxLifetime one open this
	// long (default 1 h; negative: never). The client opens another.
	StreamIdle, StreamMaxLifetime time.Duration
	// MaxBodyBytes bounds a POST body; 0 means the SDK's 4 MiB.
	MaxBodyBytes int64
	// Arguments, shared with the server (MCPOptions.Arguments), keeps
	// the large arguments of tools/call requests, read ahead of the SDK
	// (see MCPArguments); nil: the SDK reads them.
	Arguments *MCPArguments
	// GetServer, when set, gives the server of each new session (and
	// of the protocol-version check of every request) instead of srv:
	// one server per session, as RL episodes over MCP have. No cap is
	// kept then (MaxSessions is ignored): the caller keeps its own.
	GetServer func(*http.Request) *mcp.Server
}

// NewMCPHandler serves srv over MCP's streamable HTTP transport (mount it
// at /mcp), in every protocol revision the go-sdk speaks, each client
// getting the one it asks for:
//
//   - up to 2025-11-25, every client session is an MCP session with its
//     own Mcp-Session-Id (opened by initialize), which becomes the toolenv
//     session of its calls; DELETE with that id ends it;
//   - the sessionless 2026-07-28 revision (a request carrying
//     Mcp-Protocol-Version 2026-07-28 or later, or the protocol version in
//     its _meta, without Mcp-Session-Id) is served statelessly: no
//     initialize, every request on its own, server/discover listing every
//     revision. Cross-call state (SLOT/SEL task sessions) travels in a
//     handle the server mints and the client passes back as a tool
//     argument (see MCPSessionArg).
//
// Every answer is JSON-RPC: a body that is not JSON is answered with
// -32700, a message that is not JSON-RPC with -32600, a method MCP does
// not have with -32601, a request other than initialize without
// Mcp-Session-Id with HTTP 400 and -32600, and the transport's own
// refusals (unknown session 404, 405, 406, 503 at the session cap) with
// a JSON-RPC error body too (-32600 for a 4xx, -32603 for a 5xx).
func NewMCPHandler(srv *mcp.Server, opts MCPHTTPOptions) http.Handler {
	timeout := opts.SessionTimeout
	switch {
	case timeout == 0:
		timeout = 30 * time.Minute
	case timeout < 0:
		timeout = 0
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = mcp.DefaultMaxRequestBodyBytes
	}
	get := func(*http.Request) *mcp.Server { return srv }
	if opts.GetServer != nil {
		get, opts.MaxSessions = opts.GetServer, -1
	}
	var h http.Handler = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		Logger:              sdkLogger(log),
		SessionTimeout:      timeout,
		MaxRequestBodyBytes: opts.MaxBodyBytes,
	})
	h = newMCPCap(h, srv, opts.capOptions(log))
	// The sessionless protocol (2026-07-28) is the SDK's stateless
	// handler over the same server: each request is its own ephemeral
	// session, and its answer goes back on its own POST.
	sessionless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		Logger:                       sdkLogger(log),
		Stateless:                    true,
		MaxRequestBodyBytes:          opts.MaxBodyBytes,
		PropagateRequestCancellation: true,
	})
	return &mcpHTTP{next: h, sessionless: sessionless, max: opts.MaxBodyBytes, log: log, args: opts.Arguments}
}

// capOptions are the caps opts ask for, defaults applied.
func (opts MCPHTTPOptions) capOptions(log *slog.Logger) mcpCapOptions {
	o := mcpCapOptions{max: capOrDefault(opts.MaxSessions, 4096), onEnd: opts.OnSessionEnd, log: log, onEvict: opts.OnEvict,
		streams: capOrDefault(opts.MaxStreamsPerClient, 64), streamIdle: capOrDefault(opts.StreamIdle, 5*time.Minute),
		streamMax: capOrDefault(opts.StreamMaxLifetime, time.Hour)}
	o.perClient = capOrDefault(opts.MaxSessionsPerClient, o.max/4)
	return o
}

// capOrDefault is a cap as options give it: def for 0, none (0) for a
// negative one.
func capOrDefault[T int | time.Duration](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// StateAnnotations sets the annotations a tool's state meta says (the
// write tools of writable SQL collections, their reads): a write is not
// read-only, destructive unless it only adds (toolenv.MetaDestructive),
// idempotent when toolenv.MetaIdempotent says so; a read is read-only
// and idempotent.
func StateAnnotations(t *mcp.Tool, tool *toolenv.Tool) {
	switch tool.State() {
	case toolenv.StateWrite:
		destructive := tool.Meta[toolenv.MetaDestructive] != "false"
		t.Annotations = &mcp.ToolAnnotations{DestructiveHint: &destructive, IdempotentHint: tool.Meta[toolenv.MetaIdempotent] == "true"}
	case toolenv.StateRead:
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	}
}
