package mcpsource_test

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolenv/toolenv/backend/mcpsource"
)

// A server that changes state is isolated per episode unless it says
// otherwise: each episode gets an instance of its own, whose folder
// ${TOOLENV_EPISODE_DIR} names.
func ExampleServer_IsolationMode() {
	servers, err := mcpsource.ParseConfig([]byte(`{"mcpServers": {
		"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
		           "env": {"MEMORY_FILE_PATH": "${TOOLENV_EPISODE_DIR}/memory.jsonl"}},
		"notes": {"command": "notes-server", "isolation": "shared"},
		"crm": {"url": "https://crm.example.org/mcp", "isolation": {"reset": {"tool": "reset_demo_data"}}}
	}}`))
	if err != nil {
		panic(err)
	}
	object := map[string]any{"type": "object"}
	col, _, err := mcpsource.NewCollection("any", []*mcp.Tool{
		{Name: "read", InputSchema: object, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		{Name: "write", InputSchema: object},
	}, mcpsource.CollectionOptions{})
	if err != nil {
		panic(err)
	}
	for _, s := range servers {
		fmt.Println(s.Name, s.IsolationMode(col.Tools), s.NamesEpisodeDir())
	}
	// Output:
	// crm episode false
	// memory episode true
	// notes shared false
}
