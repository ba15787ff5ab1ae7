package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The JSON-RPC error codes toolenv's MCP server answers with: JSON-RPC
// 2.0's own (an unknown resource is -32602 too, as MCP asks since
// SEP-2164: mcp.ResourceNotFoundError).
const (
	mcpCodeParse          = jsonrpc.CodeParseError     // -32700: not JSON
	mcpCodeInvalidRequest = jsonrpc.CodeInvalidRequest // -32600: not a valid request here and now
	mcpCodeMethodNotFound = jsonrpc.CodeMethodNotFound // -32601: no such method, or not offered
	mcpCodeInvalidParams  = jsonrpc.CodeInvalidParams  // -32602: bad params, an unknown tool or resource
	mcpCodeInternal       = jsonrpc.CodeInternalError  // -32603: a bug in toolenv
)

// capabilities is what toolenv's MCP server declares: tools (the
// catalog, whose list changes when a collection is hot-loaded),
// resources (each collection's documentation and each tool's, which
// change with it, and the resources of its MCP sources) and logging
// (notes about the client's own calls, and its sources' log messages).
// It offers prompts and completions when an MCP source does (its
// sources' own), and else answers their methods with -32601.
func (f *mcpFrontend) capabilities() *mcp.ServerCapabilities {
	caps := &mcp.ServerCapabilities{
		Tools:     &mcp.ToolCapabilities{ListChanged: true},
		Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
		Logging:   &mcp.LoggingCapabilities{},
	}
	if f.proxy.prompts {
		caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	if f.proxy.completions {
		caps.Completions = &mcp.CompletionCapabilities{}
	}
	return caps
}

// undeclared says why a method the SDK knows is not answered: the
// capability it belongs to is not declared. "" for a method that is.
func (f *mcpFrontend) undeclared(method string) string {
	switch {
	case strings.HasPrefix(method, "prompts/") && !f.proxy.prompts:
		return "toolenv offers no prompts (its capabilities are tools, resources and logging; an MCP source's prompts are offered when one has them)"
	case method == "completion/complete" && !f.proxy.completions:
		return "toolenv offers no completions (its capabilities are tools, resources and logging; an MCP source's completions are offered when one has them)"
	}
	return ""
}

// protocol is the outermost receiving middleware of the MCP server. It
//
//   - answers the methods of capabilities the server does not declare
//     with -32601, so that a client meets exactly what initialize said;
//   - recovers a panic below it (toolenv's handlers and the SDK's own run
//     in goroutines of the SDK, which net/http's recovery does not
//     cover) into a -32603 error, logging the stack, so that no request
//     takes the process down;
//   - gives every error a JSON-RPC code: the SDK answers an error without
//     one with code 0, which no JSON-RPC client expects (a duplicate
//     initialize becomes -32600, anything else -32603);
//   - turns a nil result of a request into -32603 (a typed nil would be
//     written as "result": null).
func (f *mcpFrontend) protocol(next mcp.MethodHandler) mcp.MethodHandler {
	return MCPGuard(f.log)(func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if why := f.undeclared(method); why != "" {
			// (The SDK writes -32601 with a message of its own.)
			return nil, &jsonrpc.Error{Code: mcpCodeMethodNotFound, Message: fmt.Sprintf("method %q is not available: %s", method, why)}
		}
		res, err := next(ctx, method, req)
		if method == "logging/setLevel" && err == nil {
			if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && p != nil {
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
					f.logLevels.set(ss, p.Level)
				}
			}
		}
		return res, err
	})
}

// mcpWireError gives err a JSON-RPC code when it has none (see protocol).
func mcpWireError(method string, err error) error {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code != 0 {
		return err
	}
	if method == "initialize" {
		return &jsonrpc.Error{Code: mcpCodeInvalidRequest,
			Message: "initialize was already received on this session: initialize once per session (over HTTP a new session starts with a POST without Mcp-Session-Id)"}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &jsonrpc.Error{Code: mcpCodeInternal, Message: fmt.Sprintf("%s was cancelled or timed out: %v", method, err)}
	}
	return &jsonrpc.Error{Code: mcpCodeInternal, Message: err.Error()}
}

// isNilResult reports whether res is nil or a typed nil pointer.
func isNilResult(res mcp.Result) bool {
	if res == nil {
		return true
	}
	v := reflect.ValueOf(res)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// mcpNormalizeError gives an error response written to a client a
// JSON-RPC code when the SDK left it 0: the SDK checks the lifecycle
// (a request before initialize) outside every middleware, with an
// uncoded error. Such errors are requests that are invalid at that
// point of the session, -32600. It reports whether it changed msg.
func mcpNormalizeError(msg jsonrpc.Message) bool {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error == nil {
		return false
	}
	var we *jsonrpc.Error
	if errors.As(resp.Error, &we) && we.Code != 0 {
		return false
	}
	text := resp.Error.Error()
	if strings.Contains(text, "during session initialization") {
		text = "the session is not initialized: send initialize first and wait for its answer (" + text + ")"
	}
	resp.Error = &jsonrpc.Error{Code: mcpCodeInvalidRequest, Message: text}
	return true
}

// mcpCheckParams answers -32602 for the params of a request that the SDK
// would refuse before any middleware with an uncoded error: today those
// of initialize, which it decodes apart.
func mcpCheckParams(req *jsonrpc.Request) *jsonrpc.Error {
	if req.Method != "initialize" {
		return nil
	}
	var p mcp.InitializeParams
	if len(req.Params) == 0 || string(req.Params) == "null" {
		return &jsonrpc.Error{Code: mcpCodeInvalidParams, Message: `initialize needs "params": {"protocolVersion": …, "capabilities": {…}, "clientInfo": {"name": …, "version": …}}`}
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return &jsonrpc.Error{Code: mcpCodeInvalidParams, Message: "invalid initialize params: " + err.Error()}
	}
	return nil
}
