package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/schemacheck"
)

// A tool whose output schema is known (Tool.Output: OpenAPI responses,
// NL2SQL's REST rows) is listed with it as outputSchema, when MCP allows
// one ("type": "object") and it compiles as JSON Schema 2020-12. MCP then
// requires each successful result to carry structuredContent conforming
// to it, and clients check (the TypeScript SDK with Ajv, formats
// asserted). So every answer of such a tool is checked against the
// schema before it is sent: one that conforms is the structured content,
// one that does not (a simulated or recorded answer, an upstream that
// drifted from its documentation) is an error result that says so, with
// the answer in its text and the mismatches in _meta
// "toolenv/output_problems" — never a result that breaks the promise.

// MCPMetaOutputProblems is the _meta key of a result whose answer did not
// match the tool's output schema: where and how.
const MCPMetaOutputProblems = "toolenv/output_problems"

// mcpOutput is the output schema a tool is listed with, compiled.
type mcpOutput struct {
	schema json.RawMessage
	c      *schemacheck.Checker
}

// output returns the output schema e is listed with, or nil. It is
// compiled once per catalog generation.
func (cat *mcpCatalog) output(e *mcpEntry) *mcpOutput {
	if e.tool == nil || e.tool.Output == nil {
		return nil
	}
	if o, ok := cat.outputs.Load(e); ok {
		return o.(*mcpOutput)
	}
	o, err := compileOutput(e.tool.Output)
	if err != nil && !errors.Is(err, errNoOutputSchema) {
		cat.log.Debug("a tool's output schema is not offered over MCP", "tool", e.tool.ID, "err", err)
	}
	cat.outputs.Store(e, o)
	return o
}

var errNoOutputSchema = errors.New("not an object schema")

// compileOutput compiles an output schema MCP can carry: nil (and
// errNoOutputSchema) for one that is not "type": "object".
func compileOutput(s *toolenv.Schema) (*mcpOutput, error) {
	if s.Type != "object" || s.Nullable {
		return nil, errNoOutputSchema
	}
	c, err := schemacheck.Compile(s)
	if err != nil {
		return nil, err
	}
	return &mcpOutput{schema: c.Raw(), c: c}, nil
}

// check reports how body breaks the output schema, or nil when it is an
// object that conforms.
func (o *mcpOutput) check(body []byte) []string {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return []string{"the answer is not a JSON object"}
	}
	return o.c.Check(body)
}

// conform makes a successful result keep the promise of the tool's
// output schema (see above), saying who made an answer that breaks it
// (outputMismatch, as REST says it).
func conform(out *mcp.CallToolResult, o *mcpOutput, res *toolenv.Result, body []byte) {
	problems := o.check(body)
	if problems == nil {
		out.StructuredContent = json.RawMessage(bytes.TrimSpace(body))
		return
	}
	out.StructuredContent = nil
	out.IsError = true
	out.Meta[MCPMetaOutputProblems] = problems
	what := strings.TrimPrefix(outputMismatch(res), "output_mismatch: ")
	text := "error (output_mismatch): " + what + ", so the answer is not given as structured content:\n- " +
		strings.Join(problems, "\n- ") + "\nresponse: " + bodyText(bytes.TrimSpace(body))
	out.Content = []mcp.Content{&mcp.TextContent{Text: text}}
}
