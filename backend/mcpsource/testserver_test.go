package mcpsource

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverEnv names the mode in which the test binary runs as an MCP
// server over stdio (a Go SDK server written for the fault tests).
const serverEnv = "MCPSOURCE_TEST_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverEnv); mode != "" {
		runTestServer(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testServer returns the Server that runs this test binary as an MCP
// server in mode: "basic" (echo, crash, hang, huge, garbage, grow tools),
// "many" (10,000 tools), "badschema" (tools whose schemas do not
// compile, beside good ones), "noinit" (never answers initialize),
// "exit" (exits at once, saying why on stderr).
func testServer(t *testing.T, name, mode string) *Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &Server{Name: name, Command: exe, Args: []string{"-test.run=^$"}, Env: map[string]string{serverEnv: mode}}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

var objectSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)

func runTestServer(mode string) {
	switch mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "fatal: the configuration file /etc/nothing is missing")
		os.Exit(2)
	case "noinit":
		time.Sleep(time.Hour)
		return
	case "counter":
		runCounterServer()
		return
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "faults", Version: "1"}, nil)
	add := func(name string, ann *mcp.ToolAnnotations, h mcp.ToolHandler) {
		srv.AddTool(&mcp.Tool{Name: name, Description: "the " + name + " tool", InputSchema: objectSchema, Annotations: ann}, h)
	}
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	switch mode {
	case "many":
		for i := range 10000 {
			add(fmt.Sprintf("tool_%05d", i), ro, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text("ok"), nil
			})
		}
	case "badschema":
		add("good", ro, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("good"), nil })
		for name, schema := range map[string]string{
			"type_is_number":   `{"type":"object","properties":{"x":{"type":5}}}`,
			"required_string":  `{"type":"object","required":"x"}`,
			"dangling_ref":     `{"type":"object","properties":{"x":{"$ref":"#/$defs/missing"}}}`,
			"remote_ref":       `{"type":"object","properties":{"x":{"$ref":"https://example.org/s.json"}}}`,
			"minimum_is_text":  `{"type":"object","properties":{"x":{"type":"number","minimum":"zero"}}}`,
			"properties_array": `{"type":"object","properties":[1,2]}`,
		} {
			srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(schema)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text("?"), nil
			})
		}
	default:
		fmt.Fprintln(os.Stderr, "fault server ready")
		add("echo", ro, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &a)
			return text("echo: " + a.Text), nil
		})
		add("crash", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "crashing on purpose")
			os.Exit(3)
			return nil, nil
		})
		add("hang", ro, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			time.Sleep(time.Hour) // ignores the cancellation too
			return nil, nil
		})
		add("huge", ro, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(strings.Repeat("x", 50<<20)), nil
		})
		add("garbage", ro, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Stdout.WriteString("{this is not JSON-RPC\n")
			return text("after garbage"), nil
		})
		add("fail", ro, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such file"}}}, nil
		})
		add("grow", nil, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			srv.AddTool(&mcp.Tool{Name: "grown", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text("grown"), nil
			})
			return text("added a tool"), nil
		})
	}
	_ = srv.Run(context.Background(), &mcp.StdioTransport{})
}
