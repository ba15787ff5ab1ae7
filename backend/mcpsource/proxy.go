package mcpsource

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Peer is the client of toolenv a call to an MCP server is made for (a
// client of toolenv's own MCP front-end): what the server sends about
// the call — a request for sampling, elicitation or the client's roots,
// progress, log messages — is passed on to it. Its methods send to that
// client in the context of its own request.
type Peer interface {
	// Capabilities are what the client can be asked directly (sampling,
	// elicitation, roots).
	Capabilities() *mcp.ClientCapabilities
	CreateMessage(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error)
	Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	ListRoots(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error)
	// Progress and Log send a notification; progress carries the
	// client's own token.
	Progress(ctx context.Context, p *mcp.ProgressNotificationParams)
	Log(ctx context.Context, p *mcp.LoggingMessageParams)
}

// Exchange is what one call brings for the server beyond its tool and
// arguments, carried through the pipeline in the call's context
// (WithExchange): the client to pass the server's requests and
// notifications to, and its answers to an earlier input-required result
// (MCP 2026-07-28's multi-round-trip requests).
type Exchange struct {
	// Peer receives what the server sends about the call; nil: nobody
	// (the server's requests are refused, its notifications dropped).
	Peer Peer
	// Declared are the capabilities the client declared, passed on to a
	// server of MCP 2026-07-28 (whose requests carry them), which asks
	// for input by input-required results that the client answers (nil:
	// Peer's). A client may declare what toolenv cannot ask it directly
	// (a client without a session): Peer's capabilities say what it can.
	Declared *mcp.ClientCapabilities
	// Progress is the client's progress token (nil: none): the server's
	// progress notifications for the call reach Peer with it.
	Progress any
	// LogLevel is the least level of the server's log messages Peer
	// wants ("": none).
	LogLevel mcp.LoggingLevel
	// InputResponses and RequestState answer an input-required result of
	// an earlier call (the client's retry).
	InputResponses mcp.InputResponseMap
	RequestState   string

	asked atomic.Bool
}

// Asked reports whether the server asked the peer something during the
// call (sampling, elicitation, roots), or the call answered an earlier
// input request: its answer then depends on the client's answers and is
// not one to record.
func (x *Exchange) Asked() bool {
	return x != nil && (x.asked.Load() || x.InputResponses != nil || x.RequestState != "")
}

// exclusive reports whether the call must hold the server alone: its
// peer takes the server's requests (which a server of a revision before
// 2026-07-28 sends; a later one asks by input-required results, which
// are the call's own) or log messages, which MCP does not tie to the call
// they are about (progress carries its token).
func (x *Exchange) exclusive(requests bool) bool {
	if x == nil || x.Peer == nil {
		return false
	}
	if x.LogLevel != "" {
		return true
	}
	caps := x.Peer.Capabilities()
	return requests && caps != nil && (caps.Sampling != nil || caps.Elicitation != nil || caps.RootsV2 != nil)
}

type exchangeKey struct{}

// WithExchange returns ctx carrying x to the MCP server a call reaches.
func WithExchange(ctx context.Context, x *Exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, x)
}

// ExchangeFrom returns the exchange ctx carries, or nil.
func ExchangeFrom(ctx context.Context) *Exchange {
	x, _ := ctx.Value(exchangeKey{}).(*Exchange)
	return x
}

// forwarding routes what a server sends a client to the peer of the call
// it is about. MCP ties a server's requests (sampling, elicitation, roots)
// and log messages to no call, so a call whose peer takes them holds the
// server alone (gate, exclusively) and what arrives meanwhile is its; the
// other calls share the server (their peers take nothing but progress,
// which carries its token).
type forwarding struct {
	gate  sync.RWMutex
	notes notes // notifications read and handled (notes.go)

	mu      sync.Mutex
	current *Exchange            // the call holding gate exclusively
	tokens  map[string]*Exchange // progress token → its call
	seq     atomic.Uint64

	// The callbacks (Client.OnResourceUpdated, OnListChanged): a proxy
	// sets them once the server runs, while its notifications are read.
	onResourceUpdated atomic.Pointer[func(uri string)]
	onListChanged     atomic.Pointer[func(what string)]
}

