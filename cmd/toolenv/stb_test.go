package main

import (
	"context"
	"encoding/json"
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

// TestCacheImportNonFinite: a cache file whose answers hold NaN and
// Infinity (as Python's json.dump writes them) is imported entry by entry;
// only the unreadable entry is skipped, and the report counts both.
func TestCacheImportNonFinite(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "Finance", "stocks_for_Finance", "quote.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	text := `{"{'symbol': 'AAPL'}": {"error": "", "response": {"price": NaN, "high": Infinity}},
 "{'symbol': 'IBM'}": {"error": "", "response": "ok"},
 "{'symbol': 'BAD'}": {"error": "", "response": [1,,2]}}`
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	st := filepath.Join(t.TempDir(), "store.db")
	code, stdout, stderr := run(t, context.Background(), "cache", "import", dir, "--store", st, "--json")
	if code != 0 {
		t.Fatalf("import exit %d: %s", code, stderr)
	}
	var rep importReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err, stdout)
	}
	if rep.Files != 1 || rep.Imported != 2 || rep.Skipped != 1 || rep.NonFiniteAsNull != 1 ||
		len(rep.Problems) != 1 || rep.Problems[0].Key != "{'symbol': 'BAD'}" || rep.Problems[0].Err == "" {
		t.Fatalf("report %+v; want 2 imported, the NaN answer counted, the bad entry skipped with its reason", rep)
	}
	code, stdout, stderr = run(t, context.Background(), "cache", "export", "--store", st)
	if code != 0 || !strings.Contains(stdout, `"response":{"price":null,"high":null}`) {
		t.Fatalf("export exit %d: %s %s; want the NaN answer with nulls", code, stdout, stderr)
	}
}
