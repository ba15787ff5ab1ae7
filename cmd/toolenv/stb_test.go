package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalSTBPassRateNoLabels: a results file with nothing to score exits
// non-zero saying it has no labels (it printed 0.0 %); bare "Solved"
// labels score 0, as eval_pass_rate.py scores them.
func TestEvalSTBPassRateNoLabels(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"empty.json":    "",
		"object.json":   "{}",
		"norounds.json": `{"1": {"is_solved": {}}}`,
		"bare.json":     `{"1": {"is_solved": {"0": "Solved"}}, "2": {"is_solved": {"0": "AnswerStatus.Solved"}}}`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"empty.json", "object.json", "norounds.json"} {
		code, stdout, stderr := run(t, context.Background(), "eval", "stb", "passrate", filepath.Join(dir, name))
		if code == 0 || !strings.Contains(stderr, "no labels") || strings.Contains(stdout, "Solve rate") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want an error saying it has no labels", name, code, stdout, stderr)
		}
	}
	code, stdout, stderr := run(t, context.Background(), "eval", "stb", "passrate", filepath.Join(dir, "bare.json"))
	if code != 0 || !strings.Contains(stdout, "bare.json: 2 queries. Solve rate: 50.0% Std: 0.0%") {
		t.Errorf("bare labels: exit %d, stdout %q, stderr %q; want 50.0%% (a bare Solved scores 0)", code, stdout, stderr)
	}
}