// listChanged tells the OnListChanged callback, if any, that what changed.
func (f *forwarding) listChanged(what string) {
	if fn := f.onListChanged.Load(); fn != nil {
		(*fn)(what)
	}
}

// enter holds the server for x's call (requests: the server may send
// requests); the returned func releases it.
func (f *forwarding) enter(x *Exchange, requests bool) func() {
	if !x.exclusive(requests) {
		f.gate.RLock()
		return f.gate.RUnlock
	}
	f.gate.Lock()
	f.mu.Lock()
	f.current = x
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		f.current = nil
		f.mu.Unlock()
		f.gate.Unlock()
	}
}

// peer is the exchange of the call holding the server alone, if any.
func (f *forwarding) peer() *Exchange {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.current
}

// token registers x's progress under a token of its own, which the call
// sends the server; the returned func forgets it.
func (f *forwarding) token(x *Exchange) (string, func()) {
	tok := "toolenv-" + strconv.FormatUint(f.seq.Add(1), 36)
	f.mu.Lock()
	if f.tokens == nil {
		f.tokens = map[string]*Exchange{}
	}
	f.tokens[tok] = x
	f.mu.Unlock()
	return tok, func() {
		f.mu.Lock()
		delete(f.tokens, tok)
		f.mu.Unlock()
	}
}

// errNoPeer answers a server's request that no client of toolenv can
// take.
func errNoPeer(what string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
		Message: fmt.Sprintf("toolenv's client of this call does not support %s, or the request is about no call of a client of toolenv that does", what)}
}

// clientOptions are the options of the go-sdk client that connects to the
// server: toolenv declares sampling, elicitation and roots (it passes
// them on to its own clients that support them), follows list changes,
// takes progress and log messages, and leaves input-required results to
// its caller (it passes them on too).
func (c *Client) clientOptions() *mcp.ClientOptions {
	f := &c.fwd
	opts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{
			RootsV2:     &mcp.RootCapabilities{},
			Sampling:    &mcp.SamplingCapabilities{Tools: &mcp.SamplingToolsCapabilities{}},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case c.relist <- struct{}{}:
			default:
			}
		},
		CreateMessageWithToolsHandler: func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			x := f.peer()
			if x == nil || x.Peer.Capabilities().Sampling == nil {
				return nil, errNoPeer("sampling")
			}
			x.asked.Store(true)
			return x.Peer.CreateMessage(ctx, req.Params)
		},
		// (requestsMiddleware passes elicitation/create on before the
		// go-sdk checks its schema: the client of the call does.)
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errNoPeer("elicitation")
		},
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			tok := fmt.Sprint(req.Params.ProgressToken)
			f.mu.Lock()
			x := f.tokens[tok]
			f.mu.Unlock()
			if x == nil || x.Peer == nil || x.Progress == nil {
				return
			}
			p := *req.Params
			p.ProgressToken = x.Progress
			x.Peer.Progress(ctx, &p)
		},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			if x := f.peer(); x != nil && x.LogLevel != "" && levelAtLeast(req.Params.Level, x.LogLevel) {
				x.Peer.Log(ctx, req.Params)
			}
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			if fn := f.onResourceUpdated.Load(); fn != nil && req.Params != nil {
				(*fn)(req.Params.URI)
			}
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			f.listChanged("resources")
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			f.listChanged("prompts")
		},
	}
	return opts
}

