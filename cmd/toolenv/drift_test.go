package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

func TestDriftCommandInputErrors(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	out := filepath.Join(tmp, "v2")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no seed", []string{"drift", "--demo", "--out", out}, "--seed is required"},
		{"no source", []string{"drift", "--out", out, "--seed", "1"}, "exactly one source"},
		{"unknown operator", []string{"drift", "--demo", "--out", out, "--seed", "1", "--ops", "rename,shuffle"}, `unknown operator "shuffle"`},
		{"rate out of range", []string{"drift", "--demo", "--out", out, "--seed", "1", "--rate", "rename=1.2"}, "[0, 1]"},
		{"bad rate syntax", []string{"drift", "--demo", "--out", out, "--seed", "1", "--rate", "rename:0.2"}, "op=probability"},
		{"missing input", []string{"drift", "--in", filepath.Join(tmp, "nope"), "--out", out, "--seed", "1"}, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := run(t, ctx, tt.args...)
			if code == 0 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q, want %q", code, stderr, tt.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatalf("%s was written despite the error", out)
			}
		})
	}
	// A drift, then a conflicting seed into the same folder.
	if code, _, stderr := run(t, ctx, "drift", "--demo", "--out", out, "--seed", "1"); code != 0 {
		t.Fatalf("drift: %s", stderr)
	}
	code, _, stderr := run(t, ctx, "drift", "--demo", "--out", out, "--seed", "2")
	if code != 2 || !strings.Contains(stderr, "already drifted") || !strings.Contains(stderr, "--seed 1") {
		t.Fatalf("conflicting seed: exit %d, %s", code, stderr)
	}
}

// TestDriftedBirdOracleScoresFull drifts each NL2SQL collection twice
// with the CLI and runs "toolenv eval --agent oracle" on v2 and v3: the
// translated gold calls complete every task through the served pipeline.
func TestDriftedBirdOracleScoresFull(t *testing.T) {
	bird := builtBird(t)
	ctx := context.Background()
	for _, flavor := range []string{"slot", "sel", "rest"} {
		t.Run(flavor, func(t *testing.T) {
			tmp := t.TempDir()
			in := filepath.Join(bird, flavor)
			tasks := readTaskCount(t, in)
			for i, v := range []string{"v2", "v3"} {
				out := filepath.Join(tmp, flavor+"-"+v)
				code, stdout, stderr := run(t, ctx, "drift", "--in", in, "--out", out, "--seed", []string{"21", "22"}[i], "--rate", "rename=0.6,type=0.5,endpoint=0.6,required=0.5")
				if code != 0 || !strings.Contains(stdout, " → "+v) {
					t.Fatalf("drift %s: exit %d\n%s\n%s", v, code, stdout, stderr)
				}
				ev := filepath.Join(tmp, "eval-"+v)
				code, _, stderr = run(t, ctx, "eval", "--env", out, "--agent", "oracle", "--out", ev, "--concurrency", "4", "--store", filepath.Join(ev, "cache.db"), "--log-level", "warn")
				if code != 0 {
					t.Fatalf("eval %s: exit %d: %s", v, code, stderr)
				}
				g := readSummary(t, ev).Groups[0]
				if g.Completion == nil || g.Completion.Mean != 1 || g.Errors != 0 || g.Tasks != tasks {
					t.Fatalf("oracle on %s %s: %d tasks (want %d), completion %+v, errors %d", flavor, v, g.Tasks, tasks, g.Completion, g.Errors)
				}
				in = out
			}
		})
	}
}

func readTaskCount(t *testing.T, dir string) int {
	t.Helper()
	tasks, _, err := toolenv.ReadTasks(filepath.Join(dir, toolenv.TasksFile))
	if err != nil {
		t.Fatal(err)
	}
	return len(tasks)
}

// TestEvalShowsOldDocs runs "toolenv eval --docs C --env C2" with a
// scripted model: the model is shown C's documentation, and its call in
// C's form is rejected by C2 in strict mode; with --docs-tool it is also
// offered the documentation tool.
func TestEvalShowsOldDocs(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	v2 := filepath.Join(tmp, "v2")
	if code, _, stderr := run(t, ctx, "drift", "--demo", "--out", v2, "--seed", "4", "--ops", "rename", "--rate", "rename=1"); code != 0 {
		t.Fatal(stderr)
	}
	m, err := drift.ReadManifest(filepath.Join(v2, drift.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var renamed drift.Change
	for _, tc := range m.Steps[0].Tools {
		if tc.Tool == "current_weather" {
			renamed = tc.Changes[0]
		}
	}
	if renamed.Param != "city" {
		t.Fatalf("seed 4 did not rename current_weather's city: %+v", m.Steps[0].Tools)
	}
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: `[{"name": "current_weather", "arguments": {"city": "Paris"}}]`}))
	defer srv.Close()
	out := filepath.Join(tmp, "eval")
	code, _, stderr := run(t, ctx, "eval", "--docs", filepath.Join(v2, drift.BaseFolder), "--env", v2, "--docs-tool", "--agent", "direct",
		"--model", srv.URL(), "--model-name", "m", "--task-id", "demo-1", "--out", out, "--store", ":memory:", "--log-level", "warn")
	if code != 0 {
		t.Fatalf("eval: %s", stderr)
	}
	reqs := srv.Requests()
	if len(reqs) < 2 {
		t.Fatal("the model was not asked")
	}
	prompt := promptText(reqs[1]) // reqs[0] is the endpoint's check
	if !strings.Contains(prompt, `"city"`) || strings.Contains(prompt, `"`+renamed.To+`"`) || !strings.Contains(prompt, drift.DocsToolName) {
		t.Fatalf("the model was not shown the v1 docs and the docs tool:\n%s", prompt)
	}
	data, err := os.ReadFile(filepath.Join(out, "episodes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), string(toolenv.StatusInvalidArguments)) || !strings.Contains(string(data), "renamed") {
		t.Fatalf("the v1 call was not rejected by v2 with a precise problem: %s", data)
	}
}

func promptText(r *llm.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	raw, _ := json.Marshal(r.Tools)
	b.Write(raw)
	return b.String()
}
