package server

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
)

// mcpSourceKind is the Kind of a collection made from an MCP server's
// tools (backend/mcpsource.Kind): its answers are recorded
// CallToolResults, passed through as the server gave them.
const mcpSourceKind = "mcp"

// mcpSourceTool adds to an MCP-sourced tool's definition what its server
// declared beyond toolenv's fields: the annotations (backend/mcpsource's
// Meta "mcp_annotations"). Its output schema is listed as every tool's
// is (mcp_output.go).
func mcpSourceTool(t *mcp.Tool, tool *toolenv.Tool) {
	if raw := tool.Meta["mcp_annotations"]; raw != "" {
		var a mcp.ToolAnnotations
		if json.Unmarshal([]byte(raw), &a) == nil {
			t.Annotations = &a
		}
	}
}

// mcpSourceResult passes a recorded CallToolResult through: its content,
// structuredContent and isError as the server gave them, with toolenv's
// _meta. ok is false when the body is not one (a failed call, which
// MCPResult renders).
func mcpSourceResult(res *toolenv.Result) (*mcp.CallToolResult, bool) {
	body := bytes.TrimSpace(res.Body)
	if !res.OK() || len(body) == 0 || body[0] != '{' {
		return nil, false
	}
	var out mcp.CallToolResult
	if err := json.Unmarshal(body, &out); err != nil || (out.Content == nil && out.InputRequests == nil) {
		return nil, false
	}
	out.Meta = mcpResultMeta(res)
	return &out, true
}

// structuredBytes is a passed-through result's structured content as
// JSON ("null" when it has none), for the output schema's check: a server
// that declares an output schema promises structured content that
// conforms, and so does toolenv, which lists the schema.
func structuredBytes(out *mcp.CallToolResult) []byte {
	if out.StructuredContent == nil {
		return []byte("null")
	}
	raw, err := json.Marshal(out.StructuredContent)
	if err != nil {
		return []byte("null")
	}
	return raw
}
