package openapi

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/npmtest"
	"github.com/toolenv/toolenv/internal/oaslint"
)

// genCollection makes a collection with the shapes that trip OpenAPI
// linters: routes that collide or differ only in parameter names, path
// placeholders no argument fills and path arguments the path has no
// place for, keywords that are no JSON Schema (ToolBench's example_value
// and optional, a source's own), values of the wrong kind for real
// keywords (a boolean exclusiveMinimum), types that are no JSON type,
// enums at odds with their type, nested schemas in keywords toolenv
// keeps raw, hidden tools in a collection with sessions, deprecated
// tools, groups with and without descriptions, examples good and bad.
func genCollection(r *rand.Rand, i int) *toolenv.Collection {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	var schema func(depth int) *toolenv.Schema
	schema = func(depth int) *toolenv.Schema {
		s := &toolenv.Schema{Type: pick("string", "integer", "number", "boolean", "array", "object", "", "str", "int", "null")}
		if r.IntN(3) == 0 {
			s.Description = pick("a value", "The “thing” <b>&</b> more", "")
		}
		s.Extra = map[string]json.RawMessage{}
		switch r.IntN(10) {
		case 0:
			s.Extra["example_value"] = raw(pick("x", "7", ""))
		case 1:
			s.Extra["example_value"] = raw(r.IntN(100))
		case 2:
			s.Extra["optional"] = raw([]string{})
		case 3:
			s.Extra["exclusiveMinimum"] = raw(true)
		case 4:
			s.Extra["not"] = raw(map[string]any{"type": "string", "example_value": "a", "weird key": 1})
		case 5:
			s.Extra["x-toolbench-type"] = raw("STRING")
			s.Extra["toolbench-type"] = raw("STRING")
		case 6:
			s.Extra["uniqueItems"] = raw("yes")
		case 7:
			s.Extra["prefixItems"] = raw([]any{map[string]any{"type": "integer", "example_value": 3}})
		case 8:
			s.Extra["$defs"] = raw(map[string]any{"a": map[string]any{"type": "str", "x-ok": true}})
		}
		if r.IntN(5) == 0 {
			s.Enum = []any{"a", json.Number("1"), true, nil}[:1+r.IntN(4)]
		}
		if s.Type == "object" && depth < 3 {
			s.Properties = map[string]*toolenv.Schema{}
			for j := range r.IntN(3) {
				name := fmt.Sprintf("%s%d", pick("p", "id", "x-y", "a.b", "Ärger"), j)
				s.SetProp(name, schema(depth+1))
				if r.IntN(2) == 0 {
					s.Required = append(s.Required, name)
				}
			}
			switch r.IntN(3) {
			case 0:
				s.AdditionalProperties = raw(map[string]any{"type": "integer", "example_value": 1, "default": 0})
			case 1:
				s.AdditionalProperties = raw(false)
			}
		}
		if s.Type == "array" && depth < 3 {
			s.Items = schema(depth + 1)
		}
		if len(s.Extra) == 0 {
			s.Extra = nil
		}
		return s
	}
	n := 1 + r.IntN(8)
	var tools []*toolenv.Tool
	for j := range n {
		in := toolenv.ObjectSchema()
		for k := range r.IntN(5) {
			name := fmt.Sprintf("%s%d", pick("id", "city", "q", "body", "limit", "Authorization"), k)
			in.SetProp(name, schema(0))
			if r.IntN(2) == 0 {
				in.Required = append(in.Required, name)
			}
		}
		if r.IntN(4) == 0 {
			in.Extra = map[string]json.RawMessage{"optional": raw([]string{})}
		}
		t := &toolenv.Tool{Name: fmt.Sprintf("%s_%d", pick("get", "list", "tool"), j), Input: in}
		if r.IntN(2) == 0 {
			t.Title = pick("Get a thing", "", "Ünïcode title")
		}
		if r.IntN(3) == 0 {
			t.Group = pick("Books", "Weather", "sessions")
			if r.IntN(2) == 0 {
				t.GroupDescription = "what the group does"
			}
		}
		if r.IntN(6) == 0 {
			t.Deprecated = &toolenv.Deprecation{Successor: "get_0"}
		}
		if r.IntN(2) == 0 {
			names := in.Names()
			path := pick("/items", "/items/", "items/{id0}", "/items/{id0}", "/items/{other}", "/v1/{db}/x", "/items/{city1}", "/things/{id0}/{q1}")
			t.Binding = &toolenv.Binding{Method: pick("GET", "POST", "DELETE", "PUT", ""), Path: path, In: map[string]string{}}
			for _, name := range names {
				if r.IntN(4) == 0 {
					t.Binding.In[name] = pick("path", "header", "cookie", "query", "body")
				}
			}
		}
		switch r.IntN(4) {
		case 0:
			t.Output = schema(0)
		case 1:
			t.OutputExample = json.RawMessage(`{"status":"str","data":[]}`)
		}
		for range r.IntN(3) {
			ex := toolenv.Example{Args: map[string]any{}}
			for _, name := range in.Names() {
				ex.Args[name] = pick("a", "b")
			}
			switch r.IntN(3) {
			case 0:
				ex.Response = json.RawMessage(`{"ok":true}`)
			case 1:
				ex.Response = json.RawMessage(`"text"`)
			default:
				ex.Error = "failed"
			}
			t.Examples = append(t.Examples, ex)
		}
		if r.IntN(5) == 0 {
			t.Meta = map[string]string{toolenv.MetaHidden: "true"}
		}
		tools = append(tools, t)
	}
	c := toolenv.NewCollection(fmt.Sprintf("gen%d", i), "openapi", tools)
	c.Policy.Sessions = r.IntN(3) == 0
	if r.IntN(2) == 0 {
		c.Description = "generated"
	}
	return c
}

