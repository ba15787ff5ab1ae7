package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolenv/toolenv/internal/deadport"
	"github.com/toolenv/toolenv/internal/logtest"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
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

// TestSecretsInConfiguredURLsNeverShow: the password and query key of
// --upstream-url and --llm-url appear in no answer, header, log line or
// printed configuration, while the warnings still say what failed.
func TestSecretsInConfiguredURLsNeverShow(t *testing.T) {
	t.Parallel()             // waits on the calls to the dead endpoints
	dead := deadport.Addr(t) // nothing listens, nor can: every call fails at once
	ctx, cancel := context.WithCancel(context.Background())
	var stderr logtest.Buffer
	ready := newReadyWriter()
	done := make(chan int, 1)
	args := []string{"serve", "--addr", "127.0.0.1:0", "--store", ":memory:", "--log-level", "debug",
		"--upstream-url", "http://user:PASSWORD1@" + dead + "/rapidapi?key=SECRET1",
		"--llm-url", "http://" + dead + "/v1?api-key=SECRET2", "--llm-model", "m"}
	go func() { done <- Run(ctx, args, strings.NewReader(""), io.Discard, io.MultiWriter(&stderr, ready)) }()
	select {
	case <-ready.ready:
	case code := <-done:
		t.Fatalf("serve exited (code %d) before it served: %s", code, stderr.String())
	case <-time.After(safetyNet):
		t.Fatalf("serve did not come up: %s", stderr.String())
	}
	base := ready.base(t)
	ans, hdr := postVirtual(t, base, map[string]any{
		"category": "Weather", "tool_name": "Skylark Weather", "api_name": "current_weather",
		"tool_input": `{"city": "Paris"}`, "strip": "", "toolbench_key": "",
	})
	cancel()
	<-done
	var cfgOut bytes.Buffer
	Run(context.Background(), append([]string{"config", "print"}, args[1:]...), strings.NewReader(""), &cfgOut, io.Discard)
	warnings := strings.Join(hdr.Values("X-Toolenv-Warning"), "\n")
	if !strings.Contains(warnings, "the real API was not used") || !strings.Contains(warnings, "could not answer") {
		t.Fatalf("the warnings do not say what failed: %q", warnings)
	}
	body, _ := json.Marshal(ans)
	for where, text := range map[string]string{"warning headers": warnings, "answer": string(body), "log": stderr.String(), "config print": cfgOut.String()} {
		for _, secret := range []string{"PASSWORD1", "SECRET1", "SECRET2"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows %s:\n%s", where, secret, text)
			}
		}
	}
	if !strings.Contains(cfgOut.String(), "key=xxxxx") {
		t.Errorf("config print does not show the redacted URL:\n%s", cfgOut.String())
	}
}

// TestHungModelEndpointThroughServe: serve with an LLM endpoint that
// accepts connections and never answers, and the default per-request
// timeout (60 s) and simulator budget (30 s) far above the call's --timeout
// of 2 s: /virtual answers, synthesized, and the warning names the cause.
func TestHungModelEndpointThroughServe(t *testing.T) {
	t.Parallel() // waits out the call's --timeout
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	base, stop := serveInBackground(t, "--store", ":memory:", "--llm-url", "http://"+ln.Addr().String()+"/v1", "--llm-model", "m", "--timeout", "2s")
	defer stop()
	ans, hdr := postVirtual(t, base, map[string]any{
		"category": "Weather", "tool_name": "Skylark Weather", "api_name": "current_weather",
		"tool_input": `{"city": "Paris"}`, "strip": "", "toolbench_key": "",
	})
	w := strings.Join(hdr.Values("X-Toolenv-Warning"), "\n")
	if ans["error"] != "" || hdr.Get("X-Toolenv-Source") != "synthesizer" || !strings.Contains(w, "could not answer") || !strings.Contains(w, "no answer") || strings.Contains(w, "no LLM simulator is configured") {
		t.Fatalf("answer %v from %s, warnings:\n%s", ans, hdr.Get("X-Toolenv-Source"), w)
	}
}

