package guard

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
)

// echoPrincipal answers 200 with the request's principal.
var echoPrincipal = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Write([]byte("ok " + Principal(r.Context())))
})

func newGuarded(t *testing.T, p Policy) (*httptest.Server, *Guard) {
	t.Helper()
	g, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler(echoPrincipal))
	t.Cleanup(srv.Close)
	return srv, g
}

type req struct {
	method, path, host, ctype, body string
	hdr                             map[string]string
}

func do(t *testing.T, c *http.Client, base string, rq req) (int, string) {
	t.Helper()
	if rq.method == "" {
		rq.method = http.MethodGet
	}
	r, err := http.NewRequest(rq.method, base+rq.path, strings.NewReader(rq.body))
	if err != nil {
		t.Fatal(err)
	}
	if rq.host != "" {
		r.Host = rq.host
	}
	if rq.ctype != "" {
		r.Header.Set("Content-Type", rq.ctype)
	}
	for k, v := range rq.hdr {
		r.Header.Set(k, v)
	}
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHostOriginAndContentType(t *testing.T) {
	srv, _ := newGuarded(t, Policy{AllowedHosts: []string{"api.example.org", "*.corp.example", "pinned.example:8443"}})
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]
	cases := []struct {
		name string
		rq   req
		want int
	}{
		{"loopback address", req{}, 200},
		{"localhost", req{host: "localhost" + port}, 200},
		{"localhost without port", req{host: "localhost"}, 200},
		{"ipv6 loopback", req{host: "[::1]" + port}, 200},
		{"sub.localhost", req{host: "app.localhost" + port}, 200},
		{"allowed name", req{host: "api.example.org"}, 200},
		{"allowed name, any port", req{host: "API.example.org:9999"}, 200},
		{"allowed wildcard", req{host: "a.b.corp.example"}, 200},
		{"wildcard is not the apex", req{host: "corp.example"}, 403},
		{"pinned port", req{host: "pinned.example:8443"}, 200},
		{"pinned, other port", req{host: "pinned.example:8444"}, 403},
		{"foreign host", req{host: "evil.example"}, 403},
		{"foreign host with loopback port", req{host: "evil.example" + port}, 403},
		{"rebinding-looking name", req{host: "127.0.0.1.evil.example"}, 403},
		{"other address than connected", req{host: "10.1.2.3"}, 403},
		{"same origin", req{hdr: map[string]string{"Origin": srv.URL}}, 200},
		{"cross origin GET", req{hdr: map[string]string{"Origin": "http://evil.example"}}, 403},
		{"null origin", req{hdr: map[string]string{"Origin": "null"}}, 403},
		{"other port is another origin", req{hdr: map[string]string{"Origin": "http://127.0.0.1:1"}}, 403},
		{"cross-site fetch metadata", req{hdr: map[string]string{"Sec-Fetch-Site": "cross-site"}}, 403},
		{"same-site is not same-origin", req{hdr: map[string]string{"Sec-Fetch-Site": "same-site"}}, 403},
		{"typed URL", req{hdr: map[string]string{"Sec-Fetch-Site": "none"}}, 200},
		{"JSON POST", req{method: "POST", ctype: "application/json; charset=utf-8", body: "{}"}, 200},
		{"+json POST", req{method: "POST", ctype: "application/problem+json", body: "{}"}, 200},
		{"text/plain POST", req{method: "POST", ctype: "text/plain", body: "{}"}, 415},
		{"form POST", req{method: "POST", ctype: "application/x-www-form-urlencoded", body: "a=1"}, 415},
		{"multipart POST", req{method: "POST", ctype: "multipart/form-data; boundary=x", body: ""}, 415},
		{"POST with no type", req{method: "POST", body: "{}"}, 415},
		// A DELETE with no body is no form and cannot cross sites
		// without a CORS preflight the server never grants: MCP's
		// session end (the SDKs' terminateSession) sends no
		// Content-Type.
		{"DELETE with no body", req{method: "DELETE"}, 200},
		{"DELETE with a text body", req{method: "DELETE", ctype: "text/plain", body: "x"}, 415},
		{"POST with no body and no type", req{method: "POST"}, 415},
		{"cross-origin DELETE", req{method: "DELETE", hdr: map[string]string{"Origin": "http://evil.example"}}, 403},
		{"cross-origin JSON POST", req{method: "POST", ctype: "application/json", body: "{}", hdr: map[string]string{"Origin": "http://evil.example"}}, 403},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := do(t, nil, srv.URL, c.rq)
			if code != c.want {
				t.Fatalf("got %d %s, want %d", code, body, c.want)
			}
			if code != 200 {
				var e struct{ Status, Error, Hint string }
				if err := json.Unmarshal([]byte(body), &e); err != nil || e.Status == "" || e.Error == "" || e.Hint == "" {
					t.Fatalf("refusal is not a JSON error with a hint: %s (%v)", body, err)
				}
			}
		})
	}
}

