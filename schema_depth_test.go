package toolenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// deepSchema writes the JSON of a schema nesting depth levels through one
// keyword: properties, items, anyOf, or a raw keyword toolenv keeps
// verbatim (not, additionalProperties).
func deepSchema(shape string, depth int) string {
	inner := `{"type": "string"}`
	for range depth - 1 {
		switch shape {
		case "properties":
			inner = `{"type": "object", "properties": {"x": ` + inner + `}}`
		case "items":
			inner = `{"type": "array", "items": ` + inner + `}`
		case "anyOf":
			inner = `{"anyOf": [{"type": "null"}, ` + inner + `]}`
		case "not":
			inner = `{"not": ` + inner + `}`
		case "additionalProperties":
			inner = `{"type": "object", "additionalProperties": ` + inner + `}`
		}
	}
	return inner
}

func writeDeepCollection(t *testing.T, shape string, depth int) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, CollectionFile), []byte(`{"name": "deep", "kind": "openapi", "backend": {"type": "virtual"}}`), 0o644)
	tools := fmt.Sprintf(`[{"name": "shallow", "input": {"type": "object"}},
	  {"name": "deep_tool", "input": {"type": "object", "properties": {"q": %s}}}]`, deepSchema(shape, depth))
	os.WriteFile(filepath.Join(dir, ToolsFile), []byte(tools), 0o644)
	return dir
}

// TestDeepSchemasAreLoadErrors: a tools.json whose input schema nests 600
// levels (which panicked the MCP registration) is refused when the
// collection is read, with the file and the tool named; at the limit it
// loads.
func TestDeepSchemasAreLoadErrors(t *testing.T) {
	for _, shape := range []string{"properties", "items", "anyOf", "not", "additionalProperties"} {
		t.Run(shape, func(t *testing.T) {
			_, err := ReadCollection(writeDeepCollection(t, shape, 600))
			if err == nil || !strings.Contains(err.Error(), ToolsFile) || !strings.Contains(err.Error(), `"deep_tool"`) || !strings.Contains(err.Error(), "levels") {
				t.Fatalf("600 levels: %v", err)
			}
		})
	}
	// At the limit (the property itself is level 2 under the input).
	if _, err := ReadCollection(writeDeepCollection(t, "properties", MaxSchemaDepth-1)); err != nil {
		t.Fatalf("%d levels: %v", MaxSchemaDepth, err)
	}
	if _, err := ReadCollection(writeDeepCollection(t, "properties", MaxSchemaDepth)); err == nil {
		t.Fatalf("%d levels loaded", MaxSchemaDepth+1)
	}
}

// TestCheckDepthOnGraphs: schemas built in Go may share nodes (checked
// once each, however many paths lead to them) or contain themselves.
// That shared nodes are walked once is counted, not timed: tests never
// assert on wall-clock time.
func TestCheckDepthOnGraphs(t *testing.T) {
	// n levels, each with two properties pointing at the same child:
	// 2^n paths, n nodes. At 12 levels a walk per path would count 4,095
	// nodes; at 60 it would not end.
	for _, levels := range []int{12, 60} {
		s := &Schema{Type: "string"}
		for range levels - 1 {
			s = &Schema{Type: "object", Properties: map[string]*Schema{"a": s, "b": s}}
		}
		if err := s.CheckDepth(); err != nil {
			t.Fatal(err)
		}
		d := newDepthWalk()
		// The leaf is measured where it is met, not walked.
		if n := d.depth(s); n != levels || d.walked != levels-1 {
			t.Fatalf("depth %d, %d nodes walked; want %d and %d (shared nodes walked again)", n, d.walked, levels, levels-1)
		}
	}
	loop := &Schema{Type: "object", Properties: map[string]*Schema{}}
	loop.Properties["self"] = &Schema{Type: "array", Items: loop}
	if err := loop.CheckDepth(); err == nil || !strings.Contains(err.Error(), "contains itself") {
		t.Fatalf("cycle: %v", err)
	}
	c := NewCollection("g", "openapi", []*Tool{{Name: "loop", Input: loop}})
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `tool "loop": input schema`) {
		t.Fatalf("Validate: %v", err)
	}
}

func FuzzCheckDepth(f *testing.F) {
	f.Add(deepSchema("properties", 5))
	f.Add(deepSchema("not", 70))
	f.Add(`{"type": "object", "x-a": "{{{{[[[["}`)
	f.Fuzz(func(t *testing.T, raw string) {
		var s Schema
		if err := s.UnmarshalJSON([]byte(raw)); err != nil {
			return
		}
		err := s.CheckDepth()
		if err == nil && jsonDepth([]byte(raw)) > 2*MaxSchemaDepth+2 {
			t.Fatalf("JSON %d deep passed the check", jsonDepth([]byte(raw)))
		}
	})
}

// TestCheckSchemasSharedNodes: CheckSchemas measures a schema shared by
// many tools once, and a shared node met at depth 1 in one tool still
// counts at its real depth in another that nests it deep, whichever tool
// comes first.
func TestCheckSchemasSharedNodes(t *testing.T) {
	shared := &Schema{Type: "object", Properties: map[string]*Schema{}}
	leaf := shared
	for range 9 { // shared is 10 levels deep
		next := &Schema{Type: "object"}
		leaf.Properties = map[string]*Schema{"x": next}
		leaf = next
	}
	deep := shared
	for range MaxSchemaDepth - 5 { // shared under 59 levels: 69 in all
		deep = &Schema{Type: "object", Properties: map[string]*Schema{"y": deep}}
	}
	shallow := &Tool{Name: "shallow", Input: shared}
	nested := &Tool{Name: "nested", Input: deep}
	for _, tools := range [][]*Tool{{shallow, nested}, {nested, shallow}} {
		err := CheckSchemas(tools)
		if !errors.Is(err, ErrSchemaTooDeep) || !strings.Contains(err.Error(), `tool "nested"`) {
			t.Errorf("%s then %s: %v, want nested too deep", tools[0].Name, tools[1].Name, err)
		}
	}
	many := make([]*Tool, 1000)
	for i := range many {
		many[i] = &Tool{Name: fmt.Sprint("t", i), Input: shared}
	}
	if err := CheckSchemas(many); err != nil {
		t.Fatal(err)
	}
	d := newDepthWalk()
	for _, tl := range many {
		if err := d.check(tl.Input); err != nil {
			t.Fatal(err)
		}
	}
	if d.walked != 9 {
		t.Errorf("%d nodes walked for 1,000 tools sharing one 10-node schema (one a leaf), want 9", d.walked)
	}
}

// TestCheckSchemasNamesTheFirstTool: a list long enough to be checked on
// several cores still names the first tool that fails, wherever the
// failing tools sit.
func TestCheckSchemasNamesTheFirstTool(t *testing.T) {
	deep := &Schema{Type: "string"}
	for range MaxSchemaDepth + 1 {
		deep = &Schema{Type: "object", Properties: map[string]*Schema{"x": deep}}
	}
	flat := ObjectSchema()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const n = 20000
	for _, bad := range [][]int{{n - 1}, {n / 2, n - 1}, {3, n / 2}, {n/4 + 1, 3*n/4 + 1}} {
		tools := make([]*Tool, n)
		for i := range tools {
			tools[i] = &Tool{Name: fmt.Sprint("t", i), Input: flat}
		}
		for _, i := range bad {
			tools[i].Input = deep
		}
		err := CheckSchemas(tools)
		if want := fmt.Sprintf(`tool "t%d"`, bad[0]); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("deep at %v: %v, want an error naming %s", bad, err, want)
		}
	}
}
