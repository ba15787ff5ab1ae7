package openapi

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
)

// FuzzRead feeds document bytes to the loader: it must return a
// collection or an error, never panic or hang, and any collection must
// be well-formed (valid, unique safe names, object inputs whose schemas
// survive a JSON round trip).
func FuzzRead(f *testing.F) {
	for _, pattern := range []string{"testdata/*.yaml", "testdata/*.json", "testdata/bad/*", "../examples/openapi/petstore-swagger2.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/a/{b}":{"get":{"parameters":[{"name":"b","in":"path","required":true,"schema":{"$ref":"#/components/schemas/B"}}],"responses":{"200":{"description":"x"}}}}},"components":{"schemas":{"B":{"type":"object","properties":{"b":{"$ref":"#/components/schemas/B"}}}}}}`))
	f.Add([]byte("openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /x:\n    post:\n      requestBody: {content: {application/json: {schema: {type: [string, integer, 'null']}}}}\n      responses: {default: {description: d}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := Read(ctx, data, LoadOptions{})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("invalid collection: %v", err)
		}
		seen := map[string]bool{}
		for _, tool := range c.Tools {
			if tool.Name == "" || len(tool.Name) > 64 || toolName(tool.Name) != tool.Name || seen[tool.Name] {
				t.Fatalf("bad or repeated tool name %q", tool.Name)
			}
			seen[tool.Name] = true
			if tool.Input == nil || tool.Input.Type != "object" {
				t.Fatalf("%s: input is not an object schema", tool.Name)
			}
			raw, err := toolenv.MarshalJSONNoHTML(tool)
			if err != nil {
				t.Fatalf("%s does not marshal: %v", tool.Name, err)
			}
			var back toolenv.Tool
			if err := toolenv.DecodeJSON(raw, &back); err != nil {
				t.Fatalf("%s does not read back: %v", tool.Name, err)
			}
		}
	})
}
