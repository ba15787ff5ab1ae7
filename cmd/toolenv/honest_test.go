package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
