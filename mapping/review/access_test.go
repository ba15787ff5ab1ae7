package review

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/server/guard"
)

// login follows a one-time login link and returns a client carrying the
// cookie it set.
func login(t *testing.T, r *Reviewer, base string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(r.LoginLink(base + "/"))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("login: %s", resp.Status)
	}
	return c
}

// reviewRequests makes one request per route the handler serves.
func reviewRequests(t *testing.T, r *Reviewer, base string) []*http.Request {
	t.Helper()
	var out []*http.Request
	for _, pat := range r.Routes() {
		method, path, _ := strings.Cut(pat, " ")
		path = strings.TrimSuffix(path, "{$}")
		switch path {
		case "/static/":
			path += "app.js"
		case "/api/query":
			path += "?id=q1"
		}
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(`{"query":"q1","proposal":"x","verdict":"accept"}`)
		}
		req, err := http.NewRequest(method, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/json")
		}
		out = append(out, req)
	}
	if len(out) < 7 {
		t.Fatalf("routes: %v", r.Routes())
	}
	return out
}

// TestEveryReviewRouteIsGuarded: every route of the review page refuses a
// request with no login, with a foreign Host, and from another origin
// (annotations feed --export-set, which feeds --failover), and serves a
// logged-in browser.
func TestEveryReviewRouteIsGuarded(t *testing.T) {
	r := open(t, filepath.Join(t.TempDir(), "j.jsonl"))
	srv := httptest.NewServer(r.Handler())
	defer srv.Close()
	c := login(t, r, srv.URL)
	for _, req := range reviewRequests(t, r, srv.URL) {
		t.Run(req.Method+" "+req.URL.Path, func(t *testing.T) {
			try := func(c *http.Client, edit func(*http.Request)) (int, string) {
				t.Helper()
				rq := req.Clone(req.Context())
				if req.Method == http.MethodPost {
					rq.Body = io.NopCloser(strings.NewReader(`{"query":"q1","proposal":"x","verdict":"accept"}`))
				}
				if edit != nil {
					edit(rq)
				}
				resp, err := c.Do(rq)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			if code, body := try(c, nil); code == 401 || code == 403 || code == 415 {
				t.Fatalf("logged in: %d %s", code, body)
			}
			if code, _ := try(http.DefaultClient, nil); code != 401 {
				t.Errorf("no login: %d", code)
			}
			if code, _ := try(c, func(r *http.Request) { r.Host = "evil.example" }); code != 403 {
				t.Errorf("foreign Host: %d", code)
			}
			if code, _ := try(c, func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }); code != 403 {
				t.Errorf("cross-origin: %d", code)
			}
			if req.Method == http.MethodPost {
				if code, _ := try(c, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }); code != 415 {
					t.Errorf("text/plain: %d", code)
				}
			}
		})
	}
	// Nothing refused was written.
	if n := len(r.j.annotations()); n != 0 {
		t.Fatalf("%d annotations were kept from refused or invalid requests", n)
	}
}

func TestReviewAcceptsABearerToken(t *testing.T) {
	const tok = "review-token-0123456789"
	g, err := guard.New(guard.Policy{Login: true, Tokens: []string{tok}})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := New(Options{Probe: fixture(t), Journal: filepath.Join(t.TempDir(), "j.jsonl"), Guard: g})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	srv := httptest.NewServer(r.Handler())
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/export", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("export with the token: %s", resp.Status)
	}
}
