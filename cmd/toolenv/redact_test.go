package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolenv/toolenv/internal/deadport"
	"github.com/toolenv/toolenv/internal/logtest"
	"github.com/toolenv/toolenv/internal/pgtest"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// planted are distinct secrets, one per place a run may be given one.
type planted map[string]string

func (p planted) new(what string) string {
	s := fmt.Sprintf("PLANT%02d%s", len(p), strings.ToUpper(strings.ReplaceAll(what, "-", "")))
	p[what] = s
	return s
}

// check fails the test for every secret text shows.
func (p planted) check(t *testing.T, where, text string) {
	t.Helper()
	for what, s := range p {
		if strings.Contains(text, s) {
			i := strings.Index(text, s)
			t.Errorf("%s shows the secret of %s: …%s…", where, what, text[max(0, i-120):min(len(text), i+len(s)+40)])
		}
	}
}

// checkDir checks every file under dir.
func (p planted) checkDir(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			p.check(t, path, string(b))
			n++
		}
		return nil
	})
	return n
}

// TestPlantedSecretsAppearNowhere plants a distinct secret in every flag
// and environment variable that can hold one (the user info and query
// of every URL, the password and sslpassword of a store given as a URL
// and as libpq keywords, the keys and tokens read from variables) and
// runs serve, config print, cache stats, eval, mirror and map index with
// them, debug logs on: no output, log line, answer, header or file any
// of them writes shows a secret, while the commands still work (a libpq
// keyword store is PostgreSQL, not an SQLite file named after it).
func TestPlantedSecretsAppearNowhere(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and runs six commands")
	}
	ctx := context.Background()
	p := planted{}
	model := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		return llmtest.Reply{Content: "Thought: done.\nFinal Answer: 42", Embed: func(s string) []float32 { return []float32{float32(len(s)), 1, 0} }}
	})
	t.Cleanup(model.Close)
	withSecrets := func(base, what string) string { // user info and a key in the query
		return strings.Replace(base, "http://", "http://user:"+p.new(what+"-pw")+"@", 1) + "?api-key=" + p.new(what+"-key")
	}
	dead := deadport.URL(t, "")
	for _, v := range []string{"LLM", "UP", "EMBED", "MODEL", "JUDGE"} {
		t.Setenv("TOOLENV_TEST_KEY_"+v, p.new("env-"+v))
	}
	t.Setenv("TOOLENV_TEST_TOKEN", p.new("env-token")+"-0123456789abcdef")
	dbURL := func() string { // a fresh database (on the server the tests share), the URL form with both passwords
		dsn := pgtest.DB(t)
		return strings.Replace(dsn, "toolenv@", "toolenv:"+p.new("store-url-pw")+"@", 1) + "&sslpassword=" + p.new("store-url-sslpw")
	}
	dbKeywords := func() string { // the libpq keyword form
		u, err := url.Parse(pgtest.DB(t))
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("host=127.0.0.1 port=%s dbname=%s user=toolenv password=%s sslmode=disable sslpassword='%s x'",
			u.Port(), strings.TrimPrefix(u.Path, "/"), p.new("store-kw-pw"), p.new("store-kw-sslpw"))
	}
	t.Setenv("TOOLENV_STORE", dbURL())
	demoDir, _ := filepath.Abs(filepath.Join("..", "..", "demo", "collection"))
	world, _ := filepath.Abs(worldDir)
	cwd := t.TempDir()
	t.Chdir(cwd)

	// serve, and the calls and pages a client sees.
	serveArgs := []string{"--store", dbKeywords(), "--log-level", "debug",
		"--llm-url", withSecrets(model.URL(), "llm"), "--llm-model", "m", "--llm-key-env", "TOOLENV_TEST_KEY_LLM",
		"--upstream-url", withSecrets(dead+"/rapidapi", "upstream"), "--upstream-key-env", "TOOLENV_TEST_KEY_UP",
		"--search-embed-url", withSecrets(model.URL(), "embed"), "--search-embed-model", "e", "--search-embed-key-env", "TOOLENV_TEST_KEY_EMBED",
		"--auth-token-env", "TOOLENV_TEST_TOKEN"}
	sctx, stop := context.WithCancel(ctx)
	var serveErr logtest.Buffer
	ready := newReadyWriter()
	done := make(chan int, 1)
	go func() {
		done <- Run(sctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, serveArgs...), strings.NewReader(""), io.Discard, io.MultiWriter(&serveErr, ready))
	}()
	select {
	case <-ready.ready:
	case code := <-done:
		t.Fatalf("serve exited (code %d) before it served: %s", code, serveErr.String())
	case <-time.After(safetyNet):
		t.Fatalf("serve did not come up: %s", serveErr.String())
	}
	base := ready.base(t)
	token := os.Getenv("TOOLENV_TEST_TOKEN")
	for _, rq := range []struct{ method, path, body string }{
		{"POST", "/virtual", `{"category":"Weather","tool_name":"Skylark Weather","api_name":"current_weather","tool_input":"{\"city\": \"Paris\"}","strip":"","toolbench_key":""}`},
		{"GET", "/collections", ""}, {"GET", "/metrics", ""}, {"GET", "/collections/demo/openapi.json", ""},
		{"POST", "/tools/demo/current_weather", `{"city": "Oslo"}`},
	} {
		req, _ := http.NewRequest(rq.method, base+rq.path, strings.NewReader(rq.body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var hdr strings.Builder
		resp.Header.Write(&hdr)
		p.check(t, rq.path+" answer", hdr.String()+string(b))
	}
	stop()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d: %s", code, serveErr.String())
	}
	p.check(t, "serve's log", serveErr.String())
	if !strings.Contains(serveErr.String(), "host=127.0.0.1") {
		t.Errorf("serve's log does not name the store it used:\n%.2000s", serveErr.String())
	}

	// config print of the same flags.
	code, out, errs := run(t, ctx, append([]string{"config", "print"}, serveArgs...)...)
	if code != 0 {
		t.Fatalf("config print: %d %s", code, errs)
	}
	p.check(t, "config print", out+errs)

	// Stores that cannot be reached: serve and cache stats say so.
	deadStore := "postgres://toolenv:" + p.new("dead-pw") + "@" + strings.TrimPrefix(dead, "http://") + "/x?sslmode=disable&sslpassword=" + p.new("dead-sslpw")
	deadKeywords := "host=127.0.0.1 port=1 dbname=x user=u password=" + p.new("dead-kw-pw")
	for _, args := range [][]string{
		{"serve", "--addr", freeAddr(t), "--store", deadStore},
		{"cache", "stats", "--store", deadStore},
		{"cache", "stats", "--store", deadKeywords},
		{"store", "status", "--store", deadKeywords},
	} {
		code, out, errs := run(t, ctx, append(args, "--log-level", "debug")...)
		if code == 0 {
			t.Errorf("%s with a dead store: exit 0", args[:2])
		}
		p.check(t, strings.Join(args[:2], " ")+" with a dead store", out+errs)
		if !strings.Contains(errs, "xxxxx") {
			t.Errorf("%s: the error does not show the redacted store: %s", args[:2], errs)
		}
	}
	if names, _ := os.ReadDir(cwd); len(names) > 0 {
		t.Errorf("a command made %s in the working folder (a DSN taken as a file name?)", names[0].Name())
	}

	// eval, with the model, the judge and the store all carrying secrets.
	evalOut := filepath.Join(t.TempDir(), "eval")
	code, out, errs = run(t, ctx, "eval", "--tasks", demoDir, "--agent", "react",
		"--model", withSecrets(model.URL(), "model"), "--model-name", "m", "--api-key-env", "TOOLENV_TEST_KEY_MODEL",
		"--judge-url", withSecrets(model.URL(), "judge"), "--judge-api-key-env", "TOOLENV_TEST_KEY_JUDGE",
		"--store", dbKeywords(), "--out", evalOut, "--log-level", "debug")
	p.check(t, "eval's output", out+errs)
	if n := p.checkDir(t, evalOut); n < 4 {
		t.Errorf("eval (exit %d) wrote %d files: %s", code, n, errs)
	}
	if b, err := os.ReadFile(filepath.Join(evalOut, "run.json")); err != nil || !strings.Contains(string(b), "api-key=xxxxx") {
		t.Errorf("run.json does not keep the redacted command line: %v %.1000s", err, b)
	}

	// mirror, the upstream and model with secrets.
	mirrorOut := filepath.Join(t.TempDir(), "mirror")
	code, out, errs = run(t, ctx, "mirror", "run", "--collection", demoDir, "--out", mirrorOut, "--per-api", "2",
		"--upstream-url", withSecrets(dead+"/rapidapi", "mirror-upstream"), "--upstream-key-env", "TOOLENV_TEST_KEY_UP",
		"--llm-url", withSecrets(model.URL(), "mirror-llm"), "--llm-model", "m", "--llm-key-env", "TOOLENV_TEST_KEY_LLM", "--sampler",
		"--store", dbURL(), "--log-level", "debug")
	p.check(t, "mirror's output", out+errs)
	if n := p.checkDir(t, mirrorOut); code != 0 || n < 3 {
		t.Errorf("mirror: exit %d, %d files: %s", code, n, errs)
	}

	// map index, with an embeddings endpoint carrying secrets.
	mapDir := t.TempDir()
	code, out, errs = run(t, ctx, "map", "index", "--collection", world, "--index", filepath.Join(mapDir, "map.db"), "--mappings-out", filepath.Join(mapDir, "m.json"),
		"--embed-url", withSecrets(model.URL(), "map-embed"), "--embed-model", "e", "--embed-key-env", "TOOLENV_TEST_KEY_EMBED", "--store", dbKeywords(), "--log-level", "debug")
	p.check(t, "map index's output", out+errs)
	p.checkDir(t, mapDir)
	if code != 0 {
		t.Errorf("map index: exit %d: %s", code, errs)
	}

	// The endpoints were really used (the secrets were not just unread).
	if len(model.Requests()) == 0 {
		t.Error("the model was never asked: the runs did not exercise their endpoints")
	}
}
