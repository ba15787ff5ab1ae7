package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestUncleanPathsMeetTheGuardFirst: on every mount of toolenv serve
// (the front-ends, the RL episodes under /openenv and their MCP endpoint
// /openenv/mcp), a path not in its clean form is never redirected: without
// the token it is refused 401, from a foreign Host 403, and with both
// right it gets 400 bad_request naming the clean path. Before, the
// /openenv mount's router answered "//collections" and "/a/../b" with a
// redirect ahead of the Host and token checks.
func TestUncleanPathsMeetTheGuardFirst(t *testing.T) {
	const tok = "cleanpath-test-token-0123456789"
	t.Setenv("TOOLENV_TEST_TOKEN", tok)
	base, stop := serveInBackground(t, "--store", ":memory:", "--auth-token-env", "TOOLENV_TEST_TOKEN")
	defer stop()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path, token, host string) (int, http.Header, []byte) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, body
	}
	routes := []string{"/collections", "/virtual", "/mcp", "/healthz", "/metrics", "/tools/demo/weather_forecast",
		"/openenv/reset", "/openenv/step", "/openenv/health", "/openenv/schema", "/openenv/mcp", "/openenv/ws"}
	for _, route := range routes {
		head, tail, _ := strings.Cut(route[1:], "/")
		unclean := map[string]string{ // sent -> clean
			"/" + route:                            route,
			"/x/.." + route:                        route,
			"/." + route:                           route,
			"/openenv/.." + route:                  route,
			"/" + head + "//" + tail:               "/" + head + "/" + tail,
			"/" + head + "/./" + tail:              "/" + head + "/" + tail,
			"/" + head + "/y/../" + tail:           "/" + head + "/" + tail,
			strings.TrimSuffix(route, "/") + "/./": strings.TrimSuffix(route, "/") + "/",
		}
		for sent, clean := range unclean {
			if sent == clean || strings.HasSuffix(sent, "//") {
				continue
			}
			for _, method := range []string{"GET", "POST"} {
				for _, c := range []struct {
					token, host string
					want        int
				}{{"", "", 401}, {tok, "evil.example", 403}, {tok, "", 400}} {
					code, hdr, body := do(method, sent, c.token, c.host)
					if code != c.want || hdr.Get("Location") != "" {
						t.Errorf("%s %s (token %v, host %q): %d Location %q %s, want %d and no redirect", method, sent, c.token != "", c.host, code, hdr.Get("Location"), body, c.want)
						continue
					}
					if c.want == 400 {
						var e struct{ Status, Hint string }
						if json.Unmarshal(body, &e) != nil || e.Status != "bad_request" || !strings.Contains(e.Hint, clean) {
							t.Errorf("%s %s: %s, want bad_request naming %s", method, sent, body, clean)
						}
					}
				}
			}
		}
	}
	// Clean paths are served as before, under /openenv too.
	for _, c := range []struct {
		path string
		want int
	}{{"/openenv/health", 200}, {"/collections", 200}, {"/openenv/schema", 200}} {
		if code, _, body := do("GET", c.path, tok, ""); code != c.want {
			t.Errorf("GET %s: %d %s, want %d", c.path, code, body, c.want)
		}
	}
}
