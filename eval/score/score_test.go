package score

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/metrics"
)

// fuzzFile writes data to a file and returns its path.
func fuzzFile(t *testing.T, data []byte) string {
	p := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// badInputOnly fails unless err is nil or a malformed-input error.
func badInputOnly(t *testing.T, err error) {
	t.Helper()
	var te *toolenv.Error
	if err != nil && (!errors.As(err, &te) || te.Status != toolenv.StatusInvalidArguments) {
		t.Fatalf("not a malformed-input error: %T %v", err, err)
	}
}

// FuzzReadNestful: any file is read or refused as malformed input, and
// what is read scores or is refused the same way, never a panic.
func FuzzReadNestful(f *testing.F) {
	f.Add([]byte(`{"sets": [{"name": "s", "samples": [{"id": "1", "gold": "[{\"name\": \"f\", \"arguments\": {\"x\": 1}}]", "pred": "[]"}]}]}`))
	f.Add([]byte("{\"output\": \"[]\", \"generated_text\": \"null\"}\n{\"gold\": [{\"name\": \"f\", \"arguments\": {}}], \"pred\": [], \"set\": \"b\"}\n"))
	f.Add([]byte(`[{"gold": "[", "pred": 7}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sets, err := ReadNestful(fuzzFile(t, data))
		badInputOnly(t, err)
		if err != nil {
			return
		}
		_, err = ScoreNestful(context.Background(), "in", sets, metrics.NestfulOptions{}, nil)
		badInputOnly(t, err)
	})
}

// FuzzReadBFCL: the same for BFCL records.
func FuzzReadBFCL(f *testing.F) {
	f.Add([]byte(`[{"id": "parallel_1", "tools": [{"name": "f", "properties": ["x"], "required": ["x"]}], "gold": [{"name": "f", "arguments": {"x": 1}}], "model_output": [{"f": {"x": 1.0}}], "bfcl_ast": "valid"}]`))
	f.Add([]byte("{\"id\": \"simple_2\", \"function\": [{\"name\": \"f\", \"parameters\": {\"properties\": {\"s\": {\"type\": \"string\"}}}}], \"ground_truth\": [{\"f\": {\"s\": [\"a\", \"\"]}}], \"model_output\": null}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, err := ReadBFCL(fuzzFile(t, data), "", "")
		badInputOnly(t, err)
		if err != nil {
			return
		}
		_, err = ScoreBFCL(context.Background(), "in", cases, metrics.BFCLOptions{}, nil)
		badInputOnly(t, err)
	})
}
