package score

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolenv/toolenv/eval/metrics"
)

// TestBFCLReleasedResultFiles scores BFCL's result files as the
// leaderboard released them (raw model text for a prompting model,
// the API's calls for a function-calling one) with BFCL's own question
// and possible-answer files, and holds every verdict to the one BFCL's
// evaluation printed in its released score files — simple_363 included,
// whose possible answer names "find_closest" for the question's
// "restaurant_search.find_closest" and which BFCL scores valid.
func TestBFCLReleasedResultFiles(t *testing.T) {
	dir := filepath.Join("testdata", "bfcl-released")
	raw, err := os.ReadFile(filepath.Join(dir, "score", "verdicts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]json.RawMessage
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"gemini-exp-1206", "gemini-exp-1206-FC"} {
		t.Run(model, func(t *testing.T) {
			var w struct {
				Failures map[string]string `json:"failures"`
			}
			if err := json.Unmarshal(want[model], &w); err != nil {
				t.Fatal(err)
			}
			rep, err := ScoreBFCLFile(context.Background(), filepath.Join(dir, "result", model, "BFCL_v3_simple_result.json"),
				BFCLReadOptions{Functions: filepath.Join(dir, "BFCL_v3_simple.json"), Answers: filepath.Join(dir, "possible_answer", "BFCL_v3_simple.json")},
				metrics.BFCLOptions{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Cases != 46 || rep.Decoded != 46 || len(rep.Unscored) != 0 {
				t.Fatalf("cases %d, decoded %d, unscored %v", rep.Cases, rep.Decoded, rep.Unscored)
			}
			valid := 0
			for _, c := range rep.PerCase {
				expect := "valid"
				if f, ok := w.Failures[c.ID]; ok {
					expect = f
				}
				if c.AST != expect {
					t.Errorf("%s: AST verdict %s, BFCL's %s (%v %s)", c.ID, c.AST, expect, c.Errors, c.DecodeError)
				}
				if c.AST == "valid" {
					valid++
				}
				if c.ID == "simple_363" && (c.AST != "valid" || c.Ordered != "valid") {
					t.Errorf("simple_363: %s / %s, BFCL scores it valid", c.AST, c.Ordered)
				}
			}
			if valid != 46-len(w.Failures) || rep.AST.Valid != valid {
				t.Errorf("valid %d (report %d), want %d", valid, rep.AST.Valid, 46-len(w.Failures))
			}
		})
	}
}