// requestsMiddleware passes the server's requests for the client's roots
// and for elicitation on to the peer holding the server, as they are
// (its client checks an elicitation's schema; the go-sdk's client would
// refuse some that MCP allows). roots/list is answered with no roots when
// no peer can tell.
func (c *Client) requestsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			defer c.fwd.notes.handle()
		}
		switch method {
		case "roots/list":
			x := c.fwd.peer()
			if x == nil || x.Peer.Capabilities().RootsV2 == nil {
				return &mcp.ListRootsResult{Roots: []*mcp.Root{}}, nil
			}
			x.asked.Store(true)
			p, _ := req.GetParams().(*mcp.ListRootsParams)
			return x.Peer.ListRoots(ctx, p)
		case "elicitation/create":
			x := c.fwd.peer()
			p, _ := req.GetParams().(*mcp.ElicitParams)
			if x == nil || x.Peer.Capabilities().Elicitation == nil || p == nil {
				return nil, errNoPeer("elicitation")
			}
			x.asked.Store(true)
			return x.Peer.Elicit(ctx, p)
		}
		return next(ctx, method, req)
	}
}

// levelOrder ranks MCP's log levels.
var levelOrder = map[mcp.LoggingLevel]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

func levelAtLeast(l, min mcp.LoggingLevel) bool {
	a, ok1 := levelOrder[l]
	b, ok2 := levelOrder[min]
	return !ok1 || !ok2 || a >= b
}

// OnResourceUpdated sets the function told of every resource the server
// says changed (notifications/resources/updated), and OnListChanged the
// one told when its resource or prompt list changed ("resources",
// "prompts"), or its tool list was said to change and reads the same
// ("tools"; a tool list that changes goes to Options.OnToolsChanged).
// They may be set while the server runs; a notification read before
// tells no one.
func (c *Client) OnResourceUpdated(fn func(uri string)) { c.fwd.onResourceUpdated.Store(&fn) }

// OnListChanged: see OnResourceUpdated.
func (c *Client) OnListChanged(fn func(what string)) { c.fwd.onListChanged.Store(&fn) }

// callParams are the params of a call for x: its input responses and
// request state, a progress token of the call's own, the client's
// capabilities (MCP 2026-07-28 sends them with each request) and log
// level. done forgets the token.
func (c *Client) callParams(name string, args map[string]any, x *Exchange) (p *mcp.CallToolParams, done func()) {
	p = &mcp.CallToolParams{Name: name, Arguments: args}
	done = func() {}
	if x == nil {
		return p, done
	}
	p.InputResponses, p.RequestState = x.InputResponses, x.RequestState
	meta := mcp.Meta{}
	if x.Peer != nil && x.Progress != nil {
		var tok string
		tok, done = c.fwd.token(x)
		meta["progressToken"] = tok
	}
	declared := x.Declared
	if declared == nil && x.Peer != nil {
		declared = x.Peer.Capabilities()
	}
	if declared != nil {
		if caps := capabilitiesJSON(declared); caps != nil {
			meta[mcp.MetaKeyClientCapabilities] = caps
		}
	}
	if x.LogLevel != "" {
		meta[mcp.MetaKeyLogLevel] = string(x.LogLevel)
	}
	if len(meta) > 0 {
		p.Meta = meta
	}
	return p, done
}

// capabilitiesJSON is caps as MCP 2026-07-28's _meta writes them: roots
// only when declared.
func capabilitiesJSON(caps *mcp.ClientCapabilities) map[string]any {
	if caps == nil {
		return map[string]any{}
	}
	raw, err := json.Marshal(caps)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	delete(m, "roots")
	if caps.RootsV2 != nil {
		r, _ := json.Marshal(caps.RootsV2)
		var rm any
		json.Unmarshal(r, &rm)
		m["roots"] = rm
	}
	return m
}

// connected is told of a new session: it asks the server for every log
// message (toolenv passes on those its clients want), under the older
// protocols, where the level is the session's.
func (c *Client) connected(ctx context.Context, cs *mcp.ClientSession) {
	res := cs.InitializeResult()
	if res != nil && res.Capabilities != nil {
		c.record(ctx, "capabilities", res.Capabilities)
	}
	if res == nil || res.Capabilities == nil || res.Capabilities.Logging == nil || res.ProtocolVersion >= "2026-07-28" {
		return
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		c.log.Debug("the MCP server did not take logging/setLevel", "err", err)
	}
}
