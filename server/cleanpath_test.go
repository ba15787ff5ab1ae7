package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestPathsNotInCleanFormGetAClearAnswer: a path with ".", ".." or
// empty segments, on every route and method, is answered with a JSON
// error naming its clean form, never with http.ServeMux's redirect
// (which has an empty body for a POST: docs/fuzzing.md's FuzzRESTArgs
// found POST /.. answered 307 with nothing in it).
func TestPathsNotInCleanFormGetAClearAnswer(t *testing.T) {
	srv, _ := newTestServer(t)
	routes := []string{"/virtual", "/healthz", "/collections", "/collections/demo/tools", "/openapi.json", "/tools/demo/get_book",
		"/sessions", "/metrics", "/demo/books/9780441172719", "/items", "/"}
	variants := func(p string) map[string]string { // sent -> clean
		return map[string]string{
			"/x/.." + p:                        p,
			"/." + p:                           p,
			"/" + p:                            p,
			strings.TrimSuffix(p, "/") + "/./": strings.TrimSuffix(p, "/") + "/",
		}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, route := range routes {
		for sent, clean := range variants(route) {
			if sent == clean {
				continue
			}
			for _, method := range []string{"GET", "POST", "DELETE", "PUT"} {
				req, err := http.NewRequest(method, srv.URL+sent, strings.NewReader(`{}`))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var e errorBody
				if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &e) != nil || e.Status != "bad_request" ||
					!strings.Contains(e.Hint, clean) || resp.Header.Get("Location") != "" {
					t.Errorf("%s %s: %d %q (Location %q), want 400 bad_request naming %s", method, sent, resp.StatusCode, body, resp.Header.Get("Location"), clean)
				}
			}
		}
	}
	// Clean paths are routed as before, %2e escapes included (they are
	// not dot segments).
	for _, p := range []string{"/healthz", "/collections/demo/tools", "/tools/demo/%2e%2e"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusBadRequest {
			t.Errorf("GET %s: 400 for a clean path", p)
		}
	}
}
