package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeConfigFileEqualsFlags: "toolenv serve --config
// examples/bird.yaml" and the flag line its comment gives serve the same
// collections, OpenAPI documents and MCP tools, byte for byte (the
// server's own address aside).
func TestServeConfigFileEqualsFlags(t *testing.T) {
	bird := builtBird(t)
	ctx := context.Background()
	// The checkout's layout: examples/ beside out/bird/.
	root := t.TempDir()
	out := filepath.Join(root, "out", "bird")
	os.MkdirAll(out, 0o755)
	for _, flavor := range []string{"slot", "sel"} {
		if err := os.Symlink(filepath.Join(bird, flavor), filepath.Join(out, flavor)); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errs := run(t, ctx, "drift", "--in", filepath.Join(bird, "rest"), "--out", filepath.Join(out, "rest-v2"), "--seed", "7"); code != 0 {
		t.Fatalf("drift: %s", errs)
	}
	os.MkdirAll(filepath.Join(root, "examples"), 0o755)
	for _, f := range []string{"bird.yaml", "bird-faults.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(root, "examples", f), b, 0o644)
	}
	// The flag line of the file's comment, run from the checkout's root.
	t.Chdir(root)
	flagLine := []string{"--store", "out/bird/store.db", "--collection", "out/bird/slot", "--collection", "out/bird/sel", "--collection", "out/bird/rest-v2",
		"--drift-mode", "strict", "--docs-tool", "--feedback", "helpful", "--faults", "examples/bird-faults.json", "--timeout", "30s", "--mcp-names", "prefixed"}
	comment, _ := os.ReadFile("examples/bird.yaml")
	if !strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(string(comment), "\\\n#", "")), " "), strings.Join(flagLine, " ")) {
		t.Fatalf("the flag line in examples/bird.yaml's comment is not the one tested: %s", strings.Join(flagLine, " "))
	}
	// The config print of both is the same configuration.
	_, fromFile, _ := run(t, ctx, "config", "print", "--config", "examples/bird.yaml", "--format", "json")
	_, fromFlags, _ := run(t, ctx, append([]string{"config", "print", "--format", "json"}, flagLine...)...)
	if fromFile != fromFlags || !strings.Contains(fromFile, `"store": "out/bird/store.db"`) {
		t.Errorf("config print differs:\n%s\n%s", fromFile, fromFlags)
	}

	viaFile, stop1 := serveInBackground(t, "--config", "examples/bird.yaml")
	defer stop1()
	viaFlags, stop2 := serveInBackground(t, flagLine...)
	defer stop2()
	get := func(base, path string) string {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s%s: %d %s", base, path, resp.StatusCode, b)
		}
		return strings.ReplaceAll(string(b), base, "BASE")
	}
	listing := get(viaFile, "/collections")
	if listing != get(viaFlags, "/collections") {
		t.Errorf("/collections differ:\n%s\n%s", listing, get(viaFlags, "/collections"))
	}
	var colls []struct{ Name string }
	if err := json.Unmarshal([]byte(listing), &colls); err != nil {
		var wrapped struct{ Collections []struct{ Name string } }
		if err := json.Unmarshal([]byte(listing), &wrapped); err != nil {
			t.Fatalf("/collections: %v", err)
		}
		colls = wrapped.Collections
	}
	if len(colls) != 3 {
		t.Fatalf("%d collections: %s", len(colls), listing)
	}
	for _, c := range colls {
		for _, path := range []string{"/collections/" + c.Name + "/openapi.json", "/collections/" + c.Name + "/tools?format=mcp"} {
			if a, b := get(viaFile, path), get(viaFlags, path); a != b || len(a) < 100 {
				t.Errorf("%s differs (%d and %d bytes)", path, len(a), len(b))
			}
		}
	}
	mcpTools := func(base string) string {
		cs := mcpClient(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"})
		defer cs.Close()
		var all []*mcp.Tool
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, tool)
		}
		b, _ := json.Marshal(all)
		return string(b)
	}
	a, b := mcpTools(viaFile), mcpTools(viaFlags)
	if a != b || !strings.Contains(a, "bird-rest__") || !strings.Contains(a, "get_api_documentation") {
		t.Errorf("MCP tools/list differ or lack the prefixed names and the docs tool:\n%.300s\n%.300s", a, b)
	}
}
