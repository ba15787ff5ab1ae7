package mcpsource

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolenv/toolenv/internal/npmtest"
)

// TestChildGetsOnlyItsEnvironment starts the reference server-everything
// over stdio with secrets planted in toolenv's own environment (a bearer
// token, model keys, a token meant for another server) and asks it for
// its environment (its get-env tool): it holds the minimal inherited set
// and exactly what its configuration names, a ${VAR} reference expanded,
// and none of the planted secrets.
func TestChildGetsOnlyItsEnvironment(t *testing.T) {
	tools := npmtest.Require(t)
	planted := map[string]string{
		"TOOLENV_AUTH_TOKEN":    "planted-bearer-4f1c2a",
		"OPENAI_API_KEY":        "sk-planted-9d8e7f",
		"TOOLBENCH_KEY":         "planted-toolbench-31",
		"GITHUB_TOKEN":          "ghp_planted_for_another_server",
		"AWS_SECRET_ACCESS_KEY": "planted/aws/secret",
		"NODE_OPTIONS":          "--require=/nonexistent/planted.js",
	}
	for k, v := range planted {
		t.Setenv(k, v)
	}
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("LC_ALL", "C.UTF-8")
	srv := &Server{Name: "everything", Command: tools.Node(), Args: []string{tools.Bin("mcp-server-everything"), "stdio"},
		Env: map[string]string{"MEMORY_FILE_PATH": "/tmp/m.json", "SEARCH_KEY": "${TOOLBENCH_KEY}"}}
	c, _ := start(t, srv, Options{Getenv: os.Getenv, StartTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(ctx, "get-env", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]string
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env); err != nil {
		t.Fatal(err)
	}
	for k, v := range planted {
		if _, ok := env[k]; ok && k != "TOOLBENCH_KEY" {
			t.Errorf("the child inherited %s", k)
		}
		for ek, ev := range env {
			if ev == v && !(ek == "SEARCH_KEY" && k == "TOOLBENCH_KEY") {
				t.Errorf("the child holds the planted value of %s under %s", k, ek)
			}
		}
	}
	if _, ok := env["TOOLBENCH_KEY"]; ok {
		t.Error("the child inherited TOOLBENCH_KEY, which its configuration names only through SEARCH_KEY")
	}
	if env["MEMORY_FILE_PATH"] != "/tmp/m.json" || env["SEARCH_KEY"] != planted["TOOLBENCH_KEY"] {
		t.Errorf("the configured variables: MEMORY_FILE_PATH=%q SEARCH_KEY=%q", env["MEMORY_FILE_PATH"], env["SEARCH_KEY"])
	}
	for _, k := range []string{"PATH", "LANG", "LC_ALL"} {
		if env[k] != os.Getenv(k) {
			t.Errorf("%s = %q, want toolenv's %q", k, env[k], os.Getenv(k))
		}
	}
	var keys []string
	for k := range env {
		if !InheritedEnv(k) && k != "MEMORY_FILE_PATH" && k != "SEARCH_KEY" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if len(keys) > 0 {
		t.Errorf("the child holds variables neither inherited nor configured: %s", strings.Join(keys, ", "))
	}
}

// TestChildEnvKeepsTheMinimalSet: from an environment of any variables,
// the child keeps the minimal set and the locale, the configuration's
// values win over inherited ones, and exported shell functions are left out.
func TestChildEnvKeepsTheMinimalSet(t *testing.T) {
	environ := []string{"PATH=/usr/bin", "HOME=/home/u", "LC_TIME=de_DE.UTF-8", "LANG=C", "TOKEN=t", "API_KEY=k",
		"LANGX=no", "XLC_=no", "BASH_FUNC_f%%=() {  echo; }", "TERM=() { :; }", "PATH_EXTRA=/x", "=weird", "noequals"}
	got := childEnv(environ, map[string]string{"HOME": "/srv", "DB": "x.db"})
	want := []string{"PATH=/usr/bin", "LC_TIME=de_DE.UTF-8", "LANG=C", "DB=x.db", "HOME=/srv"}
	if !slices.Equal(got, want) {
		t.Fatalf("childEnv = %q, want %q", got, want)
	}
}
