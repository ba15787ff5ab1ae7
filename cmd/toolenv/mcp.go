package main

import (
	"context"
	"net/http"
)

// newMCPHTTPHandler returns the MCP streamable-HTTP handler served at
// /mcp, or nil while MCP is not built.
func newMCPHTTPHandler(ctx context.Context, env *environment, e *env) (http.Handler, error) {
	return nil, nil
}
