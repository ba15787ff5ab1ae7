package mcpsource

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolenv/toolenv/internal/schemacheck"
	"github.com/toolenv/toolenv/validate"
)

// olderDraftTool returns a tool whose input schema is written in an
// older draft's idioms, as MCP servers built with older schema libraries
// list them: draft-04's boolean exclusive bounds (zod-to-json-schema's
// OpenAPI 3 target, pdf-reader-mcp's read_pdf), tuples with
// additionalItems, dependencies, lists of types, draft-03's required
// flags, OpenAPI 3.0's nullable, an older $schema.
func olderDraftTool(rng *rand.Rand, i int) *mcp.Tool {
	pages := map[string]any{"type": "integer", "minimum": 0, "exclusiveMinimum": true}
	props := map[string]any{
		"sources": map[string]any{"type": "array", "items": map[string]any{"type": "object",
			"properties": map[string]any{"path": map[string]any{"type": "string"}, "pages": map[string]any{"type": "array", "items": pages}}}},
		"include_full_text": map[string]any{"type": "boolean"},
	}
	s := map[string]any{"type": "object", "properties": props, "required": []any{"sources"}}
	switch i % 6 {
	case 1:
		s["$schema"] = "http://json-schema.org/draft-04/schema#"
		props["limit"] = map[string]any{"type": "number", "maximum": 100, "exclusiveMaximum": true}
	case 2:
		props["point"] = map[string]any{"type": "array", "items": []any{map[string]any{"type": "number"}, map[string]any{"type": "number"}}, "additionalItems": false}
		s["dependencies"] = map[string]any{"point": []any{"include_full_text"}}
	case 3:
		props["id"] = map[string]any{"type": []any{"string", "integer"}}
		props["note"] = map[string]any{"type": "string", "nullable": true}
	case 4:
		s["$schema"] = "http://json-schema.org/draft-03/schema#"
		props["query"] = map[string]any{"type": "string", "required": true}
		delete(s, "required")
	case 5:
		s["$schema"] = "http://json-schema.org/draft-07/schema#"
		props["n"] = map[string]any{"type": "integer", "exclusiveMinimum": rng.IntN(5)}
	}
	return &mcp.Tool{Name: fmt.Sprintf("read_pdf_%d", i), Description: "reads PDFs", InputSchema: s}
}

// TestOlderDraftToolsAreServed: 527 tools whose input schemas use older
// drafts' idioms (as LiveMCPBench's servers list them) are all served,
// none left out; each is listed with a schema that compiles as JSON
// Schema 2020-12 as MCP clients compile it, and calls are checked by its
// meaning: a page number on draft-04's exclusive minimum 0 is refused,
// 1 is accepted.
func TestOlderDraftToolsAreServed(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 527))
	var tools []*mcp.Tool
	for i := range 527 {
		tools = append(tools, olderDraftTool(rng, i))
	}
	col, skipped, err := NewCollection("livemcp", tools, CollectionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) > 0 || len(col.Tools) != 527 {
		t.Fatalf("%d tools served, %d left out: %v", len(col.Tools), len(skipped), skipped[:min(3, len(skipped))])
	}
	var v validate.Validator
	for _, tool := range col.Tools {
		raw, _ := tool.Input.MarshalJSON()
		if _, err := schemacheck.CompileJSON(raw); err != nil {
			t.Fatalf("%s is listed with a schema clients cannot compile: %v\n%s", tool.Name, err, raw)
		}
		call := func(page int) bool {
			args := map[string]any{"sources": []any{map[string]any{"path": "a.pdf", "pages": []any{json.Number(fmt.Sprint(page))}}}}
			if tool.Input.Prop("query") != nil {
				args["query"] = "q"
			}
			return len(v.Args(tool.Input, args, false).Problems) == 0
		}
		if call(0) || !call(1) {
			t.Fatalf("%s: page 0 accepted %v, page 1 accepted %v; want draft-04's exclusive minimum kept\n%s", tool.Name, call(0), call(1), raw)
		}
		if tool.Input.Prop("query") != nil && !tool.Input.IsRequired("query") {
			t.Errorf("%s: draft-03's required flag is lost: %s", tool.Name, raw)
		}
	}
}
