package openapi

import (
	"bytes"
	"encoding/json"
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
