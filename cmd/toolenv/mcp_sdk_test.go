package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/toolenv/toolenv/internal/npmtest"
)

// genOpenAPI writes an OpenAPI 3.1 document of n operations whose
// responses vary over the shapes and formats real APIs document (objects
// with date-time, email, uri, uuid and date strings, enums, nested
// arrays; arrays and strings, which MCP cannot declare as outputSchema).
func genOpenAPI(t *testing.T, n int) string {
	t.Helper()
	str := func(format string) map[string]any {
		s := map[string]any{"type": "string"}
		if format != "" {
			s["format"] = format
		}
		return s
	}
	shapes := []map[string]any{
		{"type": "object", "required": []string{"id", "name"}, "properties": map[string]any{
			"id": map[string]any{"type": "integer"}, "name": str(""), "created": str("date-time"), "email": str("email")}},
		{"type": "object", "properties": map[string]any{
			"url": str("uri"), "uuid": str("uuid"), "day": str("date"), "score": map[string]any{"type": "number", "minimum": 0, "maximum": 1}, "ok": map[string]any{"type": "boolean"}}},
		{"type": "object", "required": []string{"items"}, "properties": map[string]any{
			"items": map[string]any{"type": "array", "items": map[string]any{"type": "object", "required": []string{"k"}, "properties": map[string]any{
				"k": map[string]any{"type": "string", "enum": []string{"a", "b"}}, "v": map[string]any{"type": "integer", "minimum": 3}}}}}},
		{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}}},
		{"type": "string"},
	}
	paths := map[string]any{}
	for i := range n {
		paths[fmt.Sprintf("/items%04d", i)] = map[string]any{"get": map[string]any{
			"operationId": fmt.Sprintf("op_%04d", i),
			"summary":     fmt.Sprintf("Record %d", i),
			"description": fmt.Sprintf("Returns the record of item %d of the catalogue.", i),
			"parameters": []any{
				map[string]any{"name": "q", "in": "query", "required": true, "description": "what to look up", "schema": str("")},
				map[string]any{"name": "n", "in": "query", "schema": map[string]any{"type": "integer", "minimum": 1, "maximum": 10}},
			},
			"responses": map[string]any{"200": map[string]any{"description": "the record",
				"content": map[string]any{"application/json": map[string]any{"schema": shapes[i%len(shapes)]}}}},
		}}
	}
	doc := map[string]any{"openapi": "3.1.0", "info": map[string]any{"title": "generated", "version": "1"}, "paths": paths}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "generated.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sdkReport is what testdata/mcp/sdk-check.mjs prints.
type sdkReport struct {
	Transport       string   `json:"transport"`
	ProtocolVersion string   `json:"protocolVersion"`
	Capabilities    []string `json:"capabilities"`
	Pages           int      `json:"pages"`
	Tools           int      `json:"tools"`
	FirstPageStart  []string `json:"firstPageStart"`
	SchemaCalls     int      `json:"schemaCalls"`
	HasOutputSchema bool     `json:"hasOutputSchema"`
	UnknownToolCode int      `json:"unknownToolCode"`
	PromptsCode     int      `json:"promptsCode"`
	AfterTerminate  int      `json:"afterTerminate"`
	Logs            []string `json:"logs"`
	Problems        []string `json:"problems"`
	Stderr          string   `json:"stderr"`
}

// TestMCPTypeScriptSDK drives toolenv with the official TypeScript SDK
// (@modelcontextprotocol/sdk 1.32.2) over streamable HTTP (toolenv serve)
// and stdio (toolenv mcp), on a generated API of 1,100 operations:
// initialize, every page of tools/list (search_tools on the first),
// calls that succeed (each structured result checked by the SDK against
// the tool's outputSchema), a validation error, an unknown tool,
// search_tools, resources, logging, prompts (not offered) and, over HTTP,
// terminateSession. The SDK reports any message that breaks the
// protocol; the run must report none.
func TestMCPTypeScriptSDK(t *testing.T) {
	t.Parallel() // waits on the node clients
	tools := npmtest.Require(t)
	const ops = 1100
	doc := genOpenAPI(t, ops)
	script := filepath.Join(tools.ScriptDir(t), "sdk-check.mjs")
	src, err := os.ReadFile("testdata/mcp/sdk-check.mjs")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base, stop := serveInBackground(t, "--store", ":memory:", "--openapi", "gen="+doc)
	defer stop()
	common := map[string]any{
		"call":        map[string]any{"name": "op_0000", "args": map[string]any{"q": "x"}},
		"invalid":     map[string]any{"name": "op_0001", "args": map[string]any{"q": 5}, "param": "q"},
		"searchTools": true, "searchQuery": "record of item 42", "minTools": ops + 1, "collection": "gen", "schemaCalls": 12,
	}
	cases := []struct {
		name string
		cfg  map[string]any
	}{
		{"http", map[string]any{"transport": "http", "url": base + "/mcp"}},
		{"stdio", map[string]any{"transport": "stdio", "command": self,
			"args": []string{"mcp", "--store", ":memory:", "--openapi", "gen=" + doc, "--log-level", "warn"},
			"env":  map[string]string{"TOOLENV_RUN_MAIN": "1"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range common {
				tc.cfg[k] = v
			}
			cfg, _ := json.Marshal(tc.cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			out, err := npmtest.Run(tools.Script(ctx, script, string(cfg)))
			if err != nil {
				t.Fatal(err)
			}
			var rep sdkReport
			if err := json.Unmarshal(out, &rep); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if len(rep.Problems) > 0 {
				t.Fatalf("the TypeScript SDK saw %d problems:\n%s\n%s", len(rep.Problems), rep.Problems, rep.Stderr)
			}
			if rep.Tools != ops+1 || rep.Pages < 2 || rep.FirstPageStart[0] != "search_tools" {
				t.Errorf("tools/list: %d tools in %d pages, first %v", rep.Tools, rep.Pages, rep.FirstPageStart)
			}
			if !rep.HasOutputSchema || rep.SchemaCalls < 10 {
				t.Errorf("outputSchema: the called tool has one: %v; %d tools with one called", rep.HasOutputSchema, rep.SchemaCalls)
			}
			if rep.UnknownToolCode != -32602 || rep.PromptsCode != -32601 {
				t.Errorf("codes: unknown tool %d, prompts/list %d", rep.UnknownToolCode, rep.PromptsCode)
			}
			if !slices.Equal(rep.Capabilities, []string{"logging", "resources", "tools"}) {
				t.Errorf("capabilities %v", rep.Capabilities)
			}
			if tc.name == "http" && (rep.AfterTerminate != 404 || rep.ProtocolVersion != "2025-11-25") {
				t.Errorf("after terminateSession: %d; protocol %q", rep.AfterTerminate, rep.ProtocolVersion)
			}
			t.Logf("%s", out)
		})
	}
}
