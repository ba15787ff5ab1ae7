package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	petstoreSpec = "../../openapi/testdata/petstore.yaml"
	librarySpec  = "../../openapi/testdata/library.json"
)

// TestServeOpenAPI serves two imported documents and calls them at their
// own routes, lists them over MCP, and checks that a bad document stops
// serve with exit code 2 and a message naming the problem.
func TestServeOpenAPI(t *testing.T) {
	base, stop := serveInBackground(t, "--store", ":memory:", "--openapi", petstoreSpec, "--openapi", "books="+librarySpec)
	defer stop()
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/pets/42"); code != 200 || !strings.Contains(body, `"name":"Rex"`) {
		t.Errorf("GET /pets/42: %d %s", code, body)
	}
	if code, body := get("/books?q=tolkien"); code != 200 || !strings.Contains(body, "Fellowship") {
		t.Errorf("GET /books: %d %s", code, body)
	}
	var colls []struct{ Name, Kind string }
	_, body := get("/collections")
	if err := json.Unmarshal([]byte(body), &colls); err != nil || len(colls) != 2 || colls[0].Name != "books" || colls[1].Name != "petstore" || colls[0].Kind != "openapi" {
		t.Errorf("collections = %s", body)
	}

	cs := mcpClient(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"})
	defer cs.Close()
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range list.Tools {
		names[tl.Name] = true
	}
	if len(list.Tools) != 14 || !names["showPetById"] || !names["searchBooks"] {
		t.Errorf("MCP tools = %v", names)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "showPetById", Arguments: map[string]any{"petId": 42}})
	if err != nil || res.IsError || !strings.Contains(callText(t, res), "Rex") {
		t.Errorf("MCP call: %v %+v", err, res)
	}
}

func TestServeBadOpenAPI(t *testing.T) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"serve", "--store", ":memory:", "--addr", "127.0.0.1:0",
		"--openapi", "../../openapi/testdata/bad/unresolved-ref.yaml"}, strings.NewReader(""), &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), `$ref "#/components/schemas/Order"`) || !strings.Contains(errb.String(), `did you mean "Ordr"`) {
		t.Errorf("exit %d, stderr:\n%s", code, errb.String())
	}
}
