package mcpsource

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
)

func TestParseFlag(t *testing.T) {
	for _, tc := range []struct {
		in, err string
		want    Server
	}{
		{in: "api=https://example.org/mcp", want: Server{Name: "api", URL: "https://example.org/mcp"}},
		{in: "mem=npx -y @modelcontextprotocol/server-memory", want: Server{Name: "mem", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"}}},
		{in: `fs=node "/opt/my server/index.js" --root '/tmp/a b'`, want: Server{Name: "fs", Command: "node", Args: []string{"/opt/my server/index.js", "--root", "/tmp/a b"}}},
		{in: "x=HTTP://h:1/p", want: Server{Name: "x", URL: "HTTP://h:1/p"}},
		{in: "nocommand", err: "want NAME=URL"},
		{in: "=cmd", err: "want NAME=URL"},
		{in: "a b=cmd", err: "MCP server name"},
		{in: `q=node "unclosed`, err: "does not split"},
		{in: "h=http:///nohost", err: "want http:// or https:// and a host"},
		{in: "u=https://user:sekrit@h/p", want: Server{Name: "u", URL: "https://user:sekrit@h/p"}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			s, err := ParseFlag(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "sekrit") {
					t.Fatalf("error shows a secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(s)
			want, _ := json.Marshal(&tc.want)
			if string(got) != string(want) || s.Name != tc.want.Name {
				t.Fatalf("got %s %s, want %s", s.Name, got, want)
			}
			if strings.Contains(s.String(), "sekrit") {
				t.Fatalf("String shows a secret: %s", s)
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	doc := `{"mcpServers": {
	  "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"MEMORY_FILE_PATH": "/tmp/m.json"}},
	  "remote": {"url": "https://mcp.example.org/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}, "type": "http"},
	  "off": {"command": "x", "disabled": true},
	  "windsurf": {"serverUrl": "https://w.example.org/mcp"}
	}, "otherClientSetting": 1}`
	servers, err := ParseConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "memory,remote,windsurf" {
		t.Fatalf("servers %v", names)
	}
	if servers[0].Env["MEMORY_FILE_PATH"] != "/tmp/m.json" || servers[1].Headers["Authorization"] != "Bearer ${TOKEN}" || servers[2].URL == "" {
		t.Fatalf("%+v %+v %+v", servers[0], servers[1], servers[2])
	}
	for _, tc := range []struct{ doc, err string }{
		{`{}`, `no "mcpServers" object`},
		{`{"mcpServers": {"a": {"command": 5}}}`, "command must be a string"},
		{`{"mcpServers": {"a": {"args": "x", "command": "c"}}}`, "must be an array"},
		{`{"mcpServers": {"a": {}}}`, "give a command"},
		{`{"mcpServers": {"a": {"url": "https://h/sse", "type": "sse"}}}`, "not supported"},
		{`{"mcpServers": {"a": {"url": "ftp://h/"}}}`, "want http"},
		{`{"mcpServers": {"a": {"command": "c"}}} trailing`, "after the JSON value"},
		{`[1]`, "not JSON of the right shape"},
	} {
		if _, err := ParseConfig([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.doc, err, tc.err)
		}
	}
}

func TestExpandAndRedaction(t *testing.T) {
	env := map[string]string{"TOKEN": "t0k3n", "HOME": "/home/u"}
	getenv := func(k string) string { return env[k] }
	s := &Server{Name: "r", URL: "https://h/mcp", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}", "X-Key": "literal-secret-value"},
		Command: "", Env: nil}
	run, err := s.resolved(getenv)
	if err != nil {
		t.Fatal(err)
	}
	if run.Headers["Authorization"] != "Bearer t0k3n" {
		t.Fatalf("%v", run.Headers)
	}
	red := s.Redacted()
	if red.Headers["Authorization"] != "Bearer ${TOKEN}" || red.Headers["X-Key"] != "xxxxx" {
		t.Fatalf("redacted: %v", red.Headers)
	}
	if got := s.Secrets(); len(got) != 1 || got[0] != "X-Key" {
		t.Fatalf("secrets %v", got)
	}
	s2 := &Server{Name: "c", Command: "srv", Args: []string{"--home", "${env:HOME}", "${MISSING}"}}
	if _, err := s2.resolved(getenv); err == nil || !strings.Contains(err.Error(), "MISSING is not set") {
		t.Fatalf("missing variable: %v", err)
	}
}

func TestParseToolLists(t *testing.T) {
	tool := `{"name":"get","description":"d","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}},"annotations":null}`
	for _, tc := range []struct {
		name, doc string
		want      map[string]int // list name → tools
	}{
		{"tools/list result", `{"tools":[` + tool + `],"nextCursor":""}`, map[string]int{"def": 1}},
		{"JSON-RPC response", `{"jsonrpc":"2.0","id":2,"result":{"tools":[` + tool + `,` + strings.Replace(tool, `"get"`, `"put"`, 1) + `]}}`, map[string]int{"def": 2}},
		{"array of tools", `[` + tool + `]`, map[string]int{"def": 1}},
		{"empty array", `[]`, map[string]int{"def": 0}},
		{"mcpServers with tools", `{"mcpServers":{"a":{"command":"x","tools":[` + tool + `]},"b":{"url":"https://h/mcp","tools":[]}}}`, map[string]int{"a": 1, "b": 0}},
		{"servers by name", `{"a":{"tools":[` + tool + `]},"b":[` + tool + `]}`, map[string]int{"a": 1, "b": 1}},
		{"LiveMCPBench", `[{"name":"Bing","category":"Discovery","config":{"mcpServers":{"bing-cn":{"command":"npx","args":["bing"]}}},"tools":{"bing-cn":{"server_name":"bing-cn","tools":[` + tool + `]}}}]`, map[string]int{"bing-cn": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lists, err := ParseToolLists([]byte(tc.doc), "def")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, l := range lists {
				got[l.Name] = len(l.Tools)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
	for _, bad := range []string{``, `5`, `"x"`, `{"a":5}`, `{"a":{"no":"tools"}}`, `[{"tools":{"s":5}}]`, `{"tools":[{"name":5}]}`, `{not json`} {
		if _, err := ParseToolLists([]byte(bad), "def"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestReadToolsFileNames(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "weather-server.json")
	if err := os.WriteFile(p, []byte(`{"tools":[{"name":"now","inputSchema":{"type":"object"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	lists, err := ReadToolsFile(p)
	if err != nil || len(lists) != 1 || lists[0].Name != "weather-server" {
		t.Fatalf("%v %v", lists, err)
	}
	lists, err = ReadToolsFile("wx=" + p)
	if err != nil || lists[0].Name != "wx" {
		t.Fatalf("%v %v", lists, err)
	}
	if _, err := ReadToolsFile(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("no error for a missing file")
	}
}

// TestNewCollectionNamesAndStates: names are made fit for models and
// unique; states follow the annotations and overrides.
func TestNewCollectionNamesAndStates(t *testing.T) {
	long := strings.Repeat("n", 100)
	tools := []*mcp.Tool{
		{Name: "files.read", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		{Name: "files_read", InputSchema: map[string]any{"type": "object"}},
		{Name: long, InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{IdempotentHint: true}},
		{Name: "now", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		{Name: "nil_schema"},
		{Name: "array_schema", InputSchema: map[string]any{"type": "array"}},
		{Name: "now", InputSchema: map[string]any{"type": "object"}},
	}
	col, skipped, err := NewCollection("s", tools, CollectionOptions{State: map[string]string{"now": "stateless"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 2 {
		t.Fatalf("skipped %v", skipped)
	}
	seen := map[string]bool{}
	for _, tl := range col.Tools {
		if len(tl.Name) > 64 || seen[tl.Name] || strings.ContainsAny(tl.Name, ". ") {
			t.Fatalf("bad name %q", tl.Name)
		}
		seen[tl.Name] = true
	}
	byServer := map[string]*toolenv.Tool{}
	for _, tl := range col.Tools {
		byServer[ServerName(tl)] = tl
	}
	if byServer["files.read"].Name != "files_read" || byServer["files_read"].Name != "files_read_2" {
		t.Fatalf("names: %q %q", byServer["files.read"].Name, byServer["files_read"].Name)
	}
	for name, want := range map[string]string{"files.read": "read", "files_read": "write", long: "write", "now": "stateless", "nil_schema": "write"} {
		if got := byServer[name].State(); got != want {
			t.Errorf("%s: state %s, want %s", name, got, want)
		}
	}
	if byServer[long].Meta[toolenv.MetaIdempotent] != "true" {
		t.Error("idempotentHint not kept")
	}
	if _, _, err := NewCollection("s", tools[:1], CollectionOptions{State: map[string]string{"nope": "read"}}); err == nil || !strings.Contains(err.Error(), "no such tool") {
		t.Fatalf("override of an unknown tool: %v", err)
	}
	// A server none of whose tools writes is stateless.
	ro := []*mcp.Tool{{Name: "a", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}}
	c2, _, _ := NewCollection("r", ro, CollectionOptions{})
	if c2.Tools[0].State() != toolenv.StateStateless {
		t.Fatalf("read-only server: %s", c2.Tools[0].State())
	}
}

func TestWrapBody(t *testing.T) {
	for in, want := range map[string]string{
		`"plain text"`: `{"content":[{"type":"text","text":"plain text"}]}`,
		`{"a": 1}`:     `{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1}}`,
		`[1, 2]`:       `{"content":[{"type":"text","text":"[1,2]"}]}`,
		`"{\"a\": 2}"`: `{"content":[{"type":"text","text":"{\"a\": 2}"}],"structuredContent":{"a":2}}`,
		`{"content":[{"type":"text","text":"x"}]}`: `{"content":[{"type":"text","text":"x"}]}`,
	} {
		if got := string(WrapBody([]byte(in))); got != want {
			t.Errorf("WrapBody(%s) = %s, want %s", in, got, want)
		}
	}
}
