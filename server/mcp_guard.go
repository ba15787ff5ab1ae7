package server

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPGuard is the receiving middleware that keeps an MCP server built
// outside this package (the RL episodes' servers) to the rules toolenv's
// own keeps (mcpFrontend.protocol is it around the capability checks): a
// panic below it is a -32603 error, logged with its stack, never a dead
// process; every error gets a JSON-RPC code; a nil result is -32603,
// logged.
func MCPGuard(log *slog.Logger) mcp.Middleware {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			notification := strings.HasPrefix(method, "notifications/")
			defer func() {
				p := recover()
				if p == nil {
					return
				}
				log.Error("panic while handling an MCP request; answered with an internal error", "method", method, "panic", p, "stack", string(debug.Stack()))
				res, err = nil, nil
				if !notification {
					err = &jsonrpc.Error{Code: mcpCodeInternal, Message: fmt.Sprintf("internal error while handling %s: this is a bug in toolenv, the server log has the details", method)}
				}
			}()
			res, err = next(ctx, method, req)
			switch {
			case notification:
				return nil, nil
			case err != nil:
				return nil, mcpWireError(method, err)
			case isNilResult(res):
				log.Error("an MCP request was answered with no result", "method", method)
				return nil, &jsonrpc.Error{Code: mcpCodeInternal, Message: fmt.Sprintf("internal error: %s produced no result; this is a bug in toolenv", method)}
			}
			return res, nil
		}
	}
}
