package mcpsource

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// TestIsolationConfig: the "isolation" key of an mcpServers entry, as a
// mode or an object, and every way it can be wrong.
func TestIsolationConfig(t *testing.T) {
	for _, c := range []struct {
		entry string
		want  Isolation
		err   string
	}{
		{`{"command":"c","isolation":"episode"}`, Isolation{Mode: IsolationEpisode}, ""},
		{`{"command":"c","isolation":{"mode":"shared"}}`, Isolation{Mode: IsolationShared}, ""},
		{`{"command":"c","isolation":{"pool":4,"max":8,"dir":"/tmp/x","keep":true,"seed_before_start":true}}`, Isolation{Pool: 4, Max: 8, Dir: "/tmp/x", Keep: true, SeedBeforeStart: true}, ""},
		{`{"url":"https://h/mcp","isolation":{"reset":{"tool":"reset"}}}`, Isolation{Reset: &Reset{Tool: "reset"}}, ""},
		{`{"command":"c","isolation":"per-episode"}`, Isolation{}, `mode "per-episode": want episode`},
		{`{"command":"c","isolation":{"pool_size":2}}`, Isolation{}, `unknown field "pool_size"`},
		{`{"command":"c","isolation":{"pool":-1}}`, Isolation{}, "0 (the default) or more"},
		{`{"command":"c","isolation":{"pool":3,"max":2}}`, Isolation{}, "pool 3 is more than max 2"},
		{`{"url":"https://h/mcp","isolation":{"keep":true}}`, Isolation{}, "is an HTTP server"},
		{`{"url":"https://h/mcp","isolation":{"reset":{}}}`, Isolation{}, "give a url"},
		{`{"url":"https://h/mcp","isolation":{"reset":{"url":"https://h/r","tool":"t"}}}`, Isolation{}, "not both"},
		{`{"url":"https://h/mcp","isolation":{"reset":{"tool":"t","method":"PUT"}}}`, Isolation{}, "go with a url"},
		{`{"url":"https://h/mcp","isolation":{"reset":{"url":"ftp://h/r"}}}`, Isolation{}, "want http:// or https://"},
		{`{"url":"https://h/mcp","isolation":{"reset":{"url":"https://h/r","method":"BREW"}}}`, Isolation{}, `reset method "BREW"`},
		{`{"command":"c","isolation":5}`, Isolation{}, "isolation"},
	} {
		servers, err := ParseConfig([]byte(`{"mcpServers":{"s":` + c.entry + `}}`))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want an error saying %q", c.entry, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.entry, err)
			continue
		}
		got, _ := json.Marshal(servers[0].Isolation)
		want, _ := json.Marshal(c.want)
		if string(got) != string(want) {
			t.Errorf("%s: %s, want %s", c.entry, got, want)
		}
	}
}

// TestIsolationMode: the default isolates servers with tools that write
// (stdio; HTTP only with a reset), and a configured mode wins.
func TestIsolationMode(t *testing.T) {
	read := &toolenv.Tool{Name: "r", Meta: map[string]string{toolenv.MetaState: toolenv.StateRead}}
	write := &toolenv.Tool{Name: "w", Meta: map[string]string{toolenv.MetaState: toolenv.StateWrite}}
	stateless := &toolenv.Tool{Name: "s"}
	stdio := &Server{Name: "a", Command: "c"}
	overHTTP := &Server{Name: "b", URL: "https://h/mcp"}
	reset := &Server{Name: "c", URL: "https://h/mcp", Isolation: &Isolation{Reset: &Reset{Tool: "reset"}}}
	forced := &Server{Name: "d", Command: "c", Isolation: &Isolation{Mode: IsolationShared}}
	for _, c := range []struct {
		s     *Server
		tools []*toolenv.Tool
		want  string
	}{
		{stdio, []*toolenv.Tool{read, write}, IsolationEpisode},
		{stdio, []*toolenv.Tool{stateless, read}, IsolationShared},
		{overHTTP, []*toolenv.Tool{read, write}, IsolationShared},
		{reset, []*toolenv.Tool{read, write}, IsolationEpisode},
		{forced, []*toolenv.Tool{write}, IsolationShared},
		{&Server{Name: "e", Command: "c", Isolation: &Isolation{Mode: IsolationEpisode}}, []*toolenv.Tool{stateless}, IsolationEpisode},
	} {
		if got := c.s.IsolationMode(c.tools); got != c.want {
			t.Errorf("%s with %d tools: %s, want %s", c.s.Name, len(c.tools), got, c.want)
		}
	}
}

