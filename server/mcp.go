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
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/openai"
	"github.com/toolenv/toolenv/validate"
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
	// PageSize is how many tools one tools/list page holds; 0 means all
	// of them in one page (some clients do not follow nextCursor).
	PageSize int
}

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
	colls := opts.Registry.Collections()
	entries := mcpEntries(colls, opts.Naming)
	listed := 0
	for _, e := range entries {
		if !e.tool.Hidden() {
			listed++
		}
	}
	pageSize := opts.PageSize
	if pageSize <= 0 {
		pageSize = max(listed, 1)
	}
	var idPre [4]byte
	_, _ = rand.Read(idPre[:])
	f := &mcpFrontend{
		pipeline: opts.Pipeline, log: log,
		byName: make(map[string]*mcpEntry, len(entries)),
		alias:  make(map[string]string, 2*len(entries)),
		idPre:  "mcp-" + hex.EncodeToString(idPre[:]) + "-",
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: opts.Name, Title: "toolenv virtual API server", Version: opts.Version}, &mcp.ServerOptions{
		Logger:       sdkLogger(log),
		Instructions: mcpInstructions(colls, listed),
		PageSize:     pageSize,
		// The tool list never changes; no logging capability either.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	for i := range entries {
		e := &entries[i]
		tool, err := mcpTool(e)
		if err != nil {
			return nil, fmt.Errorf("mcp server: tool %s: %w", e.tool.ID, err)
		}
		f.byName[e.name] = e
		f.alias[e.tool.ID] = e.name
		f.alias[mcpFit(mcpSanitize(e.coll.Name)+mcpNameSep+mcpSanitize(e.tool.Name))] = e.name
		if e.tool.Hidden() {
			continue // callable (resolveNames answers it), never listed
		}
		srv.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return f.call(ctx, req, e), nil
		})
	}
	for a, n := range f.alias { // an alias never hides a real name
		if _, real := f.byName[a]; real && a != n {
			delete(f.alias, a)
		}
	}
	srv.AddReceivingMiddleware(f.resolveNames)
	return srv, nil
}

// mcpFrontend adapts tools/call requests onto the pipeline.
type mcpFrontend struct {
	pipeline toolenv.Handler
	log      *slog.Logger
	byName   map[string]*mcpEntry
	alias    map[string]string // tool ID or prefixed name → MCP name
	sessions mcpSessions
	reqID    atomic.Uint64
	idPre    string
}

// mcpTool is the MCP definition of one tool. The input schema is
// marshalled once here, so tools/list copies bytes instead of walking
// schemas.
func mcpTool(e *mcpEntry) (*mcp.Tool, error) {
	in := e.tool.Input
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
	t := &mcp.Tool{
		Name:        e.name,
		Title:       e.tool.Title,
		Description: openai.Description(e.tool),
		InputSchema: json.RawMessage(raw),
		Meta:        mcp.Meta{MCPMetaTool: e.tool.ID},
	}
	if b := e.tool.Binding; b != nil && e.coll.Kind != "toolbench" {
		// Reading is safe to retry; ToolBench's documented methods
		// are RapidAPI's and mean little.
		switch strings.ToUpper(b.Method) {
		case http.MethodGet, http.MethodHead:
			t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
		}
	}
	return t, nil
}

// call runs one tools/call through the pipeline.
func (f *mcpFrontend) call(ctx context.Context, req *mcp.CallToolRequest, e *mcpEntry) *mcp.CallToolResult {
	session := f.sessions.sessionOf(req)
	args, res := mcpArgs(req.Params.Arguments)
	if res == nil {
		call := &toolenv.Call{
			Tool: e.tool, Collection: e.coll, Args: args,
			Session: session, RequestID: f.idPre + strconv.FormatUint(f.reqID.Add(1), 36), Frontend: "mcp",
		}
		if fb, ok := req.Params.Meta[MCPMetaFeedback].(string); ok {
			call.Options.Feedback = fb
		}
		if nc, ok := req.Params.Meta[MCPMetaNoCache].(bool); ok {
			call.Options.NoCache = nc
		}
		res = f.pipeline.Invoke(ctx, call)
	}
	out := MCPResult(res)
	out.Meta[MCPMetaTool] = e.tool.ID
	if session != "" {
		out.Meta[MCPMetaSession] = session
	}
	return out
}

// resolveNames is receiving middleware: it maps a tools/call naming a
// tool by its ID or prefixed name to the tool's MCP name, answers calls
// to hidden tools (which the SDK does not know, so that tools/list leaves
// them out), and answers an unknown name with an invalid-params error
// that suggests the closest listed one (the SDK's own error names no
// alternative).
func (f *mcpFrontend) resolveNames(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		ctr, ok := req.(*mcp.CallToolRequest)
		if !ok || ctr.Params == nil {
			return next(ctx, method, req)
		}
		name := ctr.Params.Name
		if real, ok := f.alias[name]; ok {
			ctr.Params.Name = real
		}
		e, known := f.byName[ctr.Params.Name]
		switch {
		case !known:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: f.unknownTool(name)}
		case e.tool.Hidden():
			return f.call(ctx, ctr, e), nil
		}
		return next(ctx, method, req)
	}
}

func (f *mcpFrontend) unknownTool(name string) string {
	names := make([]string, 0, len(f.byName))
	for n, e := range f.byName {
		if !e.tool.Hidden() {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	msg := fmt.Sprintf("unknown tool %q", name)
	if s := validate.Suggest(name, names); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg + fmt.Sprintf(" (this server has %d tools; tools/list names them)", len(names))
}

// mcpInstructions tells clients what the server holds.
func mcpInstructions(colls []*toolenv.Collection, tools int) string {
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
	b.WriteString(". A call that fails returns an error result with a hint and each argument's problem; fix the call and retry. " +
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
}

// NewMCPHandler serves srv over MCP's streamable HTTP transport (mount it
// at /mcp). Every client session is an MCP session with its own
// Mcp-Session-Id, which becomes the toolenv session of its calls.
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
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Logger:         sdkLogger(log),
		SessionTimeout: timeout,
	})
}
