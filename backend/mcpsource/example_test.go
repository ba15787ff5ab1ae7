package mcpsource_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolenv/toolenv/backend/mcpsource"
)

// An mcpServers document, as Claude Desktop and Cursor write it, gives
// the servers toolenv starts or reaches.
func ExampleParseConfig() {
	servers, err := mcpsource.ParseConfig([]byte(`{"mcpServers": {
		"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
		"search": {"url": "https://mcp.example.org/mcp", "headers": {"Authorization": "Bearer ${SEARCH_TOKEN}"}}
	}}`))
	if err != nil {
		panic(err)
	}
	for _, s := range servers {
		fmt.Println(s.Name, s.Stdio(), s)
	}
	// Output:
	// memory true memory=npx -y @modelcontextprotocol/server-memory
	// search false search=https://mcp.example.org/mcp
}

// A server's tools/list becomes a collection; each tool's state, from its
// annotations, says what the cache may answer.
func ExampleNewCollection() {
	object := map[string]any{"type": "object"}
	tools := []*mcp.Tool{
		{Name: "read_graph", InputSchema: object, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		{Name: "create_entities", InputSchema: object},
		{Name: "files.search", InputSchema: object, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		{Name: "broken", InputSchema: map[string]any{"type": "object", "required": "x"}},
	}
	col, skipped, err := mcpsource.NewCollection("memory", tools, mcpsource.CollectionOptions{})
	if err != nil {
		panic(err)
	}
	for _, t := range col.Tools {
		fmt.Println(t.Name, t.State(), mcpsource.ServerName(t))
	}
	fmt.Println("left out:", skipped[0].Tool)
	// Output:
	// read_graph read read_graph
	// create_entities write create_entities
	// files_search read files.search
	// left out: broken
}

// A front-end that passes on what a source server sends about a call
// (sampling, elicitation, roots, progress, logs) puts an Exchange in the
// call's context; the source's Upstream finds it there.
func ExampleWithExchange() {
	x := &mcpsource.Exchange{Progress: "client-token-1", LogLevel: "info"}
	ctx := mcpsource.WithExchange(context.Background(), x)
	fmt.Println(mcpsource.ExchangeFrom(ctx) == x, x.Asked())
	// An answer to an input-required result makes the call's answer
	// depend on the client's: it is never recorded.
	x.RequestState = "state from the server"
	fmt.Println(x.Asked())
	// Output:
	// true false
	// true
}
