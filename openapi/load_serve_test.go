package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/openapi"
	"github.com/toolenv/toolenv/server"
	"github.com/toolenv/toolenv/store"
)

// serveSpecs serves imported documents the way "toolenv serve --openapi"
// does: the virtual backend (no upstream, no LLM: the offline
// synthesizer answers from the documented examples and schemas), the
// standard pipeline and a real SQLite store, over loopback HTTP.
func serveSpecs(t *testing.T, files ...string) *httptest.Server {
	t.Helper()
	st, err := store.Open(context.Background(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reg := invoke.NewRegistry()
	for _, f := range files {
		c, err := openapi.Load(context.Background(), f, openapi.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		backend, err := virtual.Build(virtual.Options{Examples: st, Tools: c.Tools})
		if err != nil {
			t.Fatal(err)
		}
		if err := reg.Add(c, backend); err != nil {
			t.Fatal(err)
		}
	}
	p := invoke.New(reg, invoke.Options{Cache: st})
	srv := httptest.NewServer(server.New(server.Options{Pipeline: p, Registry: reg}))
	t.Cleanup(srv.Close)
	return srv
}

func do(t *testing.T, method, url, body string) (int, http.Header, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestServeImportedSpec calls imported operations at their own routes
// and through /virtual.
func TestServeImportedSpec(t *testing.T) {
	srv := serveSpecs(t, "testdata/petstore.yaml", "testdata/library.json")
	tests := []struct {
		name, method, path, body string
		code                     int
		want                     []string // substrings of the response body
		source                   string
	}{
		{"path parameter at the bound route", "GET", "/pets/42", "", 200, []string{`"id":42`, `"name":"Rex"`}, "synthesizer"},
		{"query parameters", "GET", "/pets?limit=10", "", 200, []string{`"name":"Rex"`}, "synthesizer"},
		{"JSON body", "POST", "/pets", `{"name":"Tom","tag":"cat"}`, 200, []string{`"id":10`, `"name":"Tom"`}, "synthesizer"},
		{"strict validation of a query parameter", "GET", "/pets?limit=1000", "", 400, []string{`"invalid_arguments"`, "limit", "maximum 100"}, "toolenv"},
		{"strict validation of a body", "POST", "/pets", `{"tag":"cat","colour":"black"}`, 400, []string{"missing required argument `name`", "unknown argument `colour`"}, "toolenv"},
		{"wrong method on a bound route", "PATCH", "/pets", `{}`, 405, []string{"not allowed"}, ""},
		{"3.1 document: query", "GET", "/books?q=tolkien", "", 200, []string{`"total":1`, "Fellowship"}, "synthesizer"},
		{"3.1 document: path parameter with a pattern", "GET", "/books/9780261103573", "", 200, []string{`"isbn"`, `"authors"`}, "synthesizer"},
		{"3.1 document: pattern enforced", "GET", "/books/12345", "", 400, []string{"isbn", "pattern"}, "toolenv"},
		{"raw array body at the bound route", "POST", "/books/batch", `[{"title":"X","isbn":"9780261102217","authors":[{"name":"A"}]}]`, 200, []string{`"added"`}, "synthesizer"},
		{"array body validated (minItems)", "POST", "/books/batch", `[]`, 400, []string{"fewer than 1"}, "toolenv"},
		{"generic route of an imported tool", "POST", "/tools/library/listAuthorBooks", `{"authorId":7}`, 200, []string{"["}, "synthesizer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, hdr, body := do(t, tt.method, srv.URL+tt.path, tt.body)
			if code != tt.code {
				t.Fatalf("status %d, want %d: %s", code, tt.code, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %q: %s", w, body)
				}
			}
			if tt.source != "" && hdr.Get("X-Toolenv-Source") != tt.source && !strings.Contains(body, `"source":"`+tt.source+`"`) {
				t.Errorf("source = %q (%s)", hdr.Get("X-Toolenv-Source"), body)
			}
		})
	}

	t.Run("via /virtual", func(t *testing.T) {
		req := `{"category":"petstore","tool_name":"pets","api_name":"showPetById","tool_input":"{\"petId\": 42}","strip":"","toolbench_key":""}`
		code, _, body := do(t, "POST", srv.URL+"/virtual", req)
		var ans struct {
			Error    string          `json:"error"`
			Response json.RawMessage `json:"response"`
		}
		if err := json.Unmarshal([]byte(body), &ans); err != nil || code != 200 {
			t.Fatalf("%d %s (%v)", code, body, err)
		}
		if ans.Error != "" || !bytes.Contains(ans.Response, []byte("Rex")) {
			t.Errorf("answer = %s", body)
		}
		// By title too, as StableToolBench clients name APIs.
		req = `{"category":"library","tool_name":"books","api_name":"Search the catalogue","tool_input":{"q":"tolkien"},"strip":"","toolbench_key":""}`
		if _, _, body := do(t, "POST", srv.URL+"/virtual", req); !strings.Contains(body, "Fellowship") {
			t.Errorf("by title: %s", body)
		}
	})

	t.Run("served OpenAPI document re-imports", func(t *testing.T) {
		code, _, body := do(t, "GET", srv.URL+"/collections/library/openapi.json", "")
		if code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		c, err := openapi.Read(context.Background(), []byte(body), openapi.LoadOptions{Name: "library"})
		if err != nil {
			t.Fatal(err)
		}
		orig, _ := openapi.Load(context.Background(), "testdata/library.json", openapi.LoadOptions{})
		for _, want := range orig.Tools {
			got := c.Tool(want.Name)
			if got == nil {
				t.Fatalf("%s missing", want.Name)
			}
			g, _ := toolenv.MarshalJSONNoHTML(got.Input)
			w, _ := toolenv.MarshalJSONNoHTML(want.Input)
			if !bytes.Equal(g, w) || got.Binding.Path != want.Binding.Path || got.Binding.Method != want.Binding.Method {
				t.Errorf("%s: input %s, want %s", want.Name, g, w)
			}
			if got.Binding.BaseURL != srv.URL {
				t.Errorf("%s: base URL %q, want the serving server %q", want.Name, got.Binding.BaseURL, srv.URL)
			}
		}
	})
}