// TestIsolationSecrets: a reset's header written inline is reported and
// hidden like any header; a path in the instance's folder is not a
// secret.
func TestIsolationSecrets(t *testing.T) {
	s := &Server{Name: "h", URL: "https://h/mcp", Isolation: &Isolation{Reset: &Reset{URL: "https://u:p@h/reset", Headers: map[string]string{"Authorization": "Bearer abcdefghijklmnop1234", "X-Ok": "${TOKEN}"}}}}
	if got := strings.Join(s.Secrets(), ","); got != "Authorization" {
		t.Fatalf("secrets %q", got)
	}
	r := s.Redacted()
	if r.Isolation.Reset.Headers["Authorization"] == s.Isolation.Reset.Headers["Authorization"] || r.Isolation.Reset.Headers["X-Ok"] != "${TOKEN}" || strings.Contains(r.Isolation.Reset.URL, "u:p") {
		t.Fatalf("redacted %+v", r.Isolation.Reset)
	}
	if s.Isolation.Reset.Headers["Authorization"] != "Bearer abcdefghijklmnop1234" {
		t.Fatal("Redacted changed the original")
	}
	m := &Server{Name: "m", Command: "c", Env: map[string]string{"MEMORY_FILE_PATH": "${TOOLENV_EPISODE_DIR}/a-long-file-name-for-a-graph.jsonl"}}
	if len(m.Secrets()) != 0 || !m.NamesEpisodeDir() {
		t.Fatalf("an episode path: secrets %v, names the folder %v", m.Secrets(), m.NamesEpisodeDir())
	}
}

// TestEpisodeDirPaths: an instance runs in its own folder, so relative
// paths of its command line that name toolenv's files are made absolute;
// flags, words and missing paths are left alone.
func TestEpisodeDirPaths(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	os.WriteFile(filepath.Join(dir, "bin", "server.js"), []byte("//"), 0o644)
	s := &Server{Name: "s", Command: "bin/node", Args: []string{"bin/server.js", "--flag", "memory", "missing/file.js", "/abs/x"},
		Env: map[string]string{"F": "${TOOLENV_EPISODE_DIR}/m.jsonl"}}
	run, err := s.resolved(episodeGetenv(func(string) string { return "" }, "/ep/1"))
	if err != nil {
		t.Fatal(err)
	}
	run.withEpisodeDir("/ep/1")
	want := []string{filepath.Join(dir, "bin/server.js"), "--flag", "memory", "missing/file.js", "/abs/x"}
	if run.Command != filepath.Join(dir, "bin/node") || strings.Join(run.Args, " ") != strings.Join(want, " ") || run.Dir != "/ep/1" {
		t.Fatalf("%s %v in %s", run.Command, run.Args, run.Dir)
	}
	if run.Env["F"] != "/ep/1/m.jsonl" || run.Env[EpisodeDirVar] != "/ep/1" || s.Env[EpisodeDirVar] != "" || s.Args[0] != "bin/server.js" {
		t.Fatalf("env %v; the configured server changed: %v %v", run.Env, s.Env, s.Args)
	}
	// A configured cwd is the server's: nothing is rewritten.
	c := &Server{Name: "c", Command: "bin/node", Args: []string{"bin/server.js"}, Dir: "/srv"}
	c.withEpisodeDir("/ep/2")
	if c.Command != "bin/node" || c.Args[0] != "bin/server.js" || c.Dir != "/srv" {
		t.Fatalf("%+v", c)
	}
}
