package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/mcpsource"
)

// mcpMaxRounds bounds the rounds of input one request may ask a client
// of an older revision for (the go-sdk's own bound).
const mcpMaxRounds = 10

// callSource runs a tools/call of an MCP source's tool, passing on what
// the source sends about it to the client that made the call (mcpPeer):
// its requests for sampling, elicitation and roots, its progress and log
// messages. An input-required result of the source (MCP 2026-07-28) goes
// to a client of that revision as it is, which answers it by calling
// again; for a client of an older revision toolenv asks it itself, in its
// session, and calls the source again with the answers, as the go-sdk's
// server does for its own tools.
//
// A JSON-RPC error the source answers the call with is the client's
// answer too (not an isError result, and never simulated).
func (f *mcpFrontend) callSource(ctx context.Context, req *mcp.CallToolRequest, cat *mcpCatalog, e *mcpEntry) (*mcp.CallToolResult, error) {
	peer := newMCPPeer(ctx, req)
	x := &mcpsource.Exchange{Peer: peer, LogLevel: f.clientLogLevel(req), Declared: req.ClientCapabilities()}
	if req.Params != nil {
		x.Progress = req.Params.GetProgressToken()
		x.InputResponses, x.RequestState = req.Params.InputResponses, req.Params.RequestState
	}
	if req.Session != nil && req.Session.ID() == "" && req.Extra != nil {
		// A client without a session (MCP 2026-07-28 over HTTP) is
		// asked by input-required results: a source that asks by
		// requests is parked meanwhile (mcp_park.go).
		return f.callParked(ctx, req, cat, e, x, peer)
	}
	for round := 0; ; round++ {
		out, res := f.callResult(mcpsource.WithExchange(ctx, x), req, cat, e)
		if err := sourceRPCError(res); err != nil {
			return nil, err
		}
		if out.InputRequests == nil || mcpProtocolOf(req) >= mcpVersionSessionless {
			return out, nil
		}
		if round == mcpMaxRounds {
			return mcpFailure(fmt.Sprintf("the MCP server asked for input %d times in a row; toolenv gave up", mcpMaxRounds)), nil
		}
		responses, err := peer.fulfil(ctx, out.InputRequests)
		if err != nil {
			return mcpFailure("the MCP server asked the client for input, which could not be given: " + err.Error()), nil
		}
		x = &mcpsource.Exchange{Peer: peer, LogLevel: x.LogLevel, Declared: x.Declared, Progress: x.Progress, InputResponses: responses, RequestState: out.RequestState}
	}
}

// sourceRPCError is the JSON-RPC error an MCP source answered a call
// with (nil for none).
func sourceRPCError(res *toolenv.Result) error {
	if res == nil || res.OK() || res.Meta[mcpsource.MetaRPCCode] == "" {
		return nil
	}
	code, err := strconv.ParseInt(res.Meta[mcpsource.MetaRPCCode], 10, 64)
	if err != nil {
		return nil
	}
	e := &jsonrpc.Error{Code: code, Message: res.Meta[mcpsource.MetaRPCMessage]}
	if d := res.Meta[mcpsource.MetaRPCData]; d != "" && json.Valid([]byte(d)) {
		e.Data = json.RawMessage(d)
	}
	return e
}

// mcpFailure is the error result of a call the proxy could not finish.
func mcpFailure(msg string) *mcp.CallToolResult {
	return MCPResult(&toolenv.Result{Status: toolenv.StatusUpstreamError, Error: msg, Source: toolenv.SourcePipeline})
}

// clientLogLevel is the least level of log messages the client of req
// wants: its request's (MCP 2026-07-28), else its session's.
func (f *mcpFrontend) clientLogLevel(req *mcp.CallToolRequest) mcp.LoggingLevel {
	if req.Params != nil {
		if l, ok := req.Params.Meta[mcp.MetaKeyLogLevel].(string); ok && l != "" {
			return mcp.LoggingLevel(l)
		}
	}
	if req.Session != nil {
		return f.logLevels.get(req.Session)
	}
	return ""
}

// mcpPeer is the client of one request, as an MCP source's calls see it
// (mcpsource.Peer): what a source sends about the call is sent to it in
// the context of its request, so that over streamable HTTP it travels on
// that request's stream.
type mcpPeer struct {
	ctx  context.Context
	ss   *mcp.ServerSession
	caps *mcp.ClientCapabilities
}

// newMCPPeer is the client of req. A client of the sessionless revision
// cannot be sent requests (it is asked through input-required results),
// so none of its capabilities to be asked are kept.
func newMCPPeer(ctx context.Context, req *mcp.CallToolRequest) *mcpPeer {
	p := &mcpPeer{ctx: ctx, ss: req.Session, caps: req.ClientCapabilities()}
	if p.caps == nil {
		p.caps = &mcp.ClientCapabilities{}
	}
	if p.ss == nil || (req.Session.ID() == "" && req.Extra != nil) {
		cp := *p.caps
		cp.Sampling, cp.Elicitation, cp.RootsV2 = nil, nil, nil
		p.caps = &cp
	}
	return p
}

