package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func TestDocumentSplitsParamsByBinding(t *testing.T) {
	in := toolenv.ObjectSchema()
	in.SetProp("db", &toolenv.Schema{Type: "string"})
	in.SetProp("year", &toolenv.Schema{Type: "integer", Description: "Year of the event"})
	in.Required = []string{"year"}
	bound := &toolenv.Tool{Name: "get_events", Input: in, Binding: &toolenv.Binding{Method: "GET", Path: "/v1/{db}/events"}}
	free := &toolenv.Tool{Name: "filter_data", Input: in.Clone(), Deprecated: &toolenv.Deprecation{Successor: "filter_rows"}}
	c := toolenv.NewCollection("bird", "nl2sql-rest", []*toolenv.Tool{bound, free})
	doc := Document(c, "http://127.0.0.1:8080/")
	raw, err := toolenv.MarshalJSONNoHTML(doc)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Servers []struct{ URL string }
		Paths   map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Deprecated  bool
			Parameters  []struct {
				Name     string
				In       string
				Required bool
			}
			RequestBody *struct{ Required bool } `json:"requestBody"`
		}
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.Servers[0].URL != "http://127.0.0.1:8080" {
		t.Errorf("server = %q", got.Servers[0].URL)
	}
	op := got.Paths["/v1/{db}/events"]["get"]
	if op.OperationID != "get_events" || len(op.Parameters) != 2 || op.RequestBody != nil {
		t.Fatalf("bound op = %+v", op)
	}
	if p := op.Parameters[0]; p.Name != "db" || p.In != "path" || !p.Required {
		t.Errorf("db param = %+v", p)
	}
	if p := op.Parameters[1]; p.Name != "year" || p.In != "query" || !p.Required {
		t.Errorf("year param = %+v", p)
	}
	fop := got.Paths[GenericPath("bird", "filter_data")]["post"]
	if fop.OperationID != "filter_data" || !fop.Deprecated || fop.RequestBody == nil || !fop.RequestBody.Required {
		t.Fatalf("generic op = %+v", fop)
	}
	again, _ := toolenv.MarshalJSONNoHTML(Document(c, "http://127.0.0.1:8080/"))
	if !bytes.Equal(raw, again) {
		t.Fatal("Document is not deterministic")
	}
}

// TestDocumentSecurity: a bearer scheme required everywhere when the
// server asks for a token, and an explicit "no security" otherwise.
func TestDocumentSecurity(t *testing.T) {
	c := toolenv.NewCollection("c", "openapi", []*toolenv.Tool{{Name: "a", Input: toolenv.ObjectSchema()}})
	for _, bearer := range []bool{false, true} {
		doc := docJSON(t, DocumentWith(c, DocumentOptions{BearerAuth: bearer}))
		sec, _ := doc["security"].([]any)
		schemes, _ := doc["components"].(map[string]any)["securitySchemes"].(map[string]any)
		if !bearer {
			if sec == nil || len(sec) != 0 || schemes != nil {
				t.Errorf("no token: security %v, schemes %v; want [] and none", doc["security"], schemes)
			}
			continue
		}
		if len(sec) != 1 || sec[0].(map[string]any)["bearerAuth"] == nil {
			t.Errorf("token: security %v", sec)
		}
		if s, _ := schemes["bearerAuth"].(map[string]any); s["type"] != "http" || s["scheme"] != "bearer" {
			t.Errorf("token: schemes %v", schemes)
		}
	}
}