// TestDeepSchemaIsALoadErrorNotAPanic: serve (which builds the MCP
// server) refuses a 600-level input schema from tools.json, an OpenAPI
// document and ToolBench docs with an error naming the file and the tool.
func TestDeepSchemaIsALoadErrorNotAPanic(t *testing.T) {
	inner := `{"type": "string"}`
	for range 599 {
		inner = `{"type": "object", "properties": {"x": ` + inner + `}}`
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "collection.json"), []byte(`{"name": "deep", "kind": "openapi", "backend": {"type": "virtual"}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "tools.json"), []byte(`[{"name": "deep_tool", "input": `+inner+`}]`), 0o644)
	doc := filepath.Join(t.TempDir(), "deep.json")
	os.WriteFile(doc, []byte(`{"openapi": "3.0.3", "info": {"title": "Deep", "version": "1"}, "paths": {"/deep": {"post": {"operationId": "postDeep",
	  "requestBody": {"content": {"application/json": {"schema": `+inner+`}}}, "responses": {"200": {"description": "ok"}}}}}}`), 0o644)
	// ToolBench parameters take their schema from their default: a
	// default nested 600 levels gives a 600-level schema.
	deep := strings.Repeat("[", 600) + strings.Repeat("]", 600)
	tb := filepath.Join(t.TempDir(), "Data")
	os.MkdirAll(tb, 0o755)
	tbFile := filepath.Join(tb, "deep.json")
	os.WriteFile(tbFile, []byte(`{"tool_name": "Deep Tool", "api_list": [{"name": "nested", "method": "GET", "description": "d",
	  "required_parameters": [{"name": "q", "type": "ARRAY", "description": "x", "default": `+deep+`}]}]}`), 0o644)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--collection", dir}, []string{"tools.json", `"deep_tool"`, "levels"}},
		{[]string{"--openapi", doc}, []string{doc, "postDeep", "levels"}},
		{[]string{"--toolbench", tbFile}, []string{tbFile, `"nested_for_deep_tool"`, "levels"}},
	} {
		code, _, stderr := run(t, context.Background(), append([]string{"serve", "--store", ":memory:", "--addr", "127.0.0.1:0"}, c.args...)...)
		if code == 0 || strings.Contains(stderr, "panic") {
			t.Fatalf("%v: exit %d\n%s", c.args, code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: the error does not name %q:\n%s", c.args, w, stderr)
			}
		}
	}
}

// TestEvalReportsNeverShowURLSecrets: an eval whose model endpoint has a
// password and a query key, passes its check and then refuses every
// request, exits 4 (every episode errored), and neither its output nor
// any file it writes (the journal, run.json, the reports) shows the
// password or the key, while the errors still name the endpoint; nor
// does the failed check of the same endpoint refusing at once.
func TestEvalReportsNeverShowURLSecrets(t *testing.T) {
	var refuse atomic.Bool
	srv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		if n == 0 && !refuse.Load() {
			return llmtest.Reply{Content: "OK"} // the check
		}
		return llmtest.Reply{Status: http.StatusBadRequest}
	})
	defer srv.Close()
	model := strings.Replace(srv.URL(), "http://", "http://user:PASSWORD3@", 1) + "?api-key=SECRET3"
	out := t.TempDir()
	code, stdout, stderr := run(t, context.Background(), "eval", "--tasks", filepath.Join("..", "..", "demo", "collection"), "--agent", "react",
		"--model", model, "--model-name", "m", "--model-retries", "0", "--no-judge", "--out", out, "--store", ":memory:", "--log-level", "debug")
	if code != 4 {
		t.Fatalf("exit %d, want 4 (every episode errored)\n%s", code, stderr)
	}
	texts := map[string]string{"stdout": stdout, "stderr": stderr}
	filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			texts[path] = string(b)
		}
		return nil
	})
	if len(texts) < 5 {
		t.Fatalf("eval wrote only %d files", len(texts)-2)
	}
	named := false
	for where, text := range texts {
		for _, secret := range []string{"PASSWORD3", "SECRET3"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows %s", where, secret)
			}
		}
		named = named || strings.Contains(text, "/chat/completions")
	}
	if !named {
		t.Error("no output names the endpoint that failed")
	}
	refuse.Store(true)
	code, _, stderr = run(t, context.Background(), "eval", "--tasks", filepath.Join("..", "..", "demo", "collection"), "--agent", "react",
		"--model", model, "--model-name", "m", "--no-judge", "--out", t.TempDir(), "--store", ":memory:")
	if code != 4 || !strings.Contains(stderr, "failed its check: HTTP 400") || strings.Contains(stderr, "PASSWORD3") || strings.Contains(stderr, "SECRET3") {
		t.Errorf("the check of an endpoint that refuses: exit %d: %s", code, stderr)
	}
}
