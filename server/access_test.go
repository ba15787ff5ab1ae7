package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/server/guard"
)

// newFullServer serves the demo collection and a bound OpenAPI-style
// collection with every optional front-end on (metrics, MCP) behind g.
func newFullServer(t *testing.T, g *guard.Guard) (*Server, *httptest.Server) {
	t.Helper()
	c, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	in := toolenv.ObjectSchema()
	in.SetProp("id", &toolenv.Schema{Type: "string"})
	api := toolenv.NewCollection("api", "openapi", []*toolenv.Tool{
		{Name: "getItem", Input: in, Binding: &toolenv.Binding{Method: "GET", Path: "/items/{id}", In: map[string]string{"id": "path"}}},
		{Name: "putItem", Input: in, Binding: &toolenv.Binding{Method: "PUT", Path: "/items/{id}", In: map[string]string{"id": "path"}}},
	})
	reg := invoke.NewRegistry()
	for _, coll := range []*toolenv.Collection{c, api} {
		if err := reg.Add(coll, toolenv.HandlerFunc(echoBackend)); err != nil {
			t.Fatal(err)
		}
	}
	p := invoke.New(reg, invoke.Options{})
	msrv, err := NewMCPServer(MCPOptions{Pipeline: p, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Pipeline: p, Registry: reg, Metrics: NewMetrics(), MCP: NewMCPHandler(msrv, MCPHTTPOptions{}), Guard: g})
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs
}

var patternParam = regexp.MustCompile(`\{[^}]*\}`)

// routeRequests turns each of the server's route patterns into concrete
// requests: one per method (both GET and POST for a pattern with none),
// with its wildcards filled with names the server knows.
func routeRequests(t *testing.T, s *Server) []*http.Request {
	t.Helper()
	var out []*http.Request
	for _, pat := range s.Routes() {
		method, path, ok := strings.Cut(pat, " ")
		if !ok {
			method, path = "", pat
		}
		switch {
		case strings.HasPrefix(path, "/collections/"):
			path = patternParam.ReplaceAllString(path, "demo")
		case strings.HasPrefix(path, "/tools/"):
			path = strings.Replace(path, "{collection}", "demo", 1)
			path = strings.Replace(path, "{name}", "weather_forecast", 1)
		case path == "/":
			path = "/no/such/route"
		default:
			path = patternParam.ReplaceAllString(path, "x1")
		}
		methods := []string{method}
		if method == "" {
			methods = []string{http.MethodGet, http.MethodPost, http.MethodDelete}
		}
		for _, m := range methods {
			var body io.Reader
			if m != http.MethodGet {
				body = strings.NewReader(`{"city":"Paris"}`)
			}
			r := httptest.NewRequest(m, path, body)
			r.RequestURI = ""
			if m != http.MethodGet {
				r.Header.Set("Content-Type", "application/json")
			}
			r.Header.Set("Accept", "application/json, text/event-stream")
			out = append(out, r)
		}
	}
	if len(out) < 12 {
		t.Fatalf("only %d requests from routes %v", len(out), s.Routes())
	}
	return out
}

func send(t *testing.T, hs *httptest.Server, r *http.Request, edit func(*http.Request)) (int, string) {
	t.Helper()
	r = r.Clone(context.Background())
	if r.GetBody != nil {
		r.Body, _ = r.GetBody()
	} else if r.Method != http.MethodGet {
		r.Body = io.NopCloser(strings.NewReader(`{"city":"Paris"}`))
	}
	u := *r.URL
	r.URL = &u
	r.URL.Scheme, r.URL.Host = "http", strings.TrimPrefix(hs.URL, "http://")
	r.Host = ""
	if edit != nil {
		edit(r)
	}
	resp, err := hs.Client().Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.URL.Path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

// TestEveryRouteRefusesForeignHostAndOrigin sends, to every route the
// server lists, a request that would be served, the same request with a
// foreign Host (DNS rebinding), from another origin, and (for methods
// that change state) as text/plain: the last three are refused.
func TestEveryRouteRefusesForeignHostAndOrigin(t *testing.T) {
	s, hs := newFullServer(t, nil)
	for _, r := range routeRequests(t, s) {
		name := r.Method + " " + r.URL.Path
		t.Run(name, func(t *testing.T) {
			if code, body := send(t, hs, r, nil); code == http.StatusForbidden || code == http.StatusUnsupportedMediaType {
				t.Fatalf("a plain local request is refused: %d %s", code, body)
			}
			for _, edit := range []struct {
				what, status string
				code         int
				f            func(*http.Request)
			}{
				{"foreign Host", "forbidden_host", 403, func(r *http.Request) { r.Host = "evil.example" }},
				{"rebound name with the server's port", "forbidden_host", 403, func(r *http.Request) { r.Host = "evil.example:" + hs.URL[strings.LastIndexByte(hs.URL, ':')+1:] }},
				{"cross-origin", "forbidden_origin", 403, func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }},
				{"cross-site fetch", "forbidden_origin", 403, func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }},
			} {
				if code, body := send(t, hs, r, edit.f); code != edit.code || !strings.Contains(body, edit.status) {
					t.Errorf("%s: got %d %s", edit.what, code, body)
				}
			}
			if stateChanging(r.Method) {
				code, body := send(t, hs, r, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") })
				if code != http.StatusUnsupportedMediaType {
					t.Errorf("text/plain %s: got %d %s", r.Method, code, body)
				}
			}
		})
	}
}

func stateChanging(m string) bool { return m != http.MethodGet && m != http.MethodHead }

// TestEveryRouteNeedsTheToken: with a token configured, every route but
// the liveness check refuses a request without it, and serves it with.
func TestEveryRouteNeedsTheToken(t *testing.T) {
	const tok = "0123456789abcdef-test-token"
	g, err := guard.New(guard.Policy{Tokens: []string{tok}, Open: []string{"/healthz"}})
	if err != nil {
		t.Fatal(err)
	}
	s, hs := newFullServer(t, g)
	for _, r := range routeRequests(t, s) {
		name := r.Method + " " + r.URL.Path
		t.Run(name, func(t *testing.T) {
			code, body := send(t, hs, r, nil)
			if r.URL.Path == "/healthz" {
				if code != 200 {
					t.Fatalf("liveness without a token: %d %s", code, body)
				}
				return
			}
			if code != http.StatusUnauthorized {
				t.Fatalf("without the token: %d %s", code, body)
			}
			code, body = send(t, hs, r, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) })
			if code == http.StatusUnauthorized || code == http.StatusForbidden {
				t.Fatalf("with the token: %d %s", code, body)
			}
		})
	}
}