func TestBearerTokens(t *testing.T) {
	const a, b = "token-a-0123456789abcdef", "token-b-0123456789abcdef"
	srv, g := newGuarded(t, Policy{Tokens: []string{a, b}, Open: []string{"/healthz"}})
	if !g.Authenticates() {
		t.Fatal("a guard with tokens must authenticate")
	}
	code, body := do(t, nil, srv.URL, req{})
	if code != 401 || !strings.Contains(body, "needs a token") {
		t.Fatalf("no token: %d %s", code, body)
	}
	code, _ = do(t, nil, srv.URL, req{hdr: map[string]string{"Authorization": "Bearer wrong-token-0123456789"}})
	if code != 401 {
		t.Fatalf("wrong token: %d", code)
	}
	code, _ = do(t, nil, srv.URL, req{hdr: map[string]string{"Authorization": "Basic " + a}})
	if code != 401 {
		t.Fatalf("basic scheme: %d", code)
	}
	_, pa := do(t, nil, srv.URL, req{hdr: map[string]string{"Authorization": "Bearer " + a}})
	_, pb := do(t, nil, srv.URL, req{hdr: map[string]string{"Authorization": "bearer " + b}})
	if !strings.HasPrefix(pa, "ok token-") || !strings.HasPrefix(pb, "ok token-") || pa == pb {
		t.Fatalf("each token is its own principal: %q %q", pa, pb)
	}
	if strings.Contains(pa, a) {
		t.Fatalf("the principal reveals the token: %q", pa)
	}
	// A bearer token stands in for the JSON content type (no browser
	// form can send one).
	code, _ = do(t, nil, srv.URL, req{method: "POST", ctype: "text/plain", body: "x", hdr: map[string]string{"Authorization": "Bearer " + a}})
	if code != 200 {
		t.Fatalf("text/plain POST with a token: %d", code)
	}
	// The open path answers GET without a token, nothing else.
	if code, _ := do(t, nil, srv.URL, req{path: "/healthz"}); code != 200 {
		t.Fatalf("open path: %d", code)
	}
	if code, _ := do(t, nil, srv.URL, req{method: "POST", path: "/healthz", ctype: "application/json"}); code != 401 {
		t.Fatalf("POST to the open path: %d", code)
	}
	// The Host check applies with a token too.
	if code, _ := do(t, nil, srv.URL, req{host: "evil.example", hdr: map[string]string{"Authorization": "Bearer " + a}}); code != 403 {
		t.Fatalf("foreign host with a token: %d", code)
	}
	if _, err := New(Policy{Tokens: []string{"short"}}); err == nil {
		t.Fatal("a 5-character token must be refused")
	}
}