// TestGeneratedDocumentsLintClean holds Document to Redocly's recommended
// rules and swagger-parser on generated collections: no error, and no
// warning but the two examples/openapi/redocly.yaml turns off and an example that
// does not match its schema (the tool's own).
func TestGeneratedDocumentsLintClean(t *testing.T) {
	tools := npmtest.Require(t)
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(20, 2))
	var files []string
	for i := range 40 {
		c := genCollection(r, i)
		opts := DocumentOptions{ServerURL: "http://127.0.0.1:8080", BearerAuth: i%2 == 0}
		raw, err := toolenv.MarshalJSONNoHTML(DocumentWith(c, opts))
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, fmt.Sprintf("gen%02d.json", i))
		if err := os.WriteFile(f, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	ctx := context.Background()
	rep, err := oaslint.Redocly(ctx, tools, []string{"--extends", "recommended"}, files...)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range rep.Errors() {
		if i < 20 {
			t.Errorf("%s", p)
		}
	}
	allowed := map[string]bool{"info-license": true, "no-invalid-media-type-examples": true, "no-ambiguous-paths": true}
	for _, p := range rep.Warnings() {
		if p.Rule == "no-unused-components" && strings.Contains(p.Pointer, "/$defs/") {
			continue // a tool's own $defs, which the generator does not use
		}
		if (p.Rule == "no-invalid-schema-examples") && strings.Contains(p.Pointer, "/examples/") {
			continue // a tool's own schema examples
		}
		if !allowed[p.Rule] {
			t.Errorf("unexpected warning: %s", p)
		}
	}
	if t.Failed() {
		t.Logf("counts:\n%s", rep.Summary())
	}
	failed, err := oaslint.SwaggerParser(ctx, tools, dir, files...)
	if err != nil {
		t.Fatal(err)
	}
	for f, msg := range failed {
		t.Errorf("swagger-parser: %s: %s", filepath.Base(f), firstLine(msg))
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
