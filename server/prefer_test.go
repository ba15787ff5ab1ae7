package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/openapi"
	"github.com/toolenv/toolenv/store"
)

// preferServer serves the demo over the echo backend with a store (the
// cache, and the recorded answers the documents show) and metrics.
func preferServer(t *testing.T) (*httptest.Server, store.Store, *Metrics) {
	t.Helper()
	c, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	c.Policy.Cache = true
	reg := invoke.NewRegistry()
	if err := reg.Add(c, toolenv.HandlerFunc(echoBackend)); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := NewMetrics()
	p := invoke.New(reg, invoke.Options{Cache: st, Observer: m})
	srv := httptest.NewServer(New(Options{Pipeline: p, Registry: reg, Metrics: m, Recorded: st}))
	t.Cleanup(srv.Close)
	return srv, st, m
}

func preferGet(t *testing.T, url, prefer string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if prefer != "" {
		req.Header.Set("Prefer", prefer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s: body is no JSON object: %v", url, err)
	}
	return resp, body
}

// TestPreferHeader: Prefer: code=NNN and example=NAME answer the
// documented error or example without calling the backend or filling the
// cache, marked as a fault; anything the operation does not document is
// a 400 naming what it does; bad arguments keep their 400.
func TestPreferHeader(t *testing.T) {
	srv, st, m := preferServer(t)
	ctx := context.Background()
	book := srv.URL + "/demo/books/9780441172719"
	if _, err := st.Put(ctx, &store.Entry{Tool: "demo/get_book", Args: `{"isbn":"9780000000002"}`, Status: toolenv.StatusOK,
		Body: json.RawMessage(`{"isbn":"9780000000002","title":"Recorded"}`), Origin: "upstream"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, url, prefer string
		code              int
		status, fault     string
		field, want       string // a field of the body and a substring of its value
	}{
		{"documented error", book, "code=404", 404, "not_found", "prefer:code=404", "error", "Prefer: code=404"},
		{"retry after", book, "code=429", 429, "rate_limited", "prefer:code=429", "hint", "Prefer header"},
		{"quoted, with other preferences", book, `respond-async, code="503"; wait=5`, 503, "unavailable", "prefer:code=503", "status", "unavailable"},
		{"undocumented code", book, "code=418", 400, "bad_request", "", "error", "documented: 200, 400, 401, 404, 413, 429, 500, 502, 503, 504"},
		{"not a code", book, "code=abc", 400, "bad_request", "", "error", `"abc" is not an HTTP status code`},
		{"documented example", book, "example=example2", 200, "ok", "prefer:example=example2", "title", "Foundation"},
		{"recorded example", book, "code=200, example=recorded1", 200, "ok", "prefer:example=recorded1", "title", "Recorded"},
		{"unknown example", book, "example=nope", 400, "bad_request", "", "error", "documented: example1, example2, example3, recorded1"},
		{"example with an error code", book, "code=404, example=example1", 400, "bad_request", "", "hint", "code=200"},
		{"bad argument first", srv.URL + "/tools/demo/get_book?isbnn=9780441172719", "code=404", 400, "invalid_arguments", "", "error", ""},
		{"real answer", book, "code=200", 200, "ok", "", "tool", "get_book"},
		{"no preference of ours", book, "return=minimal", 200, "ok", "", "tool", "get_book"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := preferGet(t, tc.url, tc.prefer)
			if resp.StatusCode != tc.code || resp.Header.Get("X-Toolenv-Status") != tc.status && tc.code != 400 {
				t.Fatalf("%d %s %v, want %d %s", resp.StatusCode, resp.Header.Get("X-Toolenv-Status"), body, tc.code, tc.status)
			}
			if tc.code >= 400 && body["status"] != tc.status {
				t.Errorf("status %v, want %s", body["status"], tc.status)
			}
			if got := resp.Header.Get("X-Toolenv-Fault"); got != tc.fault {
				t.Errorf("fault %q, want %q", got, tc.fault)
			}
			if s, _ := body[tc.field].(string); !strings.Contains(s, tc.want) {
				t.Errorf("%s = %v, want it to contain %q (body %v)", tc.field, body[tc.field], tc.want, body)
			}
			if tc.code == 429 && resp.Header.Get("Retry-After") == "" {
				t.Error("no Retry-After")
			}
		})
	}
	_, body := preferGet(t, srv.URL+"/tools/demo/get_book?isbnn=9780441172719", "code=404")
	if s, _ := body["error"].(string); !strings.Contains(s, "did you mean `isbn`") {
		t.Errorf("the unknown parameter lost its did-you-mean: %v", body)
	}
	// Nothing answered from the documentation was cached: the same call
	// without Prefer reaches the backend, and the store holds only its
	// answer and the recorded one.
	_, body = preferGet(t, book, "")
	if body["tool"] != "get_book" {
		t.Errorf("a documented example was served as the real answer: %v", body)
	}
	entries, err := st.Examples(ctx, "demo/get_book", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(string(e.Body), "Foundation") || strings.Contains(string(e.Body), "Dune") {
			t.Errorf("a documented example was cached: %s", e.Body)
		}
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `toolenv_faults_total{collection="demo",fault="prefer"} 5`) {
		t.Errorf("the Prefer answers are not counted as faults:\n%s", grepLines(rec.Body.String(), "faults_total"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestErrorResponsesCoverEveryStatus: the error responses OpenAPI
// documents list every status a REST route answers with, under the HTTP
// code the server uses for it.
func TestErrorResponsesCoverEveryStatus(t *testing.T) {
	documented := map[toolenv.Status]int{}
	for _, e := range openapi.ErrorResponses {
		for _, s := range e.Statuses {
			documented[s] = e.Code
		}
	}
	for s, code := range httpStatus {
		if s == toolenv.StatusOK || s == toolenv.StatusCanceled {
			continue
		}
		if documented[s] != code {
			t.Errorf("status %s is answered with %d but documented under %d", s, code, documented[s])
		}
	}
}

// FuzzParsePrefer: any Prefer header values give a preference or a 400,
// never a panic; a code given is an HTTP status code, an example a name.
func FuzzParsePrefer(f *testing.F) {
	for _, s := range []string{"code=404", `respond-async, code="503"; wait=5`, "example=example2", "code=200, example=recorded1", "code=abc", "example=", "return=minimal", ",,;;=", "CODE = 429"} {
		f.Add(s, "")
	}
	f.Add("code=404", "example=x")
	f.Fuzz(func(t *testing.T, a, b string) {
		p, ok, res := parsePrefer([]string{a, b})
		if res != nil {
			if res.Status != toolenv.StatusBadRequest || res.Error == "" {
				t.Fatalf("refusal %+v", res)
			}
			return
		}
		if p.code != 0 && (p.code < 100 || p.code > 599) {
			t.Fatalf("code %d", p.code)
		}
		if ok != (p.code != 0 || p.example != "") {
			t.Fatalf("ok %v for %+v", ok, p)
		}
	})
}