func TestLoginLink(t *testing.T) {
	srv, g := newGuarded(t, Policy{Login: true})
	if code, _ := do(t, nil, srv.URL, req{path: "/api"}); code != 401 {
		t.Fatalf("no login: %d", code)
	}
	link := g.LoginLink(srv.URL + "/")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ok "+LoginPrincipal {
		t.Fatalf("following the link: %d %s", resp.StatusCode, b)
	}
	if resp.Request.URL.Query().Get(LoginParam) != "" {
		t.Fatalf("the redirect keeps the token in the URL: %s", resp.Request.URL)
	}
	// The cookie authenticates later requests, JSON posts included; a
	// text/plain post still needs a token.
	if code, body := do(t, c, srv.URL, req{path: "/api"}); code != 200 {
		t.Fatalf("with the cookie: %d %s", code, body)
	}
	if code, _ := do(t, c, srv.URL, req{method: "POST", ctype: "application/json", body: "{}"}); code != 200 {
		t.Fatalf("JSON post with the cookie: %d", code)
	}
	if code, _ := do(t, c, srv.URL, req{method: "POST", ctype: "text/plain", body: "{}"}); code != 415 {
		t.Fatalf("text/plain post with the cookie: %d", code)
	}
	// The link works once.
	jar2, _ := cookiejar.New(nil)
	code, body := do(t, &http.Client{Jar: jar2}, link, req{})
	if code != 401 || !strings.Contains(body, "used already") {
		t.Fatalf("second use of the link: %d %s", code, body)
	}
}

func TestExposed(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:80": false, "[::1]:80": false, "127.9.9.9:1": false, "0.0.0.0:80": true, "[::]:80": true, "10.0.0.5:80": true} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := Exposed(a); got != want {
			t.Errorf("Exposed(%s) = %v", addr, got)
		}
		g, _ := New(Policy{})
		if err := RequireToken(a, g); (err != nil) != want {
			t.Errorf("RequireToken(%s) = %v", addr, err)
		}
		g, _ = New(Policy{Tokens: []string{"0123456789abcdef0123"}})
		if err := RequireToken(a, g); err != nil {
			t.Errorf("RequireToken(%s) with a token = %v", addr, err)
		}
	}
}

func TestTokensFromEnv(t *testing.T) {
	env := map[string]string{"T": " aaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbb\n", "SHORT": "abc", "EMPTY": ""}
	get := func(k string) string { return env[k] }
	toks, err := TokensFromEnv(get, "T")
	if err != nil || len(toks) != 2 {
		t.Fatalf("%v %v", toks, err)
	}
	for _, name := range []string{"SHORT", "EMPTY", "UNSET"} {
		if _, err := TokensFromEnv(get, name); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if toks, err := TokensFromEnv(get, ""); err != nil || toks != nil {
		t.Errorf("no variable: %v %v", toks, err)
	}
}

func TestCleanPaths(t *testing.T) {
	h := CleanPaths(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	tests := []struct {
		target string
		clean  string // "" : passed on
	}{
		{"/virtual", ""},
		{"/a/b/", ""},
		{"/%2e%2e/x", ""}, // escapes are not dot segments
		{"/a%2F%2Fb", ""},
		{"/..", "/"},
		{"/a/../b", "/b"},
		{"/a//b", "/a/b"},
		{"/a/./b/", "/a/b/"},
		{"//", "/"},
		{"/a/.", "/a"},
	}
	for _, tt := range tests {
		for _, method := range []string{"GET", "POST", "DELETE"} {
			req := httptest.NewRequest(method, "http://127.0.0.1"+tt.target, strings.NewReader("{}"))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if tt.clean == "" {
				if rec.Code != http.StatusTeapot {
					t.Errorf("%s %s: %d, want it passed on", method, tt.target, rec.Code)
				}
				continue
			}
			var e struct{ Status, Error, Hint string }
			if rec.Code != http.StatusBadRequest || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Status != "bad_request" || !strings.HasSuffix(e.Hint, ": "+tt.clean) {
				t.Errorf("%s %s: %d %q, want 400 naming %s", method, tt.target, rec.Code, rec.Body, tt.clean)
			}
		}
	}
}
