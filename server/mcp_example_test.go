package server_test

import (
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/toolenv/toolenv/server"
)

// A POST to /mcp is of the sessionless protocol (MCP 2026-07-28) when its
// Mcp-Protocol-Version header or its _meta names that revision and it
// carries no Mcp-Session-Id; NewMCPHandler serves it without a session.
func ExampleMCPSessionless() {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	modern := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	modern.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	legacy := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	legacy.Header.Set("Mcp-Session-Id", "S1")
	fmt.Println(server.MCPSessionless(modern, []byte(body)), server.MCPSessionless(legacy, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)))
	// Output: true false
}
