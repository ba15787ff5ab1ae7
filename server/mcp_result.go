package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
)

// The _meta keys of a tools/call result: where the answer came from and
// what happened to the call, the same facts REST reports in X-Toolenv-*
// headers.
const (
	MCPMetaTool       = "toolenv/tool"           // tool ID ("collection/name")
	MCPMetaStatus     = "toolenv/status"         // toolenv.Status
	MCPMetaSource     = "toolenv/source"         // toolenv.Source: cache, upstream, simulator, synthesizer, live, toolenv
	MCPMetaOrigin     = "toolenv/origin"         // where a cached answer first came from
	MCPMetaLatency    = "toolenv/latency_ms"     // pipeline wall time in milliseconds
	MCPMetaWarnings   = "toolenv/warnings"       // non-fatal notes (deprecation, synthesized content)
	MCPMetaFaults     = "toolenv/faults"         // injected faults
	MCPMetaProblems   = "toolenv/problems"       // argument problems, as toolenv.Problem objects
	MCPMetaRetryAfter = "toolenv/retry_after_ms" // rate-limited results: when to retry
	MCPMetaDetails    = "toolenv/meta"           // the result's other details (Result.Meta)
)

// MCPResult converts a pipeline result into an MCP tools/call result.
//
// A success carries the response body as text content: a body that is a
// JSON string (StableToolBench answers often are) as that string, any
// other body as its compact JSON text. A body that is a JSON object is also the
// structured content. A failure is a result with isError set, never a
// protocol error, so the model sees it: its text gives the error, the hint
// and each argument problem. Either way _meta reports the status, source,
// latency, warnings and faults (see the MCPMeta* keys).
func MCPResult(res *toolenv.Result) *mcp.CallToolResult {
	res = res.Bounded(0)
	out := &mcp.CallToolResult{Meta: mcpResultMeta(res)}
	if res.OK() {
		body := bytes.TrimSpace(res.Body)
		out.Content = []mcp.Content{&mcp.TextContent{Text: bodyText(body)}}
		if len(body) > 0 && body[0] == '{' && json.Valid(body) {
			out.StructuredContent = json.RawMessage(body)
		}
		return out
	}
	out.IsError = true
	out.Content = []mcp.Content{&mcp.TextContent{Text: errorText(res)}}
	return out
}

// bodyText is the text a model reads for a response body: a JSON string
// as the string, other JSON compacted (documented examples keep their
// file's indentation, which only costs tokens).
func bodyText(body []byte) string {
	if len(body) == 0 {
		return "null"
	}
	if body[0] == '"' {
		var s string
		if json.Unmarshal(body, &s) == nil {
			return s
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, body) == nil {
		return b.String()
	}
	return string(body)
}

// errorText explains a failed call to the model: what went wrong, each
// argument's problem, how to fix it, and the API's own error response if
// it sent one.
func errorText(res *toolenv.Result) string {
	var b strings.Builder
	msg := res.Error
	if msg == "" {
		msg = "the call failed"
	}
	if len(res.Problems) > 0 && problemsCover(msg, res.Problems) {
		// The message only joins the problems: list them once.
		msg = fmt.Sprintf("the arguments do not match the tool's input schema (%d %s)", len(res.Problems), plural(len(res.Problems), "problem", "problems"))
	}
	fmt.Fprintf(&b, "error (%s): %s", res.Status, msg)
	for _, p := range res.Problems {
		b.WriteString("\n- ")
		b.WriteString(p.Message)
		if p.Expected != "" && !strings.Contains(p.Message, p.Expected) {
			fmt.Fprintf(&b, " (expected: %s)", p.Expected)
		}
	}
	if res.Hint != "" {
		b.WriteString("\nhint: ")
		b.WriteString(res.Hint)
	}
	if body := bytes.TrimSpace(res.Body); len(body) > 0 && string(body) != "null" {
		b.WriteString("\nresponse: ")
		b.WriteString(bodyText(body))
	}
	return b.String()
}

// problemsCover reports whether msg says nothing the problems do not.
func problemsCover(msg string, problems []toolenv.Problem) bool {
	for _, p := range problems {
		msg = strings.Replace(msg, p.Message, "", 1)
	}
	return strings.Trim(msg, " ;:,.") == "invalid arguments" || strings.Trim(msg, " ;:,.") == ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func mcpResultMeta(res *toolenv.Result) mcp.Meta {
	m := mcp.Meta{MCPMetaStatus: string(res.Status)}
	if res.Source != "" {
		m[MCPMetaSource] = string(res.Source)
	}
	if res.Latency > 0 {
		m[MCPMetaLatency] = float64(res.Latency.Microseconds()) / 1000
	}
	if o := res.Meta[invoke.MetaOrigin]; o != "" {
		m[MCPMetaOrigin] = o
	}
	if len(res.Warnings) > 0 {
		m[MCPMetaWarnings] = res.Warnings
	}
	if len(res.Faults) > 0 {
		m[MCPMetaFaults] = res.Faults
	}
	if len(res.Problems) > 0 {
		m[MCPMetaProblems] = res.Problems
	}
	if res.RetryAfter > 0 {
		m[MCPMetaRetryAfter] = res.RetryAfter.Milliseconds()
	}
	if len(res.Meta) > 0 {
		m[MCPMetaDetails] = res.Meta
	}
	return m
}

// mcpArgs decodes tools/call arguments for a tool of input schema s,
// numbers kept exact (see toolenv.ParseArgs). Absent or null arguments are no
// arguments.
func mcpArgs(raw json.RawMessage, s *toolenv.Schema) (map[string]any, *toolenv.Result) {
	return mcpArgsOf(raw, s, false)
}

// mcpArgsOf is mcpArgs; owned says raw is the caller's to hand over (see
// toolenv.ParseArgsOwned).
func mcpArgsOf(raw json.RawMessage, s *toolenv.Schema, owned bool) (map[string]any, *toolenv.Result) {
	pa, res := mcpParsedArgs(raw, s, owned)
	if res != nil {
		return nil, res
	}
	if pa == nil {
		return map[string]any{}, nil
	}
	return pa.Args, nil
}

// mcpParsedArgs is mcpArgsOf giving the arguments' parse (for
// Call.ArgsFromParse); nil for absent or null arguments.
func mcpParsedArgs(raw json.RawMessage, s *toolenv.Schema, owned bool) (*toolenv.ParsedArgs, *toolenv.Result) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	pa, err := toolenv.ParseArgsText(raw, s, owned)
	if err != nil || pa.Args == nil {
		return nil, toolenv.Errorf(toolenv.StatusBadRequest, "pass the arguments as a JSON object: {\"name\": value, ...}",
			"tools/call arguments must be a JSON object, got %s", short(raw))
	}
	return pa, nil
}

func short(raw []byte) string {
	const max = 60
	if len(raw) > max {
		return string(raw[:max]) + "…"
	}
	return string(raw)
}
