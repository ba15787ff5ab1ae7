package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/invoke"
)

func mustSchema(t testing.TB, js string) *toolenv.Schema {
	t.Helper()
	var s toolenv.Schema
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return &s
}

// TestMCPOutputSchema: a tool whose output schema is known is listed with
// it when MCP allows it (an object schema that compiles); each answer
// that conforms is the structured content, each that does not is an
// error result that says where, never a result breaking the schema. The
// answers come from a real upstream on loopback through the pipeline.
func TestMCPOutputSchema(t *testing.T) {
	const person = `{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"},"email":{"type":"string","format":"email"},` +
		`"tags":{"type":"array","items":{"type":"string"}}},"required":["id","name"]}`
	answers := map[string]string{
		"/good":      `{"id":1,"name":"Ada","email":"ada@example.org","tags":["a"]}`,
		"/extra":     `{"id":2,"name":"Bob","nickname":"b"}`,
		"/wrongtype": `{"id":"one","name":"Ada"}`,
		"/missing":   `{"name":"Ada"}`,
		"/badformat": `{"id":3,"name":"Cy","email":"not an address"}`,
		"/notobject": `[1,2]`,
		"/array":     `[{"id":1}]`,
		"/ref":       `{"id":1}`,
		"/int32":     `{"n":4294967296}`,
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := answers[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}))
	defer up.Close()
	cases := []struct {
		tool     string
		output   string
		listed   bool   // listed with an outputSchema
		isError  bool   // the call is an error result
		problem  string // in the error's text and _meta
		structed bool   // the result has structured content
	}{
		{"good", person, true, false, "", true},
		{"extra", person, true, false, "", true},
		{"wrongtype", person, true, true, "/id", false},
		{"missing", person, true, true, "id", false},
		{"badformat", person, true, true, "email", false},
		{"notobject", person, true, true, "not a JSON object", false},
		{"array", `{"type":"array","items":{"type":"object"}}`, false, false, "", false},
		{"ref", `{"type":"object","properties":{"id":{"$ref":"#/components/schemas/Id"}}}`, false, false, "", true},
		{"int32", `{"type":"object","properties":{"n":{"type":"integer","format":"int32"}}}`, true, true, "/n", false},
	}
	var tools []*toolenv.Tool
	for _, tc := range cases {
		tools = append(tools, &toolenv.Tool{
			Name: tc.tool, Description: "returns " + tc.tool, Input: toolenv.ObjectSchema(), Output: mustSchema(t, tc.output),
			Binding: &toolenv.Binding{Method: "GET", Path: "/" + tc.tool, BaseURL: up.URL},
		})
	}
	c := toolenv.NewCollection("people", "openapi", tools)
	reg := invoke.NewRegistry()
	backend, err := virtual.Build(virtual.Options{UpstreamDirect: true, Tools: c.Tools})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(c, backend); err != nil {
		t.Fatal(err)
	}
	srv, err := NewMCPServer(MCPOptions{Pipeline: invoke.New(reg, invoke.Options{}), Registry: reg, SearchAbove: -1})
	if err != nil {
		t.Fatal(err)
	}
	fx := &mcpFixture{reg: reg, server: srv, pipeline: invoke.New(reg, invoke.Options{})}
	transports(t, fx, func(t *testing.T, url string) {
		cs := connectWith(t, srv, url, nil, "2025-11-25")
		ctx := context.Background()
		list, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		listed := map[string]any{}
		for _, tl := range list.Tools {
			listed[tl.Name] = tl.OutputSchema
		}
		for _, tc := range cases {
			t.Run(tc.tool, func(t *testing.T) {
				if has := listed[tc.tool] != nil; has != tc.listed {
					t.Errorf("listed with an outputSchema: %v, want %v (%v)", has, tc.listed, listed[tc.tool])
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool})
				if err != nil {
					t.Fatal(err)
				}
				if res.Meta[MCPMetaSource] != "upstream" {
					t.Fatalf("answered by %v, want the upstream: %s", res.Meta[MCPMetaSource], resultText(t, res))
				}
				text := resultText(t, res)
				if res.IsError != tc.isError {
					t.Fatalf("isError %v, want %v: %s", res.IsError, tc.isError, text)
				}
				if (res.StructuredContent != nil) != tc.structed {
					t.Errorf("structured content %v, want %v", res.StructuredContent, tc.structed)
				}
				if tc.problem != "" {
					probs, _ := res.Meta[MCPMetaOutputProblems].([]any)
					if !strings.Contains(text, "output_mismatch") || !strings.Contains(text, tc.problem) || len(probs) == 0 ||
						!strings.Contains(text, strings.TrimSpace(answers["/"+tc.tool])[:2]) {
						t.Errorf("the error does not say what breaks the schema (%q), or drops the answer: %s %v", tc.problem, text, res.Meta)
					}
				}
				if tc.listed && !res.IsError {
					o, err := compileOutput(mustSchema(t, tc.output))
					if err != nil {
						t.Fatal(err)
					}
					sc, _ := json.Marshal(res.StructuredContent)
					if p := o.check(sc); p != nil {
						t.Errorf("structured content breaks the listed schema: %v", p)
					}
				}
			})
		}
	})
}

// TestMCPSearchToolsOutputSchema: search_tools is listed with the schema
// of its answer, and its answers conform to it.
func TestMCPSearchToolsOutputSchema(t *testing.T) {
	fx := newMCPFixtureWith(t, MCPOptions{SearchAbove: 3})
	cs := connectMemory(t, fx.server)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if list.Tools[0].Name != "search_tools" || list.Tools[0].OutputSchema == nil {
		t.Fatalf("first tool %+v", list.Tools[0])
	}
	raw, _ := json.Marshal(list.Tools[0].OutputSchema)
	o, err := compileOutput(mustSchema(t, string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	_, res := callSearch(t, cs, map[string]any{"query": "weather in a city", "limit": 3})
	sc, _ := json.Marshal(res.StructuredContent)
	if p := o.check(sc); p != nil {
		t.Fatalf("search_tools' answer breaks its schema: %v: %s", p, sc)
	}
}
