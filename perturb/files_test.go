package perturb

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// Run reads tasks from a file or a collection folder (skipping lines that
// do not parse), writes the perturbed tasks to a file or Stdout, the same
// for the same seed, and the report as Markdown and JSON with its
// provenance.
func TestRunFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var lines []string
	for i := range 20 {
		b, _ := json.Marshal(&toolenv.Task{ID: fmt.Sprint("t", i), Query: fmt.Sprintf("How many orders did customer %d place in 2019 in Lisbon?", i)})
		lines = append(lines, string(b))
	}
	lines = append(lines[:5], append([]string{"{not json"}, lines[5:]...)...)
	if err := os.WriteFile(filepath.Join(dir, toolenv.TasksFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, prefix := filepath.Join(t.TempDir(), "p.jsonl"), filepath.Join(t.TempDir(), "rep")
	prov := &toolenv.Provenance{Version: "v-test"}
	rep, err := Run(ctx, Job{Tasks: dir, Out: out, Report: prefix, Provenance: prov, Options: Options{Mode: CaseMix, Seed: 3}})
	if err != nil || rep.Tasks != 20 || rep.Changed == 0 || rep.Provenance != prov {
		t.Fatalf("run on the folder: %+v %v", rep, err)
	}
	written, _ := os.ReadFile(out)
	var stdout bytes.Buffer
	if _, err := Run(ctx, Job{Tasks: filepath.Join(dir, toolenv.TasksFile), Stdout: &stdout, Options: Options{Mode: CaseMix, Seed: 3}}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(written, stdout.Bytes()) || bytes.Count(written, []byte("\n")) != 20 {
		t.Errorf("the file and stdout differ, or not 20 tasks:\n%s\n---\n%s", written, stdout.Bytes())
	}
	md, _ := os.ReadFile(prefix + ".md")
	var back Report
	data, _ := os.ReadFile(prefix + ".json")
	if err := json.Unmarshal(data, &back); err != nil || back.Changed != rep.Changed || back.Provenance == nil || back.Provenance.Version != "v-test" {
		t.Errorf("report JSON %s: %v", data, err)
	}
	if !strings.Contains(string(md), "Made by toolenv v-test") || !strings.Contains(string(md), dir) {
		t.Errorf("report Markdown:\n%s", md)
	}
	if _, err := Run(ctx, Job{Tasks: filepath.Join(dir, "missing.jsonl"), Stdout: &stdout, Options: Options{Mode: CaseMix}}); err == nil {
		t.Error("a task file that does not exist was accepted")
	}
	if _, err := Run(ctx, Job{Tasks: dir, Options: Options{Mode: CaseMix}}); err == nil || !strings.Contains(err.Error(), "give a file") {
		t.Errorf("no output: %v", err)
	}
	if _, _, err := OpenModel(ctx, ModelConfig{URL: "http://127.0.0.1:1/v1", Replay: true}); toolenv.StatusOf(err) != toolenv.StatusInvalidArguments || !strings.Contains(err.Error(), "--records") {
		t.Errorf("replay without records: %v", err)
	}
}
