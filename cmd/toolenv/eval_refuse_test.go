package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// demoTasks writes the demo collection (4 tasks with gold sequences and
// answers) into dir/out/demo and returns its folder.
func demoTasks(t *testing.T, dir string) string {
	t.Helper()
	coll := filepath.Join(dir, "out", "demo")
	if code, _, stderr := run(t, context.Background(), "drift", "--demo", "--out", coll, "--seed", "1"); code != 0 {
		t.Fatalf("drift --demo: %s", stderr)
	}
	return coll
}

// TestEvalRefusesWhatItCannotDo: a run the harness cannot do is refused
// before anything runs, saying why: a folder that is a parent of the
// collections (the collections it holds are named), FAC for an agent
// that gives no final answer, the oracle on tasks without gold sequences.
func TestEvalRefusesWhatItCannotDo(t *testing.T) {
	dir := t.TempDir()
	coll := demoTasks(t, dir)
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--tasks", dir, "--agent", "oracle"}, []string{"it is a folder of 1 collections", "name one of them: --tasks " + coll}},
		{[]string{"--tasks", coll, "--agent", "direct", "--model", "http://127.0.0.1:9/v1", "--model-name", "m", "--fac"}, []string{"--fac judges an agent's final answer, and --agent direct gives none"}},
	} {
		out := filepath.Join(t.TempDir(), "run")
		code, _, stderr := run(t, context.Background(), append(append([]string{"eval"}, tt.args...), "--out", out)...)
		if code != 2 {
			t.Errorf("%v: exit %d: %s", tt.args, code, stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: %q not in %s", tt.args, w, stderr)
			}
		}
		if _, err := os.Stat(filepath.Join(out, "episodes.jsonl")); err == nil {
			t.Errorf("%v: episodes ran", tt.args)
		}
	}
	queries := shareddata.Require(t, "stabletoolbench", "solvable_queries", "test_instruction", "G1_instruction.json")
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := run(t, context.Background(), "eval", "--tasks", queries, "--agent", "oracle", "--limit", "3", "--out", out)
	if code != 2 || !strings.Contains(stderr, "--agent oracle replays each task's gold call sequence, and 3 of the 3 task(s) have none") {
		t.Errorf("oracle without gold: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "episodes.jsonl")); err == nil {
		t.Error("the oracle ran episodes without gold sequences")
	}
}

// TestEvalResumeSaysWhatItFound: --resume says how many episodes the
// journal already held and how many are left.
func TestEvalResumeSaysWhatItFound(t *testing.T) {
	coll := demoTasks(t, t.TempDir())
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := run(t, context.Background(), "eval", "--tasks", coll, "--agent", "oracle", "--out", out, "--runs", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, _, stderr = run(t, context.Background(), "eval", "--tasks", coll, "--agent", "oracle", "--out", out, "--runs", "3", "--resume")
	if code != 0 || !strings.Contains(stderr, "--resume: 8 finished episode(s) found in "+out+"; 4 left to run") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestEvalInterruptSaysWhatHappened: an interrupted run keeps its
// episodes, exits 130 and says so once, without "context canceled".
func TestEvalInterruptSaysWhatHappened(t *testing.T) {
	coll := demoTasks(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	asked := make(chan struct{}, 64)
	srv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		if n == 0 {
			return llmtest.Reply{Content: "OK"} // the model's check
		}
		asked <- struct{}{}
		<-ctx.Done()
		return llmtest.Reply{Content: "too late"}
	})
	defer srv.Close()
	go func() {
		<-asked
		cancel()
	}()
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := run(t, ctx, "eval", "--tasks", coll, "--agent", "react", "--model", srv.URL(), "--model-name", "m", "--no-judge", "--out", out, "--model-retries", "0")
	if code != 130 || strings.Contains(stderr, "context canceled") || !strings.Contains(stderr, "interrupted: ") || !strings.Contains(stderr, "--resume") {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
}
