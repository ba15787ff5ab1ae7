package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden from this run")

func load(t *testing.T, path string) *toolenv.Collection {
	t.Helper()
	c, err := Load(context.Background(), path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func toolJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := toolenv.MarshalJSONNoHTML(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func names(c *toolenv.Collection) []string {
	out := make([]string, len(c.Tools))
	for i, t := range c.Tools {
		out[i] = t.Name
	}
	return out
}

func TestLoadPetstore30YAML(t *testing.T) {
	c := load(t, "testdata/petstore.yaml")
	if c.Name != "petstore" || c.Kind != "openapi" || c.Version != "1.2.0" || c.Backend.Type != "virtual" {
		t.Errorf("collection = %s %s %s %s", c.Name, c.Kind, c.Version, c.Backend.Type)
	}
	if c.Policy.Validation != toolenv.ValidationStrict || !c.Policy.Cache {
		t.Errorf("policy = %+v (every parameter and body is typed: strict, cached)", c.Policy)
	}
	want := []string{"listPets", "createPet", "showPetById", "updatePet", "deletePet", "archivePet", "uploadPetPhoto", "get_stores_storeId_inventory"}
	if got := names(c); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("tools in source order = %v, want %v", got, want)
	}
	tests := []struct {
		tool  string
		field string
		got   func(*toolenv.Tool) any
		want  string // JSON
	}{
		{"listPets", "title, description, group", func(t *toolenv.Tool) any { return []string{t.Title, t.Description, t.Group, t.GroupDescription} },
			`["List all pets","Returns the pets in the store, optionally filtered by tag.","pets","Everything about your pets"]`},
		{"listPets", "binding (Accept header ignored, server variable filled)", func(t *toolenv.Tool) any { return t.Binding },
			`{"method":"GET","path":"/pets","base_url":"https://api.petstore.example.com/v1","in":{"X-Request-ID":"header","limit":"query","tags":"query"}}`},
		{"listPets", "input ($ref parameter with its example)", func(t *toolenv.Tool) any { return t.Input },
			`{"type":"object","properties":{"limit":{"type":"integer","description":"How many items to return at one time (max 100)","default":20,"examples":[10],"format":"int32","minimum":1,"maximum":100},"tags":{"type":"array","description":"Tags to filter by","items":{"type":"string"}},"X-Request-ID":{"type":"string","format":"uuid"}}}`},
		{"listPets", "examples from parameters, response from the 200 example", func(t *toolenv.Tool) any { return t.Examples },
			`[{"args":{"limit":10},"response":[{"id":1,"name":"Rex","status":"available","tag":"dog"}]}]`},
		{"createPet", "allOf body flattened, readOnly id left out, required kept", func(t *toolenv.Tool) any { return []any{t.Input.Names(), t.Input.Required, t.Binding.In["owner"]} },
			`[["name","tag","status","weight","secret","owner"],["name"],"body"]`},
		{"createPet", "3.0 nullable and boolean exclusiveMinimum", func(t *toolenv.Tool) any { return []any{t.Input.Prop("tag"), t.Input.Prop("weight")} },
			`[{"type":["string","null"]},{"type":"number","exclusiveMinimum":0}]`},
		{"createPet", "named body examples paired with named responses", func(t *toolenv.Tool) any { return t.Examples },
			`[{"args":{"name":"Tom","tag":"cat"},"response":{"id":10,"name":"Tom","status":"available","tag":"cat"}},{"args":{"name":"Nemo","status":"pending"},"response":{"id":11,"name":"Nemo","status":"pending"}}]`},
		{"createPet", "output from 201, writeOnly secret left out", func(t *toolenv.Tool) any { return t.Output.Names() },
			`["id","name","tag","status","weight"]`},
		{"showPetById", "path-level parameter, required", func(t *toolenv.Tool) any { return []any{t.Input, t.Binding.In} },
			`[{"type":"object","properties":{"petId":{"type":"integer","description":"The id of the pet","examples":[42],"format":"int64","minimum":1}},"required":["petId"]},{"petId":"path"}]`},
		{"updatePet", "optional body: its required properties are not", func(t *toolenv.Tool) any { return t.Input.Required },
			`["petId"]`},
		{"deletePet", "deprecated with x-successor", func(t *toolenv.Tool) any { return t.Deprecated },
			`{"successor":"archivePet","message":"this operation is deprecated in the OpenAPI document"}`},
		{"uploadPetPhoto", "binary body as one argument", func(t *toolenv.Tool) any { return []any{t.Input, t.Meta} },
			`[{"type":"object","properties":{"petId":{"type":"integer"},"body":{"type":"string","format":"binary"}},"required":["petId","body"]},{"body_param":"body","content_type":"image/png"}]`},
		{"get_stores_storeId_inventory", "no operationId: named by method and path; map output", func(t *toolenv.Tool) any { return []any{t.Title, t.Input.Prop("storeId"), t.Output} },
			`["Inventory of a store",{"type":"string","pattern":"^[a-z]{2}-[0-9]+$"},{"type":"object","additionalProperties":{"type":"integer","format":"int32"}}]`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"/"+tt.field, func(t *testing.T) {
			tool := c.Tool(tt.tool)
			if tool == nil {
				t.Fatalf("no tool %s", tt.tool)
			}
			if got := toolJSON(t, tt.got(tool)); got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestLoadLibrary31JSON(t *testing.T) {
	c := load(t, "testdata/library.json")
	if c.Name != "library" || c.Meta["openapi"] != "3.1.0" || c.Policy.Validation != toolenv.ValidationStrict {
		t.Errorf("collection = %s %v %+v", c.Name, c.Meta, c.Policy)
	}
	want := []string{"searchBooks", "addBook", "addBooks", "library_getBook", "updateBook", "listAuthorBooks"}
	if got := names(c); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	tests := []struct {
		tool, field string
		got         func(*toolenv.Tool) any
		want        string
	}{
		{"searchBooks", "3.1 type array, numeric exclusiveMaximum, examples map", func(t *toolenv.Tool) any { return t.Input },
			`{"type":"object","properties":{"q":{"type":"string","description":"Words of the title or an author's name","examples":["tolkien"],"minLength":2},"year":{"type":["integer","null"],"minimum":1450},"sort":{"type":"string","enum":["relevance","year","title"],"default":"relevance"},"page":{"type":"integer","minimum":1,"exclusiveMaximum":1000}},"required":["q"]}`},
		{"searchBooks", "base URL without its trailing slash", func(t *toolenv.Tool) any { return t.Binding.BaseURL }, `"http://127.0.0.1:9000/api"`},
		{"searchBooks", "arrays of objects keep source property order; recursion is cut", func(t *toolenv.Tool) any {
			book := t.Output.Prop("results").Items
			return []any{book.Names(), book.Prop("related").Items}
		}, `[["title","isbn","year","authors","related"],{"type":"object","description":"recursive: another Book, with the same schema as the enclosing one"}]`},
		{"addBook", "closed body (closed is the default), uniqueItems, multipleOf, x- extension", func(t *toolenv.Tool) any {
			return []any{string(t.Input.AdditionalProperties), t.Input.Prop("tags"), t.Input.Prop("price"), t.Input.Prop("format")}
		}, `["",{"type":"array","items":{"type":"string"},"maxItems":5,"uniqueItems":true},{"type":"number","exclusiveMinimum":0,"multipleOf":0.01},{"type":"string","enum":["hardcover","paperback","ebook"],"x-display":"Binding"}]`},
		{"addBook", "examples paired by name", func(t *toolenv.Tool) any { return t.Examples },
			`[{"args":{"authors":[{"born":1892,"name":"J. R. R. Tolkien"}],"format":"paperback","isbn":"9780261102217","title":"The Hobbit"},"response":{"authors":[{"born":1892,"name":"J. R. R. Tolkien"}],"isbn":"9780261102217","title":"The Hobbit","year":1937}},{"args":{"authors":[{"born":null,"name":"Unknown"}],"isbn":"9780393320978","title":"Beowulf"},"response":{"authors":[{"born":null,"name":"Unknown"}],"isbn":"9780393320978","title":"Beowulf","year":null}}]`},
		{"addBooks", "array body under one body argument", func(t *toolenv.Tool) any {
			return []any{t.Input.Names(), t.Input.Required, t.Input.Prop("body").Type, t.Input.Prop("body").Items.Required, t.Binding.In, t.Meta}
		}, `[["body"],["body"],"array",["title","isbn","authors"],{"body":"body"},{"body_param":"body"}]`},
		{"library_getBook", "operationId made safe, original kept", func(t *toolenv.Tool) any { return t.Meta }, `{"operation_id":"library.getBook"}`},
		{"updateBook", "body clashing with a path parameter stays whole; anyOf kept", func(t *toolenv.Tool) any {
			return []any{t.Input.Names(), t.Input.Prop("body").Prop("format"), t.Meta["content_type"]}
		}, `[["isbn","body"],{"anyOf":[{"type":"string","enum":["hardcover","paperback"]},{"type":"null"}]},"application/merge-patch+json"]`},
		{"listAuthorBooks", "cookie parameter, const, output from 2XX", func(t *toolenv.Tool) any {
			return []any{t.Binding.In, t.Input.Prop("lang"), t.Output.Type}
		}, `[{"authorId":"path","lang":"cookie"},{"type":"string","const":"en"},"array"]`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"/"+tt.field, func(t *testing.T) {
			tool := c.Tool(tt.tool)
			if tool == nil {
				t.Fatalf("no tool %s", tt.tool)
			}
			if got := toolJSON(t, tt.got(tool)); got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestLoadSplitFiles follows $refs into another local file, keeping that
// file's property order.
func TestLoadSplitFiles(t *testing.T) {
	c := load(t, "testdata/split/main.yaml")
	if c.Name != "split_across_files" {
		t.Errorf("a generic file name gives way to info.title: got %q", c.Name)
	}
	tool := c.Tool("getWidget")
	if got := toolJSON(t, []any{tool.Input, tool.Output}); got != `[{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]},{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"object","properties":{"size":{"type":"integer"},"colour":{"type":"string"}}}}}]` {
		t.Errorf("got %s", got)
	}
}

// TestLoadGolden compares the whole conversion with golden collections
// (refresh with go test ./openapi -run Golden -update).
func TestLoadGolden(t *testing.T) {
	for _, f := range []string{"petstore.yaml", "library.json"} {
		t.Run(f, func(t *testing.T) {
			c := load(t, filepath.Join("testdata", f))
			got, err := json.MarshalIndent(struct {
				Collection *toolenv.Collection `json:"collection"`
				Tools      []*toolenv.Tool     `json:"tools"`
			}{c, c.Tools}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(f, filepath.Ext(f))+".collection.json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
				t.Errorf("conversion differs from %s (if the change is intended, run go test ./openapi -run Golden -update and review the diff)", golden)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		file string
		want []string // substrings of the error
	}{
		{"bad/not-openapi.json", []string{"not an OpenAPI document", `no "openapi" version field`}},
		{"bad/swagger2.yaml", []string{"#/paths/~1things/get/parameters/0", "collectionFormat tsv", "no OpenAPI 3 equivalent"}},
		{"bad/openapi4.yaml", []string{`unsupported OpenAPI version "4.0.0"`}},
		{"bad/not-yaml.yaml", []string{"neither JSON nor YAML", "line 1"}},
		{"bad/unresolved-ref.yaml", []string{`$ref "#/components/schemas/Order"`, "#/paths/~1orders~1{id}/get/responses/200/content/application~1json/schema", `did you mean "Ordr"`}},
		{"bad/duplicate-operationid.yaml", []string{`duplicate operationId "list"`, "GET /users and GET /groups", "rename one"}},
		{"bad/no-operations.yaml", []string{"no operations"}},
		{"bad/remote-ref.yaml", []string{"https://example.com/schemas.yaml", "local files only"}},
		{"bad/missing.yaml", []string{"no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			_, err := Load(context.Background(), path, LoadOptions{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error does not name the file: %v", err)
			}
			if tt.file != "bad/missing.yaml" && toolenv.StatusOf(err) != toolenv.StatusBadRequest {
				t.Errorf("status = %s, want bad_request", toolenv.StatusOf(err))
			}
		})
	}
}

func TestReadBytes(t *testing.T) {
	data, err := os.ReadFile("testdata/library.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Read(context.Background(), data, LoadOptions{Name: "My Library!"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "my_library" || len(c.Tools) != 6 {
		t.Errorf("name %q, %d tools", c.Name, len(c.Tools))
	}
	split, err := os.ReadFile("testdata/split/main.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read(context.Background(), split, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "can only refer to itself") {
		t.Errorf("a document read from bytes must not read files: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Read(ctx, data, LoadOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: %v", err)
	}
}

func TestLenientWhenSchemasAreLoose(t *testing.T) {
	doc := `openapi: 3.0.3
info: {title: Loose, version: "1"}
paths:
  /search:
    get:
      operationId: search
      parameters:
        - name: q
          in: query
          content:
            text/plain: {}
      responses:
        "200": {description: ok}
`
	c, err := Read(context.Background(), []byte(doc), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Policy.Validation != toolenv.ValidationLenient || !strings.Contains(c.Meta["lenient_because"], `GET /search: parameter "q" has no typed schema`) {
		t.Errorf("policy %+v, meta %v", c.Policy, c.Meta)
	}
	if c.Name != "loose" {
		t.Errorf("name from info.title = %q", c.Name)
	}
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"listPets":              "listPets",
		"pets.list":             "pets_list",
		"get /pets/{id}":        "get_pets_id",
		"Pet Store: list!!":     "Pet_Store_list",
		"__x__":                 "x",
		"ünïcödé":               "n_c_d",
		"":                      "operation",
		strings.Repeat("a", 80): strings.Repeat("a", 55) + "_" + "fnvhash",
	} {
		got := toolName(in)
		if strings.HasSuffix(want, "fnvhash") {
			if len(got) != 64 || !strings.HasPrefix(got, want[:55]) {
				t.Errorf("toolName(%q) = %q", in, got)
			}
			continue
		}
		if got != want {
			t.Errorf("toolName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"Swagger Petstore": "swagger_petstore", "My API (v2)": "my_api_v2", "---": "openapi", "ok-name_1": "ok-name_1"} {
		if got := safeName(in, "openapi"); got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDuplicateNamesAfterSanitizing keeps distinct operationIds distinct
// when making them safe folds them together.
func TestDuplicateNamesAfterSanitizing(t *testing.T) {
	doc := `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{
"/a":{"get":{"operationId":"list.items","responses":{"200":{"description":"ok"}}}},
"/b":{"get":{"operationId":"list items","responses":{"200":{"description":"ok"}}}},
"/c":{"get":{"operationId":"list_items","responses":{"200":{"description":"ok"}}}}}}`
	c, err := Read(context.Background(), []byte(doc), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(c), " "); got != "list_items list_items_2 list_items_3" {
		t.Errorf("names = %s", got)
	}
}

// TestOpenBody lets arguments through that a body accepts without
// listing them.
func TestOpenBody(t *testing.T) {
	doc := `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/notes":{"post":{"operationId":"addNote",
"requestBody":{"required":true,"content":{"application/json":{"schema":{"type":"object","required":["text"],"properties":{"text":{"type":"string"}},"additionalProperties":{"type":"string"}}}}},
"responses":{"201":{"description":"ok"}}}}}}`
	c, err := Read(context.Background(), []byte(doc), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := toolJSON(t, c.Tools[0].Input); got != `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":{"type":"string"}}` {
		t.Errorf("input = %s", got)
	}
}

// doublingRefs is a document whose schemas double at each of 30 levels
// (2^30 nodes if inlined).
func doublingRefs() string {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/x":{"post":{"operationId":"x","requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/S0"}}}},"responses":{"200":{"description":"ok"}}}}},"components":{"schemas":{`)
	for i := 0; i < 30; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"S%d":{"type":"object","properties":{"l":{"$ref":"#/components/schemas/S%d"},"r":{"$ref":"#/components/schemas/S%d"}}}`, i, i+1, i+1)
	}
	b.WriteString(`,"S30":{"type":"string"}}}}`)
	return b.String()
}

// aliasBomb is a YAML "billion laughs" document: 9^7 elements if its
// aliases were expanded.
const aliasBomb = "openapi: 3.0.0\ninfo: {title: t, version: '1'}\nx-a: &a [1,1,1,1,1,1,1,1,1]\nx-b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nx-c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nx-d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\nx-e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nx-f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\nx-g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\npaths:\n  /x:\n    get:\n      operationId: x\n      responses: {'200': {description: ok}}\n"

// schemaNodes counts the nodes of s as a tree, stopping past limit.
func schemaNodes(s *toolenv.Schema, limit int) int {
	n := 0
	var walk func(s *toolenv.Schema)
	walk = func(s *toolenv.Schema) {
		if s == nil || n > limit {
			return
		}
		n++
		for _, c := range s.Properties {
			walk(c)
		}
		walk(s.Items)
		for _, list := range [][]*toolenv.Schema{s.AnyOf, s.OneOf, s.AllOf} {
			for _, c := range list {
				walk(c)
			}
		}
	}
	walk(s)
	return n
}

// TestExponentialRefsAreCapped reads a document whose schemas double at
// each of 30 levels and a YAML alias bomb. The first loads with its
// deepest $refs left unexpanded and its input schema within the node
// budget; the second is refused, saying why. The amount of work is
// checked by counting nodes, not by timing: tests never assert on
// wall-clock time (BenchmarkLoadHostile measures it).
func TestExponentialRefsAreCapped(t *testing.T) {
	c, err := Read(context.Background(), []byte(doublingRefs()), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Meta["schemas_capped"] == "" {
		t.Errorf("meta = %v", c.Meta)
	}
	if n := schemaNodes(c.Tools[0].Input, 2*maxSchemaNodes); n > maxSchemaNodes {
		t.Errorf("the input schema has more than %d nodes (%d counted): the budget did not cap it", maxSchemaNodes, n)
	}
	if _, err := Read(context.Background(), []byte(aliasBomb), LoadOptions{}); err == nil || !strings.Contains(err.Error(), "alias") {
		t.Errorf("alias bomb: %v, want an error naming the aliasing", err)
	}
}

// BenchmarkLoadHostile measures reading TestExponentialRefsAreCapped's
// documents.
func BenchmarkLoadHostile(b *testing.B) {
	docs := [][]byte{[]byte(doublingRefs()), []byte(aliasBomb)}
	for b.Loop() {
		for _, d := range docs {
			_, _ = Read(context.Background(), d, LoadOptions{})
		}
	}
}

// BenchmarkLoad measures importing the test documents (figures in
// docs/frontends.md).
func BenchmarkLoad(b *testing.B) {
	for _, f := range []string{"petstore.yaml", "library.json"} {
		b.Run(f, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Load(context.Background(), filepath.Join("testdata", f), LoadOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
