package sequence

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// TestWriteRecordsProvenance: sequence.json and sequence.md say which
// toolenv made them, with which settings.
func TestWriteRecordsProvenance(t *testing.T) {
	out := filepath.Join(t.TempDir(), "seq")
	r := Report{Tasks: 2, K: 5, Mode: "lexical", Provenance: &toolenv.Provenance{Version: "v1.2.3-test", Config: map[string]any{"k": 5}}}
	if err := Write(out, r, nil, nil); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Report Report `json:"report"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "sequence.json"))
	if err := json.Unmarshal(b, &got); err != nil || got.Report.Provenance == nil || got.Report.Provenance.Version != "v1.2.3-test" || got.Report.Provenance.Config.(map[string]any)["k"] != 5.0 {
		t.Errorf("sequence.json: %v %.300s", err, b)
	}
	md, _ := os.ReadFile(filepath.Join(out, "sequence.md"))
	if !strings.Contains(string(md), "2 queries, 5 candidates retrieved per query (lexical search)") || !strings.Contains(string(md), "Made by toolenv v1.2.3-test") {
		t.Errorf("sequence.md:\n%s", md)
	}
}

// TestReadTasksWithoutGold: files whose tasks name no gold APIs are an
// invalid-arguments error naming them.
func TestReadTasksWithoutGold(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(p, []byte(`{"id": "a", "collection": "c", "query": "q"}`+"\n"), 0o644)
	if _, err := ReadTasks([]string{p}); toolenv.StatusOf(err) != toolenv.StatusInvalidArguments || !strings.Contains(err.Error(), "no task with gold APIs") {
		t.Errorf("%v", err)
	}
}
