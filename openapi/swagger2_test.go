package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"go.yaml.in/yaml/v3"
)

// TestSwagger2Petstore loads a Swagger 2.0 document with the shapes real
// APIs use, as YAML and as JSON: body parameters with $refs to
// definitions, formData (urlencoded and a multipart file upload),
// collectionFormat csv/multi/pipes and the csv default, shared and
// path-level parameters, shared responses, security definitions,
// produces/consumes, host/basePath/schemes, examples, deprecation.
func TestSwagger2Petstore(t *testing.T) {
	ctx := context.Background()
	c, err := Load(ctx, filepath.Join("..", "examples", "openapi", "petstore-swagger2.yaml"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "examples", "openapi", "petstore-swagger2.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var node yaml.Node
	if err := yaml.Unmarshal(raw, &node); err != nil {
		t.Fatal(err)
	}
	var js strings.Builder
	orderedJSON(&js, &node)
	fromJSON, err := Read(ctx, []byte(js.String()), LoadOptions{Name: c.Name})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := toolJSON(t, c.Tools), toolJSON(t, fromJSON.Tools); a != b {
		t.Errorf("the JSON form loads differently:\n%s\n%s", a, b)
	}
	var names []string
	for _, tool := range c.Tools {
		names = append(names, tool.Name)
	}
	// Document order, paths then methods as written.
	want := []string{"addPet", "findPetsByStatus", "findPetsByTags", "getPetById", "updatePetWithForm", "deletePet", "uploadFile", "placeOrder"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	if c.Name != "petstore-swagger2" || c.Version != "1.0.7" || c.Policy.Validation != toolenv.ValidationStrict {
		t.Errorf("collection %s %s %v", c.Name, c.Version, c.Policy)
	}
	check := func(name string, f func(tool *toolenv.Tool) string) {
		t.Helper()
		if msg := f(c.Tool(name)); msg != "" {
			t.Errorf("%s: %s", name, msg)
		}
	}
	check("addPet", func(tool *toolenv.Tool) string {
		// The body's $ref to Pet, inlined, its properties in the
		// definition's order (readOnly id left out of the input).
		if got := strings.Join(tool.Input.Names(), ","); got != "name,category,photoUrls,tags,status" {
			return "input " + got
		}
		if fmt.Sprint(tool.Input.Required) != "[name photoUrls]" || tool.Binding.In["name"] != "body" {
			return fmt.Sprintf("required %v, in %v", tool.Input.Required, tool.Binding.In)
		}
		if tool.Binding.BaseURL != "https://petstore.example.org:8443/v2" || tool.Binding.Path != "/pet" || tool.Binding.Method != "POST" {
			return fmt.Sprintf("binding %+v", tool.Binding)
		}
		if tool.Output == nil || tool.Output.Prop("id") == nil || tool.Group != "pet" || tool.GroupDescription == "" {
			return "output or group missing"
		}
		return ""
	})
	check("findPetsByStatus", func(tool *toolenv.Tool) string {
		st := tool.Input.Prop("status")
		if st == nil || st.Type != "array" || len(st.Items.Enum) != 3 || tool.Meta[MetaArrayFormat+"status"] != "csv" {
			return fmt.Sprintf("status %v, meta %v", st, tool.Meta)
		}
		if l := tool.Input.Prop("limit"); l == nil || fmt.Sprint(l.Default) != "20" || *l.Maximum != 100 {
			return fmt.Sprintf("the shared limit parameter %v", l)
		}
		if string(tool.OutputExample) == "" {
			return "the response's example is lost"
		}
		return ""
	})
	check("findPetsByTags", func(tool *toolenv.Tool) string {
		got := fmt.Sprint(tool.Meta[MetaArrayFormat+"tags"], tool.Meta[MetaArrayFormat+"ids"], tool.Meta[MetaArrayFormat+"sort"])
		if got != "csvpipes" || tool.Deprecated == nil {
			return fmt.Sprintf("array formats %q (want csv by default, multi as repetitions, pipes), deprecated %v", got, tool.Deprecated)
		}
		return ""
	})
	check("updatePetWithForm", func(tool *toolenv.Tool) string {
		if got := strings.Join(tool.Input.Names(), ","); got != "petId,name,status" {
			return "input " + got
		}
		if fmt.Sprint(tool.Input.Required) != "[petId status]" || tool.Meta["content_type"] != "application/x-www-form-urlencoded" {
			return fmt.Sprintf("required %v, meta %v", tool.Input.Required, tool.Meta)
		}
		if tool.Input.Prop("name").Extra["x-formData-name"] != nil {
			return "the converter's x-formData-name is left on the field"
		}
		return ""
	})
	check("uploadFile", func(tool *toolenv.Tool) string {
		if f := tool.Input.Prop("file"); f == nil || f.Type != "string" || f.Format != "binary" || tool.Meta["content_type"] != "multipart/form-data" {
			return fmt.Sprintf("file %v, meta %v", f, tool.Meta)
		}
		return ""
	})
	check("deletePet", func(tool *toolenv.Tool) string {
		if tool.Binding.In["api_key"] != "header" || tool.Binding.In["petId"] != "path" {
			return fmt.Sprintf("in %v", tool.Binding.In)
		}
		return ""
	})
}

// TestSwagger2Refused: what the conversion would lose is refused with an
// error naming the place and the construct; what cannot be served gets
// the error an OpenAPI 3 document gets.
func TestSwagger2Refused(t *testing.T) {
	head := "swagger: \"2.0\"\ninfo: {title: t, version: \"1\"}\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"tsv", head + "paths:\n  /a:\n    get:\n      parameters:\n        - {name: ids, in: query, type: array, items: {type: string}, collectionFormat: tsv}\n      responses: {'200': {description: ok}}\n",
			"#/paths/~1a/get/parameters/0: collectionFormat tsv of parameter \"ids\" has no OpenAPI 3 equivalent"},
		{"file ref", head + "paths:\n  /a:\n    get:\n      responses: {'200': {description: ok, schema: {$ref: 'defs.yaml#/Pet'}}}\n",
			"#/paths/~1a/get/responses/200/schema: $ref \"defs.yaml#/Pet\" names another file"},
		{"two bodies", head + "paths:\n  /a:\n    post:\n      parameters:\n        - {name: a, in: body, schema: {type: object}}\n        - {name: b, in: body, schema: {type: object}}\n      responses: {'200': {description: ok}}\n",
			"POST /a: 2 body parameters"},
		{"body and form", head + "paths:\n  /a:\n    parameters:\n      - {name: f, in: formData, type: string}\n    post:\n      parameters:\n        - {name: a, in: body, schema: {type: object}}\n      responses: {'200': {description: ok}}\n",
			"POST /a: a body parameter (#/paths/~1a/post/parameters/0) beside formData parameters (#/paths/~1a/parameters/0)"},
		{"file in query", head + "paths:\n  /a:\n    get:\n      parameters:\n        - {name: f, in: query, type: file}\n      responses: {'200': {description: ok}}\n",
			"parameter \"f\" of type file is in query"},
		{"unknown place", head + "paths:\n  /a:\n    get:\n      parameters:\n        - {name: f, in: cookie, type: string}\n      responses: {'200': {description: ok}}\n",
			"parameter \"f\" is in \"cookie\", which Swagger 2.0 does not have"},
		{"host with scheme", head + "host: https://api.example.org\npaths: {}\n", "#/host \"https://api.example.org\" is not a host name"},
		{"unresolved ref", head + "definitions: {Pet: {type: object}}\npaths:\n  /a:\n    get:\n      responses: {'200': {description: ok, schema: {$ref: '#/definitions/Pett'}}}\n",
			"#/definitions has no \"Pett\" (did you mean \"Pet\"?)"},
		{"duplicate operationIds", head + "paths:\n  /a:\n    get: {operationId: x, responses: {'200': {description: ok}}}\n  /b:\n    get: {operationId: x, responses: {'200': {description: ok}}}\n",
			"duplicate operationId \"x\""},
		{"no operations", head + "paths: {}\n", "the document describes no operations"},
		{"version", "swagger: \"1.2\"\ninfo: {title: t, version: \"1\"}\npaths: {}\n", "unsupported Swagger version \"1.2\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(context.Background(), []byte(tc.doc), LoadOptions{Name: "t"})
			if err == nil {
				t.Fatal("loaded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			var te *toolenv.Error
			if !errors.As(err, &te) || te.Status != toolenv.StatusBadRequest {
				t.Errorf("error %T %v is not a bad_request toolenv.Error", err, err)
			}
		})
	}
}

// genSwagger2 writes a Swagger 2.0 document with random operations of
// the shapes real APIs use, and what a faithful import makes of each.
func genSwagger2(r *rand.Rand) (doc map[string]any, want map[string]genOp) {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	defs := map[string]any{}
	for i := range 1 + r.IntN(3) {
		props := map[string]any{}
		var required []any
		for j := range 1 + r.IntN(4) {
			name := fmt.Sprintf("f%d_%d", i, j)
			props[name] = map[string]any{"type": pick("string", "integer", "boolean", "number")}
			if r.IntN(2) == 0 {
				required = append(required, name)
			}
		}
		d := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			d["required"] = required
		}
		defs[fmt.Sprintf("Def%d", i)] = d
	}
	doc = map[string]any{
		"swagger": "2.0", "info": map[string]any{"title": "gen", "version": "1"},
		"host": "api.example.org", "basePath": pick("/", "/v1", "/api/v2"), "schemes": []any{pick("https", "http")},
		"consumes": []any{"application/json"}, "produces": []any{"application/json"},
		"securityDefinitions": map[string]any{"key": map[string]any{"type": "apiKey", "in": "header", "name": "X-Key"}},
		"security":            []any{map[string]any{"key": []any{}}},
		"definitions":         defs,
	}
	want = map[string]genOp{}
	paths := map[string]any{}
	for i := range 1 + r.IntN(6) {
		path := fmt.Sprintf("/r%d/{id}", i)
		op := map[string]any{"operationId": fmt.Sprintf("op%d", i), "responses": map[string]any{"200": map[string]any{"description": "ok", "schema": map[string]any{"$ref": "#/definitions/Def0"}}}}
		g := genOp{in: map[string]string{"id": "path"}, formats: map[string]string{}, required: map[string]bool{"id": true}}
		params := []any{map[string]any{"name": "id", "in": "path", "required": true, "type": "string"}}
		method := pick("get", "post", "put", "delete")
		for j := range r.IntN(3) {
			name := fmt.Sprintf("q%d", j)
			p := map[string]any{"name": name, "in": pick("query", "header")}
			if r.IntN(2) == 0 {
				p["type"] = "array"
				p["items"] = map[string]any{"type": pick("string", "integer")}
				cf := pick("", "csv", "ssv", "pipes", "multi")
				if cf != "" {
					p["collectionFormat"] = cf
				}
				switch {
				case p["in"] == "header":
					g.formats[name] = "csv"
				case cf == "" || cf == "csv":
					g.formats[name] = "csv"
				case cf == "ssv", cf == "pipes":
					g.formats[name] = cf
				}
			} else {
				p["type"] = pick("string", "integer", "boolean")
			}
			if r.IntN(2) == 0 {
				p["required"] = true
				g.required[name] = true
			}
			g.in[name] = p["in"].(string)
			params = append(params, p)
		}
		if method != "get" && method != "delete" {
			if r.IntN(2) == 0 {
				def := fmt.Sprintf("Def%d", r.IntN(len(defs)))
				body := map[string]any{"name": "payload", "in": "body", "required": r.IntN(2) == 0, "schema": map[string]any{"$ref": "#/definitions/" + def}}
				params = append(params, body)
				d := defs[def].(map[string]any)
				req := map[string]bool{}
				for _, n := range asList(d["required"]) {
					req[n.(string)] = true
				}
				for n := range d["properties"].(map[string]any) {
					g.in[n] = "body"
					if body["required"] == true && req[n] {
						g.required[n] = true
					}
				}
			} else {
				op["consumes"] = []any{pick("application/x-www-form-urlencoded", "multipart/form-data")}
				for j := range 1 + r.IntN(3) {
					name := fmt.Sprintf("form%d", j)
					p := map[string]any{"name": name, "in": "formData", "type": pick("string", "integer")}
					if j == 0 && op["consumes"].([]any)[0] == "multipart/form-data" {
						p["type"] = "file"
					}
					if r.IntN(2) == 0 {
						p["required"] = true
						g.required[name] = true
					}
					g.in[name] = "body"
					params = append(params, p)
				}
			}
		}
		op["parameters"] = params
		paths[path] = map[string]any{method: op}
		want[fmt.Sprintf("op%d", i)] = g
	}
	doc["paths"] = paths
	return doc, want
}

type genOp struct {
	in       map[string]string
	formats  map[string]string
	required map[string]bool
}

// TestSwagger2Generated: generated Swagger 2.0 documents load as JSON and
// as YAML into the same tools, each parameter where the document puts
// it, required as it says, its array format as its collectionFormat
// says, the server as host, basePath and scheme say; and Document of the
// collection is an OpenAPI 3.1 document that loads again to the same
// inputs.
func TestSwagger2Generated(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 0))
	ctx := context.Background()
	for i := range 60 {
		doc, want := genSwagger2(r)
		js, _ := json.Marshal(doc)
		ym, _ := yaml.Marshal(doc)
		c, err := Read(ctx, js, LoadOptions{Name: "gen"})
		if err != nil {
			t.Fatalf("doc %d: %v\n%s", i, err, js)
		}
		cy, err := Read(ctx, ym, LoadOptions{Name: "gen"})
		if err != nil {
			t.Fatalf("doc %d as YAML: %v", i, err)
		}
		if a, b := toolJSON(t, c.Tools), toolJSON(t, cy.Tools); a != b {
			t.Fatalf("doc %d: JSON and YAML load differently", i)
		}
		if len(c.Tools) != len(want) {
			t.Fatalf("doc %d: %d tools, want %d", i, len(c.Tools), len(want))
		}
		base := fmt.Sprintf("%s://api.example.org%s", doc["schemes"].([]any)[0], strings.TrimRight(doc["basePath"].(string), "/"))
		for _, tool := range c.Tools {
			g := want[tool.Name]
			if tool.Binding.BaseURL != base {
				t.Errorf("doc %d %s: base URL %q, want %q", i, tool.Name, tool.Binding.BaseURL, base)
			}
			if fmt.Sprint(tool.Binding.In) != fmt.Sprint(g.in) {
				t.Errorf("doc %d %s: in %v, want %v", i, tool.Name, tool.Binding.In, g.in)
			}
			for _, name := range tool.Input.Names() {
				if tool.Input.IsRequired(name) != g.required[name] {
					t.Errorf("doc %d %s: %s required %v, want %v", i, tool.Name, name, tool.Input.IsRequired(name), g.required[name])
				}
				if got := tool.Meta[MetaArrayFormat+name]; got != g.formats[name] {
					t.Errorf("doc %d %s: %s array format %q, want %q", i, tool.Name, name, got, g.formats[name])
				}
			}
		}
		again, err := Read(ctx, mustJSON(t, Document(c, base)), LoadOptions{Name: "gen"})
		if err != nil {
			t.Fatalf("doc %d: the export does not load: %v", i, err)
		}
		for _, tool := range c.Tools {
			if a, b := toolJSON(t, tool.Input), toolJSON(t, again.Tool(tool.Name).Input); a != b {
				t.Errorf("doc %d %s: input changed through the export:\n%s\n%s", i, tool.Name, a, b)
			}
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := toolenv.MarshalJSONNoHTML(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// orderedJSON writes a YAML document as JSON, keys in their order.
func orderedJSON(b *strings.Builder, n *yaml.Node) {
	switch n.Kind {
	case yaml.DocumentNode:
		orderedJSON(b, n.Content[0])
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			b.Write(k)
			b.WriteByte(':')
			orderedJSON(b, n.Content[i+1])
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			orderedJSON(b, c)
		}
		b.WriteByte(']')
	default:
		var v any
		_ = n.Decode(&v)
		raw, _ := json.Marshal(v)
		b.Write(raw)
	}
}
