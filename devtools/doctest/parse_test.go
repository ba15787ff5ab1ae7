package doctest

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    []Block // File, Line, Lang, Exit, Timeout, Illustrative, Lines
		wantErr string
	}{
		{
			name: "languages and attributes",
			src:  "# t\n```sh\necho a\n```\n\n```text\nout\n```\n```sh exit=2 timeout=90s\nfalse\n```\n```sh illustrative\nrm -rf /\n```\n",
			want: []Block{
				{Line: 2, Lang: "sh", Lines: []string{"echo a"}},
				{Line: 6, Lang: "text", Lines: []string{"out"}},
				{Line: 9, Lang: "sh", Exit: 2, Timeout: 90 * time.Second, Lines: []string{"false"}},
				{Line: 12, Lang: "sh", Illustrative: true, Lines: []string{"rm -rf /"}},
			},
		},
		{
			name: "indented fence in a list, tildes, a longer fence",
			src:  "- item\n\n   ```sh\n   echo a\n     echo b\n   ```\n~~~json\n{}\n~~~\n````go\n```\n````\n",
			want: []Block{
				{Line: 3, Lang: "sh", Lines: []string{"echo a", "  echo b"}},
				{Line: 7, Lang: "json", Lines: []string{"{}"}},
				{Line: 10, Lang: "go", Lines: []string{"```"}},
			},
		},
		{name: "inline triple backticks are not a fence", src: "a ```x``` b\n", want: nil},
		{name: "bare fence", src: "```\nls\n```\n", wantErr: "t.md:1: a fence without a language"},
		{name: "bash fence", src: "```bash\nls\n```\n", wantErr: "write ```sh"},
		{name: "console fence", src: "```console\n$ ls\n```\n", wantErr: "```sh (commands) and text"},
		{name: "unknown attribute", src: "```sh ilustrative\nls\n```\n", wantErr: `unknown attribute "ilustrative"`},
		{name: "bad exit", src: "```sh exit=x\nls\n```\n", wantErr: "exit=x"},
		{name: "exit out of range", src: "```sh exit=300\nls\n```\n", wantErr: "exit=300"},
		{name: "bad timeout", src: "```sh timeout=soon\nls\n```\n", wantErr: "timeout=soon"},
		{name: "unclosed", src: "text\n```sh\nls\n", wantErr: "t.md:2: the fence opened here is never closed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse("t.md", []byte(tc.src))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d blocks %+v, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Line != w.Line || g.Lang != w.Lang || g.Exit != w.Exit || g.Timeout != w.Timeout ||
					g.Illustrative != w.Illustrative || strings.Join(g.Lines, "\n") != strings.Join(w.Lines, "\n") {
					t.Errorf("block %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestCommands(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string // each command's words joined by |, "&" marking background
		bg    []bool
	}{
		{name: "comment and background", lines: []string{"toolenv serve &   # the demo"}, want: []string{"toolenv|serve|&"}, bg: []bool{true}},
		{name: "and-and is not background", lines: []string{"a && b"}, want: []string{"a|&&|b"}, bg: []bool{false}},
		{name: "redirect to stderr is not background", lines: []string{"echo x >&2"}, want: []string{"echo|x|>&2"}, bg: []bool{false}},
		{name: "quoted ampersand", lines: []string{"echo 'a &'"}, want: []string{"echo|a &"}, bg: []bool{false}},
		{name: "hash inside a word", lines: []string{"echo a#b ${#x} # c"}, want: []string{"echo|a#b|${#x}"}, bg: []bool{false}},
		{name: "continuation", lines: []string{"toolenv eval --tasks t \\", "    --agent oracle &"}, want: []string{"toolenv|eval|--tasks|t|--agent|oracle|&"}, bg: []bool{true}},
		{name: "quote across lines", lines: []string{`curl -d '{"a":`, `  1}' x`, "next"}, want: []string{`curl|-d|{"a":` + "\n" + `  1}|x`, "next"}, bg: []bool{false, false}},
		{name: "blank lines and comments", lines: []string{"", "# only a comment", "ls"}, want: []string{"", "ls"}, bg: []bool{false, false}},
		{name: "double quotes and escapes", lines: []string{`echo "a \"b\" &" c\ d`}, want: []string{`echo|a "b" &|c d`}, bg: []bool{false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := Commands(tc.lines)
			if len(cs) != len(tc.want) {
				t.Fatalf("got %d commands %+v, want %d", len(cs), cs, len(tc.want))
			}
			for i, c := range cs {
				if got := strings.Join(c.Words, "|"); got != tc.want[i] {
					t.Errorf("command %d words = %q, want %q", i, got, tc.want[i])
				}
				if c.Background != tc.bg[i] {
					t.Errorf("command %d background = %v, want %v", i, c.Background, tc.bg[i])
				}
			}
		})
	}
}

func TestServerOf(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir+"/a.yaml", "# addr: 1.2.3.4:1\naddr: \"127.0.0.1:9001\"\n")
	writeFile(t, dir+"/b.json", `{"store": ":memory:", "addr": ":9002"}`)
	writeFile(t, dir+"/c.yaml", "demo: true\n")
	tests := []struct {
		line string
		ok   bool
		want Server
	}{
		{"toolenv serve &", true, Server{Kind: "serve", Addr: "127.0.0.1:8080"}},
		{"toolenv serve --addr 0.0.0.0:9000 --store x.db &", true, Server{Kind: "serve", Addr: "127.0.0.1:9000"}},
		{"toolenv serve --addr=:9003 &", true, Server{Kind: "serve", Addr: "127.0.0.1:9003"}},
		{"toolenv serve --config a.yaml &", true, Server{Kind: "serve", Addr: "127.0.0.1:9001"}},
		{"toolenv serve --config=b.json &", true, Server{Kind: "serve", Addr: "127.0.0.1:9002"}},
		{"toolenv serve --config c.yaml &", true, Server{Kind: "serve", Addr: "127.0.0.1:8080"}},
		{"TOOLENV_TOKEN=x /usr/local/bin/toolenv --log-level debug serve &", true, Server{Kind: "serve", Addr: "127.0.0.1:8080"}},
		{"cd out && toolenv serve --addr :9004 &", true, Server{Kind: "serve", Addr: "127.0.0.1:9004"}},
		{"go run ./cmd/toolenv serve &", true, Server{Kind: "serve", Addr: "127.0.0.1:8080"}},
		{"toolenv map review --probe p.json &", true, Server{Kind: "map review", Addr: "127.0.0.1:8088"}},
		{"toolenv serve --help", true, Server{Kind: "serve", Addr: "127.0.0.1:8080", Help: true}},
		{"toolenv map review --probe p.json --export reviewed.json", true, Server{Kind: "map review", Addr: "127.0.0.1:8088", Help: true}},
		{"toolenv map index --collection x", false, Server{}},
		{"echo toolenv serve", false, Server{}},
		{"toolenv mcp &", false, Server{}},
	}
	for _, tc := range tests {
		cs := Commands([]string{tc.line})
		got, ok := ServerOf(cs[0], dir)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ServerOf(%q) = %+v, %v; want %+v, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBuildScriptRefuses(t *testing.T) {
	held := []startedServer{{Server: Server{Kind: "serve", Addr: "127.0.0.1:8080"}, line: 3}}
	tests := []struct {
		lines []string
		held  []startedServer
		want  string
	}{
		{[]string{"toolenv serve"}, nil, "t.md:2: `toolenv serve` runs in the foreground"},
		{[]string{"toolenv serve &", "toolenv serve --addr :8080 &"}, nil, "t.md:3: a second server on 127.0.0.1:8080, which the server started at t.md:2"},
		{[]string{"ls", "toolenv serve &"}, held, "t.md:3: a second server on 127.0.0.1:8080, which the server started at t.md:3 still holds"},
		{[]string{"go test -run '^$' -fuzz '^FuzzX$' ./server"}, nil, "t.md:2: `go test -fuzz` without -fuzztime"},
	}
	for _, tc := range tests {
		_, err := buildScript(Block{File: "t.md", Line: 1, Lang: "sh", Lines: tc.lines}, "lib.sh", tc.held, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.lines, err, tc.want)
		}
	}
	sc, err := buildScript(Block{File: "t.md", Line: 1, Lang: "sh", Lines: []string{"toolenv serve --addr :8081 &   # a comment", "ls"}}, "lib.sh", held, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := "source 'lib.sh'\ntoolenv serve --addr :8081 & __doctest_wait $! 127.0.0.1:8081 2;   # a comment\nls\n"
	if sc.text != want {
		t.Errorf("script =\n%s\nwant\n%s", sc.text, want)
	}
}
