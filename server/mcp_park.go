package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolenv/toolenv/backend/mcpsource"
)

// A source of an older revision asks its client by requests (sampling,
// elicitation, roots) in the middle of a call; a client of MCP 2026-07-28
// cannot be sent requests and is asked by input-required results, which
// it answers by calling again. So toolenv parks such a call: the call
// runs on, waiting for the answer; the client gets an input-required
// result whose requestState names the parked call, and its next call
// with that state hands the answer to the waiting source and waits for
// the call's end, or its next question. A parked call whose client does
// not come back within mcpParkIdle is given an error answer.

// mcpParkPrefix begins the requestState of a parked call.
const mcpParkPrefix = "toolenv-parked:"

// mcpParkInput is the input request id of a parked call's question.
const mcpParkInput = "toolenv"

// mcpParkIdle is how long a parked call waits for its client: not long,
// as the call holds its source meanwhile (MCP ties a server's requests to
// no call, so a call that may be asked something has its source alone).
const mcpParkIdle = time.Minute

// mcpParked is one parked call.
type mcpParked struct {
	id        string
	principal string
	asks      chan *mcpAsk
	done      chan *mcp.CallToolResult
	failed    chan error

	mu      sync.Mutex
	pending *mcpAsk     // the question awaiting the client's answer
	leg     *mcpPeer    // the request now being served, for notifications
	idle    *time.Timer // fails the pending question when the client stays away
}

// mcpAsk is a source's question, and where its answer goes.
type mcpAsk struct {
	req    mcp.InputRequest
	answer chan mcpAnswer
}

type mcpAnswer struct {
	resp mcp.InputResponse
	err  error
}

// mcpParks are the parked calls, by id.
type mcpParks struct{ m sync.Map }

// parkPeer is the Peer of a parked call: its questions go to the client
// as input-required results, its notifications to the request being
// served.
type parkPeer struct {
	p    *mcpParked
	caps *mcp.ClientCapabilities
}

func (pp *parkPeer) Capabilities() *mcp.ClientCapabilities { return pp.caps }

func (pp *parkPeer) ask(ctx context.Context, req mcp.InputRequest) (mcp.InputResponse, error) {
	a := &mcpAsk{req: req, answer: make(chan mcpAnswer, 1)}
	select {
	case pp.p.asks <- a:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case ans := <-a.answer:
		return ans.resp, ans.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (pp *parkPeer) CreateMessage(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	resp, err := pp.ask(ctx, p)
	if err != nil {
		return nil, err
	}
	switch r := resp.(type) {
	case *mcp.CreateMessageWithToolsResult:
		return r, nil
	case *mcp.CreateMessageResult:
		return &mcp.CreateMessageWithToolsResult{Meta: r.Meta, Content: []mcp.Content{r.Content}, Model: r.Model, Role: r.Role, StopReason: r.StopReason}, nil
	}
	return nil, fmt.Errorf("the client answered sampling with %T", resp)
}

func (pp *parkPeer) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	resp, err := pp.ask(ctx, p)
	if err != nil {
		return nil, err
	}
	if r, ok := resp.(*mcp.ElicitResult); ok {
		return r, nil
	}
	return nil, fmt.Errorf("the client answered elicitation with %T", resp)
}

func (pp *parkPeer) ListRoots(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	if p == nil {
		p = &mcp.ListRootsParams{}
	}
	resp, err := pp.ask(ctx, p)
	if err != nil {
		return nil, err
	}
	if r, ok := resp.(*mcp.ListRootsResult); ok {
		return r, nil
	}
	return nil, fmt.Errorf("the client answered roots/list with %T", resp)
}

func (pp *parkPeer) Progress(ctx context.Context, p *mcp.ProgressNotificationParams) {
	if leg := pp.p.current(); leg != nil {
		leg.Progress(ctx, p)
	}
}

func (pp *parkPeer) Log(ctx context.Context, p *mcp.LoggingMessageParams) {
	if leg := pp.p.current(); leg != nil {
		leg.Log(ctx, p)
	}
}

func (p *mcpParked) current() *mcpPeer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leg
}

