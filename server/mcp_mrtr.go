package server

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpTyped returns out with its resultType set, as MCP 2026-07-28 wants
// on every tools/call result ("complete", or "input_required" when the
// result asks the client for input), for a client of that revision. The
// go-sdk sets it on the results of its own tool handlers only, and its
// field is unexported: a result decoded from JSON that names it is the
// way to set it. Clients of older revisions get out unchanged.
func mcpTyped(out *mcp.CallToolResult, protocol string) *mcp.CallToolResult {
	if protocol < mcpVersionSessionless || out == nil {
		return out
	}
	kind := `{"resultType":"complete"}`
	if out.InputRequests != nil {
		kind = `{"resultType":"input_required"}`
	}
	var typed mcp.CallToolResult
	if err := json.Unmarshal([]byte(kind), &typed); err != nil {
		return out
	}
	typed.Meta, typed.Content, typed.StructuredContent, typed.IsError = out.Meta, out.Content, out.StructuredContent, out.IsError
	typed.InputRequests, typed.RequestState = out.InputRequests, out.RequestState
	if typed.Content == nil && typed.InputRequests == nil {
		typed.Content = []mcp.Content{}
	}
	return &typed
}

// mcpProtocolOf is the protocol revision of a request: its _meta's (MCP
// 2026-07-28), else its session's.
func mcpProtocolOf(req *mcp.CallToolRequest) string {
	if req == nil {
		return ""
	}
	if req.Params != nil {
		if v, ok := req.Params.Meta[mcp.MetaKeyProtocolVersion].(string); ok && v != "" {
			return v
		}
	}
	if req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil {
			return p.ProtocolVersion
		}
	}
	return ""
}