// TestDocumentErrorsAndExamples: every operation lists each error status
// with the problem body, its documented answers as named examples, and
// non-schema keywords as x- extensions.
func TestDocumentErrorsAndExamples(t *testing.T) {
	in := toolenv.ObjectSchema()
	in.SetProp("city", &toolenv.Schema{Type: "string", Extra: map[string]json.RawMessage{"example_value": json.RawMessage(`"Paris"`)}})
	in.SetProp("days", &toolenv.Schema{Type: "integer", Extra: map[string]json.RawMessage{"example_value": json.RawMessage(`"two"`)}})
	in.Extra = map[string]json.RawMessage{"optional": json.RawMessage(`[]`)}
	tool := &toolenv.Tool{Name: "forecast", Input: in, Deprecated: &toolenv.Deprecation{Successor: "forecast2"},
		Examples: []toolenv.Example{
			{Args: map[string]any{"city": "Paris"}, Response: json.RawMessage(`{"temp":21}`)},
			{Args: map[string]any{"city": "Nowhere"}, Error: "no such city"},
			{Args: map[string]any{"city": "Oslo"}, Response: json.RawMessage(`{"temp":3}`)},
		}}
	c := toolenv.NewCollection("w", "openapi", []*toolenv.Tool{tool})
	recorded := func(*toolenv.Tool) []toolenv.Example {
		return []toolenv.Example{{Args: map[string]any{"city": "Rome"}, Response: json.RawMessage(`{"temp":25}`)}}
	}
	doc := docJSON(t, DocumentWith(c, DocumentOptions{Recorded: recorded}))
	op := doc["paths"].(map[string]any)[GenericPath("w", "forecast")].(map[string]any)["post"].(map[string]any)
	if op["summary"] != "forecast" {
		t.Errorf("summary %v, want the name when there is no title", op["summary"])
	}
	responses := op["responses"].(map[string]any)
	for _, e := range ErrorResponsesOf(tool) {
		r, _ := responses[fmt.Sprint(e.Code)].(map[string]any)
		if r["$ref"] != "#/components/responses/"+e.Name {
			t.Errorf("%d: %v", e.Code, r)
		}
		comp := doc["components"].(map[string]any)["responses"].(map[string]any)[e.Name].(map[string]any)
		schema := comp["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
		if schema["$ref"] != "#/components/schemas/Problem" {
			t.Errorf("%s: schema %v", e.Name, schema)
		}
	}
	if responses["410"] == nil {
		t.Error("a deprecated tool documents 410")
	}
	problem := doc["components"].(map[string]any)["schemas"].(map[string]any)["Problem"].(map[string]any)
	for _, k := range []string{"status", "error", "hint", "problems"} {
		if problem["properties"].(map[string]any)[k] == nil {
			t.Errorf("Problem has no %q", k)
		}
	}
	exs := responses["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["examples"].(map[string]any)
	if len(exs) != 3 || exs["example1"] == nil || exs["example3"] == nil || exs["recorded1"] == nil || exs["example2"] != nil {
		t.Errorf("answer examples %v: want example1, example3 (example2 documents an error) and recorded1", exs)
	}
	if got := ExampleNames(tool, recorded(tool)); fmt.Sprint(got) != "[example1 example3 recorded1]" {
		t.Errorf("ExampleNames = %v", got)
	}
	if body, ok := ExampleAnswer(tool, recorded(tool), "example3"); !ok || string(body) != `{"temp":3}` {
		t.Errorf("ExampleAnswer(example3) = %s, %v", body, ok)
	}
	schema := op["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	props := schema["properties"].(map[string]any)
	city, days := props["city"].(map[string]any), props["days"].(map[string]any)
	if city["x-example_value"] != "Paris" || city["example_value"] != nil || fmt.Sprint(city["examples"]) != "[Paris]" {
		t.Errorf("city %v: want example_value as x-example_value and as an example", city)
	}
	if days["x-example_value"] != "two" || days["examples"] != nil {
		t.Errorf("days %v: an example_value that is no integer is no example", days)
	}
	if tool.Input.Prop("city").Extra["example_value"] == nil {
		t.Error("the export changed the tool's own schema")
	}
}

// TestDocumentSessions: a collection with task sessions describes the
// session protocol: POST /sessions, DELETE /sessions/{id}, the session
// header on every operation (optional on the hidden initialisation tool,
// which is described too).
func TestDocumentSessions(t *testing.T) {
	init := &toolenv.Tool{Name: "initialize_active_data", Input: toolenv.ObjectSchema(), Meta: map[string]string{toolenv.MetaHidden: "true"}}
	filter := &toolenv.Tool{Name: "filter_data", Input: toolenv.ObjectSchema()}
	c := toolenv.NewCollection("slot", "nl2sql-slot", []*toolenv.Tool{init, filter})
	for _, sessions := range []bool{false, true} {
		c.Policy.Sessions = sessions
		doc := docJSON(t, Document(c, ""))
		paths := doc["paths"].(map[string]any)
		_, hasInit := paths[GenericPath("slot", "initialize_active_data")]
		_, hasSessions := paths["/sessions"]
		if hasInit != sessions || hasSessions != sessions {
			t.Fatalf("sessions=%v: init described %v, /sessions %v", sessions, hasInit, hasSessions)
		}
		if !sessions {
			continue
		}
		if paths["/sessions/{id}"].(map[string]any)["delete"] == nil {
			t.Error("no DELETE /sessions/{id}")
		}
		params := doc["components"].(map[string]any)["parameters"].(map[string]any)
		for name, required := range map[string]bool{"Session": true, "SessionOptional": false} {
			p := params[name].(map[string]any)
			if p["in"] != "header" || p["name"] != SessionHeader || p["required"] != required {
				t.Errorf("%s = %v", name, p)
			}
		}
		for tool, want := range map[string]string{"filter_data": "Session", "initialize_active_data": "SessionOptional"} {
			op := paths[GenericPath("slot", tool)].(map[string]any)["post"].(map[string]any)
			ps := op["parameters"].([]any)
			if ref := ps[len(ps)-1].(map[string]any)["$ref"]; ref != "#/components/parameters/"+want {
				t.Errorf("%s: session parameter %v, want %s", tool, ref, want)
			}
		}
	}
}

// TestDocumentRoutesAsServed: tools are described at the routes the
// server mounts: the first of two tools binding one route keeps it, a
// route differing only in parameter names and a ToolBench tool's
// RapidAPI URL go to the generic route, a trailing slash is dropped.
func TestDocumentRoutesAsServed(t *testing.T) {
	id := toolenv.ObjectSchema()
	id.SetProp("id", &toolenv.Schema{Type: "string"})
	bind := func(name, method, path string) *toolenv.Tool {
		return &toolenv.Tool{Name: name, Input: id.Clone(), Binding: &toolenv.Binding{Method: method, Path: path}}
	}
	c := toolenv.NewCollection("r", "openapi", []*toolenv.Tool{
		bind("z_first", "GET", "/items/{id}"), bind("a_second", "GET", "/items/{id}"),
		bind("renamed", "DELETE", "/items/{itemId}"), bind("slash", "GET", "/list/"),
	})
	paths := docJSON(t, Document(c, ""))["paths"].(map[string]any)
	where := map[string]string{}
	for p, item := range paths {
		for m, op := range item.(map[string]any) {
			where[op.(map[string]any)["operationId"].(string)] = m + " " + p
		}
	}
	want := map[string]string{"z_first": "get /items/{id}", "a_second": "post /tools/r/a_second", "renamed": "post /tools/r/renamed", "slash": "get /list"}
	if fmt.Sprint(where) != fmt.Sprint(want) {
		t.Errorf("routes %v, want %v", where, want)
	}
	tb := toolenv.NewCollection("toolbench", "toolbench", []*toolenv.Tool{bind("get_x_for_api", "GET", "/x/{id}")})
	if _, ok := docJSON(t, Document(tb, ""))["paths"].(map[string]any)["/tools/toolbench/get_x_for_api"]; !ok {
		t.Error("a ToolBench tool is described at its RapidAPI URL, which toolenv does not serve")
	}
}

func docJSON(t *testing.T, doc map[string]any) map[string]any {
	t.Helper()
	raw, err := toolenv.MarshalJSONNoHTML(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestErrorExampleNamesTheDocumentsOwnArgument: the invalid_arguments
// example names an argument of the document's own tools (so an
// obfuscated collection's document names nothing of another API), and a
// neutral placeholder when no tool has a required argument.
func TestErrorExampleNamesTheDocumentsOwnArgument(t *testing.T) {
	example := func(c *toolenv.Collection) string {
		t.Helper()
		raw, err := toolenv.MarshalJSONNoHTML(Document(c, "http://127.0.0.1:8080/"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Components struct {
				Responses map[string]struct {
					Content map[string]struct{ Example json.RawMessage }
				}
			}
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		return string(doc.Components.Responses["BadRequest"].Content["application/json"].Example)
	}
	for _, tc := range []struct {
		name     string
		required []string
		want     string
		wantNot  string
	}{
		{"first required argument", []string{"ARG_7"}, "missing required argument `ARG_7` (integer)", "city"},
		{"no required argument", nil, "missing required argument `argument` (string)", "ARG_7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := toolenv.ObjectSchema()
			in.SetProp("ARG_7", &toolenv.Schema{Type: "integer"})
			in.Required = tc.required
			c := toolenv.NewCollection("obf", "nl2sql-rest", []*toolenv.Tool{{Name: "FUNC_1", Input: in}})
			got := example(c)
			if !strings.Contains(got, tc.want) || strings.Contains(got, tc.wantNot) {
				t.Errorf("BadRequest example %s: want %q, not %q", got, tc.want, tc.wantNot)
			}
		})
	}
}
