package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
)

// demoFolder writes the demo collection and its tasks into dir as a
// collection named name, and returns dir.
func demoFolder(t *testing.T, dir, name string) string {
	t.Helper()
	c, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	nc := toolenv.NewCollection(name, c.Kind, c.Tools)
	nc.Policy, nc.Backend = c.Policy, toolenv.BackendSpec{Type: "virtual"}
	if err := toolenv.WriteCollection(dir, nc); err != nil {
		t.Fatal(err)
	}
	tasks, err := demo.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		task.Collection = name
		for i := range task.Gold {
			task.Gold[i].Name = strings.TrimPrefix(task.Gold[i].Name, "demo/")
		}
	}
	if err := toolenv.WriteTasks(filepath.Join(dir, toolenv.TasksFile), tasks); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestEvalConfigAndTasksNameOneFolder is docs/config.md's tour line: a
// --config file serving out/bird/slot (among others) and --tasks naming
// the same folder again. The folder is loaded once, and only the tasks of
// --tasks are evaluated (the file's other collections are served for
// their tools).
func TestEvalConfigAndTasksNameOneFolder(t *testing.T) {
	tmp := t.TempDir()
	demoFolder(t, filepath.Join(tmp, "out", "slot"), "slot")
	demoFolder(t, filepath.Join(tmp, "out", "sel"), "sel")
	cfg := filepath.Join(tmp, "examples", "env.yaml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	if err := os.WriteFile(cfg, []byte("store: \":memory:\"\ncollections: [../out/slot, ../out/sel]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "runs", "o")
	code, _, stderr := run(t, context.Background(), "eval", "--config", cfg, "--tasks", filepath.Join(tmp, "out", "slot"),
		"--agent", "oracle", "--out", out, "--log-level", "warn")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s := readSummary(t, out)
	if len(s.Groups) != 1 || s.Groups[0].Split != "slot" || s.Groups[0].Episodes != 4 {
		t.Fatalf("groups %+v: want the 4 tasks of slot alone", s.Groups)
	}
}

// TestBuildRootNamesItsFlavors points commands that take one collection
// at the root of a build (out/bird rather than out/bird/slot): each says
// which collections the folder holds.
func TestBuildRootNamesItsFlavors(t *testing.T) {
	root := filepath.Join(t.TempDir(), "bird")
	slot := demoFolder(t, filepath.Join(root, "slot"), "slot")
	rest := demoFolder(t, filepath.Join(root, "rest"), "rest")
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "--collection", root, "--store", ":memory:"}, 3, "name one of them: " + rest + ", " + slot},
		{[]string{"eval", "--tasks", root, "--agent", "oracle", "--out", t.TempDir()}, 2, "name one of them: --tasks " + rest + " or --tasks " + slot},
		{[]string{"map", "index", "--collection", root, "--index", filepath.Join(t.TempDir(), "x.db")}, 3, "name one of them: " + rest + ", " + slot},
	} {
		code, _, stderr := run(t, ctx, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d (want %d)\n%s\nwant %q", tc.args, code, tc.code, stderr, tc.want)
		}
	}
}

// leaves returns every command of the tree that runs something (no
// subcommands), hidden ones left out.
func leaves(c *cobra.Command) []*cobra.Command {
	if c.Hidden {
		return nil
	}
	if !c.HasSubCommands() {
		return []*cobra.Command{c}
	}
	var out []*cobra.Command
	for _, s := range c.Commands() {
		out = append(out, leaves(s)...)
	}
	return out
}

// TestEveryCommandHasAnExample walks the command tree: every leaf
// command's --help shows an example, and every flag an example gives to
// its own command exists (a renamed flag fails here).
func TestEveryCommandHasAnExample(t *testing.T) {
	root := newRootCmd(&env{})
	ls := leaves(root)
	if len(ls) < 40 {
		t.Fatalf("only %d leaf commands found", len(ls))
	}
	for _, c := range ls {
		path := c.CommandPath()
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no example in its --help", path)
			continue
		}
		// Join continued lines, then check the flags of each line that
		// runs this command.
		text := strings.ReplaceAll(c.Example, "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			line, _, _ = strings.Cut(line, "#")
			i := strings.Index(line, path+" ")
			if i < 0 && !strings.HasSuffix(strings.TrimSpace(line), path) {
				continue
			}
			for _, tok := range strings.Fields(line[max(i, 0):]) {
				name, ok := strings.CutPrefix(tok, "--")
				if !ok || name == "" {
					continue
				}
				name, _, _ = strings.Cut(name, "=")
				if c.Flags().Lookup(name) == nil && c.InheritedFlags().Lookup(name) == nil {
					t.Errorf("%s: its example gives --%s, which it does not have: %s", path, name, strings.TrimSpace(line))
				}
			}
		}
	}
}

// TestUnknownFlagsAndValuesSuggest checks the usage errors of flags: an
// unknown flag names the nearest one, a value outside a flag's set names
// the set and the nearest value, a URL flag refuses what is not an
// http(s) URL and says the URL meant, hiding credentials. All exit 2.
func TestUnknownFlagsAndValuesSuggest(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want []string
		not  string
	}{
		{[]string{"serve", "--colection", "x"}, []string{"unknown flag: --colection", "did you mean --collection?"}, ""},
		{[]string{"serve", "--colection=x"}, []string{"did you mean --collection?"}, ""},
		{[]string{"eval", "--mdoel", "http://x/v1"}, []string{"did you mean --model?"}, ""},
		{[]string{"serve", "--log-levle", "warn"}, []string{"did you mean --log-level?"}, ""},
		{[]string{"serve", "--zzzzzzzz"}, []string{"toolenv serve --help lists its flags"}, ""},
		{[]string{"serve", "--feedback", "tesre"}, []string{"--feedback", `"tesre" is not one of`, "terse", "did you mean terse?"}, ""},
		{[]string{"eval", "--agent", "recat"}, []string{"--agent", "direct, react, cot, dfsdt, oracle", "did you mean react?"}, ""},
		{[]string{"config", "print", "--format", "ymal"}, []string{"want yaml, json", "did you mean yaml?"}, ""},
		{[]string{"serve", "--log-level", "warnn"}, []string{"did you mean warn?"}, ""},
		{[]string{"cache", "export", "--format", "jsnl"}, []string{"did you mean jsonl?"}, ""},
		{[]string{"eval", "--model", "localhost:8000/v1?api-key=SECRET1"}, []string{"--model", "not an http(s) URL", "http://localhost:8000/v1"}, "SECRET1"},
		{[]string{"serve", "--llm-url", "ftp://user:SECRET2@h/v1"}, []string{"--llm-url", "its scheme is ftp"}, "SECRET2"},
		{[]string{"eval", "fidelity", "--judge-url", "http:///v1"}, []string{"--judge-url", "has no host"}, ""},
		{[]string{"mirror", "run", "--llm-url", "127.0.0.1:8000"}, []string{"--llm-url", "http://127.0.0.1:8000"}, ""},
	} {
		code, _, stderr := run(t, ctx, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", tc.args, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: %q lacks %q", tc.args, stderr, w)
			}
		}
		if tc.not != "" && strings.Contains(stderr, tc.not) {
			t.Errorf("%v: %q shows the credential", tc.args, stderr)
		}
	}
}
