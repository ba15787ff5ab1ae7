package main

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolenv/toolenv/mapping/probe"
)

// TestServeRefusesToExposeWithoutAToken: serve and map review on an
// address other machines reach need --auth-token-env, and say so.
func TestServeRefusesToExposeWithoutAToken(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, _, stderr := run(t, ctx, "serve", "--store", ":memory:", "--addr", "0.0.0.0:0")
	if code != 2 || !strings.Contains(stderr, "--auth-token-env") || !strings.Contains(stderr, "reachable from other machines") {
		t.Fatalf("serve on 0.0.0.0 without a token: exit %d\n%s", code, stderr)
	}
	pf := filepath.Join(t.TempDir(), "probe.json")
	if err := probe.WriteFile(pf, probe.NewFile("m", nil, nil, nil)); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run(t, ctx, "map", "review", "--probe", pf, "--addr", "0.0.0.0:0")
	if code != 2 || !strings.Contains(stderr, "--auth-token-env") {
		t.Fatalf("map review on 0.0.0.0 without a token: exit %d\n%s", code, stderr)
	}
	t.Setenv("TOOLENV_TEST_EMPTY", "")
	code, _, stderr = run(t, ctx, "serve", "--store", ":memory:", "--addr", "127.0.0.1:0", "--auth-token-env", "TOOLENV_TEST_EMPTY")
	if code != 2 || !strings.Contains(stderr, "TOOLENV_TEST_EMPTY is empty or not set") {
		t.Fatalf("an empty token variable: exit %d\n%s", code, stderr)
	}
}

// TestServeWithAToken: with --auth-token-env every route but /healthz
// needs the token, and a Host given with --allowed-host is accepted.
func TestServeWithAToken(t *testing.T) {
	const tok = "serve-test-token-0123456789"
	t.Setenv("TOOLENV_TEST_TOKEN", tok)
	base, stop := serveInBackground(t, "--store", ":memory:", "--auth-token-env", "TOOLENV_TEST_TOKEN", "--allowed-host", "toolenv.example")
	defer stop()
	get := func(path, token, host string) int {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		path, token, host string
		want              int
	}{
		{"/collections", "", "", 401},
		{"/collections", "wrong-token-0123456789", "", 401},
		{"/collections", tok, "", 200},
		{"/collections", tok, "toolenv.example", 200},
		{"/collections", tok, "evil.example", 403},
		{"/healthz", "", "", 200},
	} {
		if got := get(c.path, c.token, c.host); got != c.want {
			t.Errorf("GET %s token=%q host=%q: %d, want %d", c.path, c.token, c.host, got, c.want)
		}
	}
}