var _ mcpsource.Peer = (*mcpPeer)(nil)

func (p *mcpPeer) Capabilities() *mcp.ClientCapabilities { return p.caps }

func (p *mcpPeer) CreateMessage(_ context.Context, params *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return p.ss.CreateMessageWithTools(p.ctx, params)
}

func (p *mcpPeer) Elicit(_ context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return p.ss.Elicit(p.ctx, params)
}

func (p *mcpPeer) ListRoots(_ context.Context, params *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	if params == nil {
		params = &mcp.ListRootsParams{}
	}
	return p.ss.ListRoots(p.ctx, params)
}

func (p *mcpPeer) Progress(_ context.Context, params *mcp.ProgressNotificationParams) {
	if p.ss != nil {
		_ = p.ss.NotifyProgress(p.ctx, params)
	}
}

func (p *mcpPeer) Log(_ context.Context, params *mcp.LoggingMessageParams) {
	if p.ss != nil {
		_ = p.ss.Log(p.ctx, params)
	}
}

// fulfil asks the client for what an input-required result asks.
func (p *mcpPeer) fulfil(ctx context.Context, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	if p.ss == nil {
		return nil, errors.New("no session to ask in")
	}
	out := make(mcp.InputResponseMap, len(reqs))
	for id, ir := range reqs {
		var (
			resp mcp.InputResponse
			err  error
		)
		switch q := ir.(type) {
		case *mcp.ElicitParams:
			resp, err = p.ss.Elicit(p.ctx, q)
		case *mcp.CreateMessageParams:
			resp, err = p.ss.CreateMessage(p.ctx, q)
		case *mcp.CreateMessageWithToolsParams:
			resp, err = p.ss.CreateMessageWithTools(p.ctx, q)
		case *mcp.ListRootsParams:
			resp, err = p.ss.ListRoots(p.ctx, q)
		default:
			err = fmt.Errorf("an input request of type %T", ir)
		}
		if err != nil {
			return nil, fmt.Errorf("input request %q: %w", id, err)
		}
		out[id] = resp
	}
	return out, nil
}

// fulfilRead answers a source's input-required resources/read for a
// client of an older revision (see callSource).
func (f *mcpFrontend) fulfilRead(ctx context.Context, req *mcp.ReadResourceRequest, s MCPSource, res *mcp.ReadResourceResult) (mcp.Result, error) {
	peer := &mcpPeer{ctx: ctx, ss: req.Session}
	for round := 0; res.InputRequests != nil && !mcpIsSessionless(req.Params.Meta, req.Session); round++ {
		if round == mcpMaxRounds {
			return nil, fmt.Errorf("the MCP server asked for input %d times in a row", mcpMaxRounds)
		}
		responses, err := peer.fulfil(ctx, res.InputRequests)
		if err != nil {
			return nil, err
		}
		params := *req.Params
		params.Meta, params.InputResponses, params.RequestState = ownMeta(params.Meta), responses, res.RequestState
		if res, _, err = s.ReadResource(ctx, &params); err != nil {
			return nil, sourceError(err, nil)
		}
	}
	return res, nil
}

// fulfilPrompt is fulfilRead for prompts/get.
func (f *mcpFrontend) fulfilPrompt(ctx context.Context, req *mcp.GetPromptRequest, p mcpPromptOf, res *mcp.GetPromptResult) (mcp.Result, error) {
	peer := &mcpPeer{ctx: ctx, ss: req.Session}
	for round := 0; res.InputRequests != nil && !mcpIsSessionless(req.Params.Meta, req.Session); round++ {
		if round == mcpMaxRounds {
			return nil, fmt.Errorf("the MCP server asked for input %d times in a row", mcpMaxRounds)
		}
		responses, err := peer.fulfil(ctx, res.InputRequests)
		if err != nil {
			return nil, err
		}
		params := *req.Params
		params.Name, params.Meta, params.InputResponses, params.RequestState = p.name, ownMeta(params.Meta), responses, res.RequestState
		if res, _, err = p.src.GetPrompt(ctx, &params); err != nil {
			return nil, sourceError(err, nil)
		}
	}
	return res, nil
}

// mcpIsSessionless reports whether a request is of the sessionless
// revision (its _meta names it).
func mcpIsSessionless(meta mcp.Meta, ss *mcp.ServerSession) bool {
	if v, ok := meta[mcp.MetaKeyProtocolVersion].(string); ok && v >= mcpVersionSessionless {
		return true
	}
	if ss != nil {
		if p := ss.InitializeParams(); p != nil && p.ProtocolVersion >= mcpVersionSessionless {
			return true
		}
	}
	return false
}
