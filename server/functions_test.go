package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/openai"
)

// TestFunctionsAcrossCollections: GET /functions lists the tools of
// several collections as one OpenAI tools array with unique names (a name
// two collections use is prefixed in both), strict on request with a note
// for the tools that cannot be; POST /functions/{name} calls the tool a
// name names, an explicit null for an optional argument reaching the tool
// as absent.
func TestFunctionsAcrossCollections(t *testing.T) {
	grp := toolenv.ObjectSchema()
	grp.SetProp("data_source", &toolenv.Schema{Type: "string"})
	grp.SetProp("label", &toolenv.Schema{Type: "string"})
	grp.Required = []string{"data_source"}
	open := toolenv.ObjectSchema()
	open.SetProp("filters", &toolenv.Schema{Type: "object"})
	mk := func(name string, tools ...*toolenv.Tool) *toolenv.Collection {
		c := toolenv.NewCollection(name, "nl2sql-slot", tools)
		c.Policy = toolenv.Policy{Validation: toolenv.ValidationStrict}
		return c
	}
	slot := mk("slot", &toolenv.Tool{Name: "group_data_by", Input: grp.Clone()}, &toolenv.Tool{Name: "filter_data", Input: grp.Clone()})
	sel := mk("sel", &toolenv.Tool{Name: "group_data_by", Input: grp.Clone()}, &toolenv.Tool{Name: "search", Input: open})
	reg := invoke.NewRegistry()
	for _, c := range []*toolenv.Collection{slot, sel} {
		if err := reg.Add(c, toolenv.HandlerFunc(echoBackend)); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(New(Options{Pipeline: invoke.New(reg, invoke.Options{}), Registry: reg}))
	defer srv.Close()

	list := func(query string) ([]openai.Tool, http.Header) {
		t.Helper()
		resp, body := get(t, srv.URL+"/functions"+query)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", query, resp.StatusCode, body)
		}
		var tools []openai.Tool
		if err := json.Unmarshal(body, &tools); err != nil {
			t.Fatal(err)
		}
		return tools, resp.Header
	}
	names := func(tools []openai.Tool) string {
		var out []string
		for _, t := range tools {
			out = append(out, t.Function.Name)
		}
		return strings.Join(out, " ")
	}
	tools, _ := list("")
	if got := names(tools); got != "sel__group_data_by search slot__group_data_by filter_data" {
		t.Errorf("names %q", got)
	}
	tools, _ = list("?collection=slot")
	if got := names(tools); got != "slot__group_data_by filter_data" {
		t.Errorf("one collection's names %q: they stay as they are when all are served", got)
	}
	tools, hdr := list("?strict=true")
	for _, tool := range tools {
		if tool.Function.Name == "search" {
			if tool.Function.Strict {
				t.Error("an open map is listed strict")
			}
			continue
		}
		if errs := openai.CheckStrictTool(tool); len(errs) > 0 {
			t.Errorf("%v", errs)
		}
	}
	if hdr.Get("X-Toolenv-Not-Strict") != "1" || !strings.Contains(hdr.Get("X-Toolenv-Note"), "search is listed without strict: parameter `filters` is an open map") {
		t.Errorf("notes %v", hdr)
	}
	tools, hdr = list("?limit=2")
	if names(tools) != "sel__group_data_by search" || hdr.Get("X-Next-Cursor") == "" {
		t.Fatalf("page 1: %q %v", names(tools), hdr)
	}
	tools, _ = list("?limit=2&cursor=" + hdr.Get("X-Next-Cursor"))
	if names(tools) != "slot__group_data_by filter_data" {
		t.Errorf("page 2: %q", names(tools))
	}

	resp, body := post(t, srv.URL+"/functions/slot__group_data_by", "application/json", `{"data_source":"$t$","label":null}`)
	var got struct {
		Tool string         `json:"tool"`
		Args map[string]any `json:"args"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if got.Tool != "group_data_by" || len(got.Args) != 1 || got.Args["data_source"] != "$t$" {
		t.Errorf("called %s(%v), want group_data_by(data_source) with the null label left out", got.Tool, got.Args)
	}
	resp, body = post(t, srv.URL+"/functions/slot__group_dat_by", "application/json", `{}`)
	if resp.StatusCode != 404 || !strings.Contains(string(body), `did you mean \"slot__group_data_by\"`) {
		t.Errorf("unknown name: %d %s", resp.StatusCode, body)
	}
	resp, body = get(t, srv.URL+"/collections/slot/tools?format=toolenv&strict=true")
	if resp.StatusCode != 400 {
		t.Errorf("strict without format=openai: %d %s", resp.StatusCode, body)
	}
}
