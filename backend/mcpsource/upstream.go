package mcpsource

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/upstream"
	"github.com/toolenv/toolenv/backend/virtual"
)

// Result meta keys the upstream sets.
const (
	// MetaIsError is "true" on a result whose CallToolResult has isError
	// set: the tool failed, and said so to the model.
	MetaIsError = "mcp_is_error"
	// MetaRPCCode is the JSON-RPC error code a server answered with, and
	// MetaRPCMessage and MetaRPCData its message and data.
	MetaRPCCode    = "mcp_rpc_code"
	MetaRPCMessage = "mcp_rpc_message"
	MetaRPCData    = "mcp_rpc_data"
	// MetaInputRequired is "true" on a result that asks the client for
	// input (MCP 2026-07-28's input_required): the client answers it by
	// calling again with its input responses.
	MetaInputRequired = "mcp_input_required"
)

// Upstream calls tools on an MCP server: the real API of an MCP
// collection, the first stage of backend/virtual's chain. A
// toolenv.Handler, safe for concurrent use.
//
// Every answer of the server is a success (Status ok, Source upstream)
// whose Body is the CallToolResult's content, structuredContent and
// isError, so that it is recorded and replayed as the server gave it;
// isError results are answers too (the tool failed and said so), marked
// in Meta[MetaIsError]. A server that cannot answer (not connected,
// crashed, hung past the call's deadline, an answer too large) is a
// failure the chain falls through (Meta upstream_class not_connected,
// never cached); a JSON-RPC error the server answers the call with is a
// failure too, classified as the call's fault (invalid params, unknown
// tool) or the server's.
type Upstream struct {
	client  *Client
	timeout time.Duration
}

var _ toolenv.Handler = (*Upstream)(nil)

// NewUpstream returns the upstream that calls c's server, each call
// bounded by timeout (0: by the call's own deadline only).
func NewUpstream(c *Client, timeout time.Duration) *Upstream {
	return &Upstream{client: c, timeout: timeout}
}

// Target names the server, for backend/virtual's circuit breaker.
func (u *Upstream) Target(*toolenv.Tool) string { return "mcp:" + u.client.Name() }

// Invoke calls the tool on the server.
func (u *Upstream) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	if call == nil || call.Tool == nil {
		return toolenv.Errorf(toolenv.StatusUnknownTool, "", "mcp upstream: the call has no tool")
	}
	return u.invokeOn(ctx, u.client, call)
}

// invokeOn calls the tool on the server c reaches (an episode's own
// instance, or the shared one).
func (u *Upstream) invokeOn(ctx context.Context, c *Client, call *toolenv.Call) *toolenv.Result {
	if u.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, u.timeout)
		defer cancel()
	}
	args := call.Args
	if args == nil {
		args = map[string]any{}
	}
	res, err := c.Call(ctx, ServerName(call.Tool), args)
	if err != nil {
		return failure(ctx, err)
	}
	body, err := EncodeResult(res)
	if err != nil {
		r := &toolenv.Result{Status: toolenv.StatusUpstreamError, Error: "the MCP server's result cannot be encoded: " + err.Error(), Source: toolenv.SourceUpstream}
		r.SetMeta(upstream.MetaClass, string(upstream.ClassOther))
		r.SetMeta(upstream.MetaCacheable, "false")
		return r
	}
	r := &toolenv.Result{Status: toolenv.StatusOK, Body: body, Source: toolenv.SourceUpstream}
	r.SetMeta(upstream.MetaClass, string(upstream.ClassSuccess))
	if res.IsError {
		r.SetMeta(MetaIsError, "true")
	}
	if res.NeedsInput() {
		r.SetMeta(MetaInputRequired, "true")
	}
	if res.NeedsInput() || ExchangeFrom(ctx).Asked() {
		// The answer depends on what the client answered (or will):
		// not one to replay to another call.
		r.SetMeta(upstream.MetaCacheable, "false")
	}
	return r
}

// failure is the result of a call the server did not answer with a
// result.
func failure(ctx context.Context, err error) *toolenv.Result {
	r := &toolenv.Result{Source: toolenv.SourceUpstream, Error: err.Error()}
	r.SetMeta(upstream.MetaCacheable, "false")
	var ce *CallError
	switch {
	case errors.As(err, &ce):
		// The server's own answer: passed on as it is (a proxy's
		// client gets the same JSON-RPC error), never simulated.
		r.SetMeta(MetaRPCCode, strconv.FormatInt(ce.Code, 10))
		r.SetMeta(MetaRPCMessage, ce.Message)
		if len(ce.Data) > 0 {
			r.SetMeta(MetaRPCData, string(ce.Data))
		}
		r.SetMeta(virtual.MetaFinal, "true")
		switch ce.Code {
		case -32602, -32601: // invalid params, method (or tool) not found: the call's fault
			r.Status = toolenv.StatusInvalidArguments
			r.SetMeta(upstream.MetaClass, string(upstream.ClassParameterChange))
			r.SetMeta(upstream.MetaHTTPStatus, "400")
		default:
			r.Status = toolenv.StatusUpstreamError
			r.SetMeta(upstream.MetaClass, string(upstream.ClassOther))
			r.SetMeta(upstream.MetaHTTPStatus, "500")
		}
	case errors.Is(err, ErrTooLarge):
		r.Status = toolenv.StatusTooLarge
		r.SetMeta(upstream.MetaClass, string(upstream.ClassOther))
		r.SetMeta(upstream.MetaHTTPStatus, "502")
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.Status = toolenv.StatusTimeout
		r.SetMeta(upstream.MetaClass, string(upstream.ClassNotConnected))
	case errors.Is(err, context.Canceled):
		r.Status = toolenv.StatusCanceled
	default:
		r.Status = toolenv.StatusUnavailable
		r.SetMeta(upstream.MetaClass, string(upstream.ClassNotConnected))
	}
	return r
}