// callParked runs a call of an MCP source for a client of MCP 2026-07-28,
// parking it whenever the source asks the client something; or, when the
// request answers a parked call's question, resumes that call.
func (f *mcpFrontend) callParked(ctx context.Context, req *mcp.CallToolRequest, cat *mcpCatalog, e *mcpEntry, x *mcpsource.Exchange, leg *mcpPeer) (*mcp.CallToolResult, error) {
	principal := ""
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		principal = req.Extra.TokenInfo.UserID
	}
	if id, ok := strings.CutPrefix(x.RequestState, mcpParkPrefix); ok {
		v, found := f.parks.m.Load(id)
		p, _ := v.(*mcpParked)
		if !found || p.principal != principal {
			return nil, &jsonrpc.Error{Code: mcpCodeInvalidParams, Message: "requestState names no call waiting for an answer (it ended, waited too long, or is another client's): call again without it"}
		}
		resp := x.InputResponses[mcpParkInput]
		p.mu.Lock()
		pending := p.pending
		p.pending = nil
		p.leg = leg
		p.mu.Unlock()
		if pending == nil || resp == nil {
			return nil, &jsonrpc.Error{Code: mcpCodeInvalidParams, Message: fmt.Sprintf("the call waits for the answer to input request %q: send it in inputResponses", mcpParkInput)}
		}
		p.idle.Stop()
		pending.answer <- mcpAnswer{resp: resp}
		return f.awaitParked(ctx, p)
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	p := &mcpParked{id: hex.EncodeToString(b[:]), principal: principal, leg: leg,
		asks: make(chan *mcpAsk), done: make(chan *mcp.CallToolResult, 1), failed: make(chan error, 1)}
	p.idle = time.AfterFunc(mcpParkIdle, func() { f.unpark(p, "the client did not answer within "+mcpParkIdle.String()) })
	p.idle.Stop()
	caps := x.Declared
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	parked := &mcpsource.Exchange{Peer: &parkPeer{p: p, caps: caps}, Declared: x.Declared, Progress: x.Progress, LogLevel: x.LogLevel,
		InputResponses: x.InputResponses, RequestState: x.RequestState}
	f.parks.m.Store(p.id, p)
	// The call outlives this request (it may wait for the client's next
	// one), within the parked call's own limit.
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcpParkIdle)
	go func() {
		defer cancel()
		out, res := f.callResult(mcpsource.WithExchange(callCtx, parked), req, cat, e)
		if err := sourceRPCError(res); err != nil {
			p.failed <- err
			return
		}
		p.done <- out
	}()
	return f.awaitParked(ctx, p)
}

// awaitParked waits for a parked call's end, or its next question, which
// the client is given as an input-required result.
func (f *mcpFrontend) awaitParked(ctx context.Context, p *mcpParked) (*mcp.CallToolResult, error) {
	select {
	case out := <-p.done:
		f.parks.m.Delete(p.id)
		return out, nil
	case err := <-p.failed:
		f.parks.m.Delete(p.id)
		return nil, err
	case a := <-p.asks:
		p.mu.Lock()
		p.pending, p.leg = a, nil
		p.mu.Unlock()
		p.idle.Reset(mcpParkIdle)
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{mcpParkInput: a.req}, RequestState: mcpParkPrefix + p.id}, nil
	case <-ctx.Done():
		f.unpark(p, "the client went away")
		return nil, ctx.Err()
	}
}

// unpark gives a parked call's pending question an error answer and
// forgets the call.
func (f *mcpFrontend) unpark(p *mcpParked, why string) {
	f.parks.m.Delete(p.id)
	p.mu.Lock()
	pending := p.pending
	p.pending = nil
	p.mu.Unlock()
	if pending != nil {
		pending.answer <- mcpAnswer{err: fmt.Errorf("toolenv's client did not answer: %s", why)}
	}
}
