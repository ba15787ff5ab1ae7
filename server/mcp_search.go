package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/openai"
)

// mcpSearchTool is the name of the tool that finds tools (suffixed when a
// served tool already has it).
const mcpSearchTool = "search_tools"

// mcpSearchMax is the most tools one search_tools call returns.
const mcpSearchMax = 50

// ToolSearch finds tools by what they do, for the MCP search_tools tool.
// NewIndexSearch is toolenv's own (the mapping index: BM25, and vectors
// when an embedding model is configured).
type ToolSearch interface {
	// Update hands over the tools to search: at start and after every
	// hot-load. It may index them in the background; Search waits.
	Update(tools []*toolenv.Tool)
	// Search returns the IDs of the k tools that best match query, best
	// first, among those of collection when it is not empty, with notes
	// on how the search was made (a fallback, say).
	Search(ctx context.Context, query string, k int, collection string) (ids, notes []string, err error)
}

// tools returns the catalog's listed tools (search_tools searches those
// only: a hidden tool is never revealed).
func (cat *mcpCatalog) tools() []*toolenv.Tool {
	out := make([]*toolenv.Tool, 0, len(cat.listed))
	for _, e := range cat.listed {
		if e.tool != nil {
			out = append(out, e.tool)
		}
	}
	return out
}

// searchToolDef is the definition of search_tools.
func searchToolDef(name string) *mcp.Tool {
	return &mcp.Tool{
		Name:  name,
		Title: "Search the tools",
		Description: "Find the tools that can do something, among all this server offers, without listing them all. " +
			"Describe the task in words (\"current weather in a city\", \"convert currencies\"); the result names the best matching tools, " +
			"best first, each with its description and input schema, ready to call.",
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
			`"query":{"type":"string","description":"what the tool should do, in words"},`+
			`"limit":{"type":"integer","minimum":1,"maximum":%d,"default":10,"description":"how many tools to return"},`+
			`"collection":{"type":"string","description":"only tools of this collection"}},`+
			`"required":["query"],"additionalProperties":false}`, mcpSearchMax)),
		OutputSchema: json.RawMessage(searchOutputSchema),
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}
}

// searchOutputSchema is the schema of searchAnswer, search_tools'
// structured result.
const searchOutputSchema = `{"type":"object","properties":{` +
	`"query":{"type":"string","description":"the query searched for"},` +
	`"tools":{"type":"array","description":"the best matching tools, best first","items":{"type":"object","properties":{` +
	`"name":{"type":"string","description":"the name to call it by"},"title":{"type":"string"},"description":{"type":"string"},` +
	`"collection":{"type":"string"},"inputSchema":{"type":"object","description":"its arguments, as tools/list gives them"}},` +
	`"required":["name","description","collection","inputSchema"]}},` +
	`"notes":{"type":"array","items":{"type":"string"},"description":"how the search was made (a fallback, say)"}},` +
	`"required":["query","tools"]}`

// searchHit is one tool search_tools returns.
type searchHit struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	Collection  string          `json:"collection"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// searchAnswer is search_tools' result.
type searchAnswer struct {
	Query string      `json:"query"`
	Tools []searchHit `json:"tools"`
	Notes []string    `json:"notes,omitempty"`
}

// searchTools answers a search_tools call: a failure (bad arguments, no
// index) is an isError result that says what to fix.
func (f *mcpFrontend) searchTools(ctx context.Context, req *mcp.CallToolRequest, cat *mcpCatalog) *mcp.CallToolResult {
	fail := func(format string, args ...any) *mcp.CallToolResult {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
	}
	raw := req.Params.Arguments
	if kept, ok := f.arguments.take(raw); ok {
		raw = kept.text // read ahead of the SDK (MCPArguments)
	}
	args, res := mcpArgs(raw, nil)
	if res != nil {
		return fail("%s", errorText(res))
	}
	q, _ := args["query"].(string)
	if strings.TrimSpace(q) == "" {
		return fail(`search_tools needs "query": a non-empty string describing what the tool should do`)
	}
	limit := 10
	if v, ok := args["limit"]; ok {
		n, ok := jsonInt(v)
		if !ok || n < 1 || n > mcpSearchMax {
			return fail(`"limit" must be an integer from 1 to %d, not %v`, mcpSearchMax, v)
		}
		limit = n
	}
	coll, _ := args["collection"].(string)
	if v, ok := args["collection"]; ok && (coll == "" || f.registry.Collection(coll) == nil) {
		names := []string{}
		for _, c := range f.registry.Collections() {
			names = append(names, c.Name)
		}
		return fail(`"collection" %v is not served; the collections are %s`, v, strings.Join(names, ", "))
	}
	for k := range args {
		if k != "query" && k != "limit" && k != "collection" {
			return fail(`search_tools takes "query", "limit" and "collection", not %q`, k)
		}
	}
	ids, notes, err := f.search.Search(ctx, q, limit, coll)
	if err != nil {
		return fail("search_tools: %v", err)
	}
	ans := searchAnswer{Query: q, Tools: []searchHit{}, Notes: notes}
	for _, id := range ids {
		e := cat.byID(id)
		if e == nil || e.tool.Hidden() {
			continue // a tool of an older generation, or hidden
		}
		def, err := mcpTool(e)
		if err != nil {
			continue
		}
		ans.Tools = append(ans.Tools, searchHit{Name: e.name, Title: e.tool.Title, Description: openai.Description(e.tool),
			Collection: e.coll.Name, InputSchema: def.InputSchema.(json.RawMessage)})
	}
	body, err := toolenv.MarshalJSONNoHTML(ans)
	if err != nil {
		return fail("search_tools: %v", err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}, StructuredContent: json.RawMessage(body)}
}

// jsonInt reads an integer argument (a JSON number without fraction).
func jsonInt(v any) (int, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return int(n), err == nil
	case float64:
		return int(x), x == float64(int(x))
	case int:
		return x, true
	}
	return 0, false
}
