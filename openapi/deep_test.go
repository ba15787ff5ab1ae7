package openapi

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// TestDeepSchemaIsALoadError: a document whose request body nests 600
// levels is refused with the file and the tool named (it used to load,
// and panic the MCP registration later).
func TestDeepSchemaIsALoadError(t *testing.T) {
	inner := `{"type": "string"}`
	for range 599 {
		inner = `{"type": "object", "properties": {"x": ` + inner + `}}`
	}
	doc := `{"openapi": "3.0.3", "info": {"title": "Deep", "version": "1"}, "paths": {"/deep": {"post": {"operationId": "postDeep",
	  "requestBody": {"content": {"application/json": {"schema": ` + inner + `}}},
	  "responses": {"200": {"description": "ok"}}}}}}`
	path := filepath.Join(t.TempDir(), "deep.json")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(context.Background(), path, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "postDeep") || !strings.Contains(err.Error(), "levels") {
		t.Fatalf("Load: %v", err)
	}
	if _, err := Read(context.Background(), []byte(doc), LoadOptions{}); err == nil || !strings.Contains(err.Error(), "postDeep") {
		t.Fatalf("Read: %v", err)
	}
	_ = toolenv.MaxSchemaDepth
}