// wireResult is what is recorded of a CallToolResult, in this order.
type wireResult struct {
	Content           []mcp.Content `json:"content"`
	StructuredContent any           `json:"structuredContent,omitempty"`
	IsError           bool          `json:"isError,omitempty"`
}

// wireInput is what is kept of an input-required result (MCP
// 2026-07-28), which has no content: what it asks, and the state to echo.
type wireInput struct {
	ResultType    string              `json:"resultType"`
	InputRequests mcp.InputRequestMap `json:"inputRequests"`
	RequestState  string              `json:"requestState,omitempty"`
}

// EncodeResult is the Body of a CallToolResult: its content,
// structuredContent and isError (the _meta is the server's own and not
// kept), or for an input-required result what it asks.
func EncodeResult(res *mcp.CallToolResult) (json.RawMessage, error) {
	var w any = wireInput{ResultType: "input_required", InputRequests: res.InputRequests, RequestState: res.RequestState}
	if !res.NeedsInput() {
		r := wireResult{Content: res.Content, StructuredContent: res.StructuredContent, IsError: res.IsError}
		if r.Content == nil {
			r.Content = []mcp.Content{}
		}
		w = r
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// IsResult reports whether body has the shape of a recorded
// CallToolResult: an object whose content is an array of objects with a
// type.
func IsResult(body []byte) bool {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return false
	}
	var probe struct {
		Content []map[string]any `json:"content"`
	}
	if json.Unmarshal(body, &probe) != nil || probe.Content == nil {
		return false
	}
	for _, c := range probe.Content {
		if _, ok := c["type"].(string); !ok {
			return false
		}
	}
	return true
}

// DecodeResult reads a recorded Body back into a CallToolResult; ok is
// false when body is not one (see IsResult).
func DecodeResult(body []byte) (*mcp.CallToolResult, bool) {
	if !IsResult(body) {
		return nil, false
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(body, &res); err != nil {
		return nil, false
	}
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	return &res, true
}

// WrapBody gives an answer that is not a CallToolResult that shape: a
// JSON string becomes one text content, any other JSON its compact text,
// and a JSON object (or a string holding one) is the structured content
// too. A CallToolResult is
// returned as it is.
func WrapBody(body []byte) json.RawMessage {
	if IsResult(body) {
		return body
	}
	body = bytes.TrimSpace(body)
	text := string(body)
	if len(body) > 0 && body[0] == '"' {
		var s string
		if json.Unmarshal(body, &s) == nil {
			text = s
			// A simulator's answer is often JSON written as a string:
			// an object in it is the structured content.
			if t := bytes.TrimSpace([]byte(s)); len(t) > 0 && t[0] == '{' && json.Valid(t) {
				body = t
			}
		}
	} else {
		var b bytes.Buffer
		if json.Compact(&b, body) == nil {
			text = b.String()
		}
	}
	w := wireResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	if len(body) > 0 && body[0] == '{' && json.Valid(body) {
		w.StructuredContent = json.RawMessage(body)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return body
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// Reshape wraps a stage that answers in toolenv's own terms (the
// simulator, the synthesizer) so that its successful answers have the
// shape of a CallToolResult (WrapBody), as the server's would.
func Reshape(h toolenv.Handler) toolenv.Handler {
	if h == nil {
		return nil
	}
	return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
		r := h.Invoke(ctx, call)
		if r.OK() && len(r.Body) > 0 {
			r.Body = WrapBody(r.Body)
		}
		return r
	})
}

// ResultText is the text a model reads of a recorded CallToolResult: its
// text contents joined, other contents named by their type.
func ResultText(body []byte) (string, bool) {
	res, ok := DecodeResult(body)
	if !ok {
		return "", false
	}
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, "[image "+c.MIMEType+"]")
		case *mcp.AudioContent:
			parts = append(parts, "[audio "+c.MIMEType+"]")
		case *mcp.ResourceLink:
			parts = append(parts, "[resource link "+c.URI+"]")
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, "[resource "+c.Resource.URI+"]")
			}
		}
	}
	return strings.Join(parts, "\n"), true
}
