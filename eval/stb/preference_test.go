package stb

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreferenceMatchesEvalPreference holds SoWR to StableToolBench's
// eval_preference.py run on recorded judge verdicts
// (testdata/preference/reference.py, its loop copied with the evaluator
// replaced by the recorded verdicts) over 60 generated test sets: queries
// missing from either model's answers, pass-rate labels that decide a
// query without the judge, prior save files with complete and incomplete
// rounds and queries of their own, ties. Every query's counts and round
// states, the three rates, the printed line and the number of verdicts
// asked must be the reference's.
func TestPreferenceMatchesEvalPreference(t *testing.T) {
	dir := filepath.Join("testdata", "preference")
	var cases []struct {
		Name       string                    `json:"name"`
		TestIDs    []string                  `json:"test_ids"`
		HasRef     []string                  `json:"has_ref"`
		HasOutput  []string                  `json:"has_output"`
		RefPass    map[string]string         `json:"ref_pass"`
		OutputPass map[string]string         `json:"output_pass"`
		Rounds     int                       `json:"rounds"`
		Verdicts   map[string][]string       `json:"verdicts"`
		Prior      map[string]map[string]any `json:"prior"`
	}
	var refs []struct {
		PreferDict map[string]map[string]any `json:"prefer_dict"`
		Win        float64                   `json:"win"`
		Lose       float64                   `json:"lose"`
		Tie        float64                   `json:"tie"`
		Printed    string                    `json:"printed"`
		Judged     int                       `json:"judged"`
	}
	for name, dst := range map[string]any{"cases.json": &cases, "reference.json": &refs} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			t.Fatal(err)
		}
	}
	set := func(ids []string) map[string]bool {
		m := map[string]bool{}
		for _, q := range ids {
			m[q] = true
		}
		return m
	}
	for k, c := range cases {
		in := PreferenceInput{TestIDs: c.TestIDs, HasRef: set(c.HasRef), HasOutput: set(c.HasOutput), RefPass: c.RefPass, OutputPass: c.OutputPass, Rounds: c.Rounds,
			Judge: func(_ context.Context, q string, round int) (string, error) { return c.Verdicts[q][round], nil }}
		if c.Prior != nil {
			// Write the prior as eval_preference.py saved it and read it back.
			p := filepath.Join(t.TempDir(), "prior.json")
			b, _ := json.Marshal(c.Prior)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			var err error
			if in.Prior, in.PriorOrder, err = ReadPreferenceFile(p, "ref_model", "out_model"); err != nil {
				t.Fatal(err)
			}
		}
		res, err := Preference(context.Background(), in)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		want := refs[k]
		if res.Win != want.Win || res.Lose != want.Lose || res.Tie != want.Tie || res.Judged != want.Judged {
			t.Errorf("%s: win %v lose %v tie %v judged %d; eval_preference.py %v %v %v %d", c.Name, res.Win, res.Lose, res.Tie, res.Judged, want.Win, want.Lose, want.Tie, want.Judged)
		}
		if got := FormatWinRate(c.Name, "ref_model", "out_model", res); got != want.Printed {
			t.Errorf("%s: printed\n %s\nwant\n %s", c.Name, got, want.Printed)
		}
		if len(res.Counts) != len(want.PreferDict) {
			t.Errorf("%s: %d queries, want %d", c.Name, len(res.Counts), len(want.PreferDict))
		}
		for q, w := range want.PreferDict {
			g := res.Counts[q]
			if g == nil {
				t.Errorf("%s: no entry for %s", c.Name, q)
				continue
			}
			if float64(g.Ref) != w["ref_model"].(float64) || float64(g.Output) != w["out_model"].(float64) {
				t.Errorf("%s %s: counts %d/%d, want %v/%v", c.Name, q, g.Ref, g.Output, w["ref_model"], w["out_model"])
			}
			for key, v := range w {
				if key == "ref_model" || key == "out_model" {
					continue
				}
				if g.Rounds[key] != v.(string) {
					t.Errorf("%s %s %s: %q, want %q", c.Name, q, key, g.Rounds[key], v)
				}
			}
		}
	}
	if len(cases) != 60 {
		t.Fatalf("%d cases", len(cases))
	}
}

// TestWinRateFile: a save file in eval_preference.py's form prints its
// line; a file whose entries lack the models named is refused, saying so.
func TestWinRateFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "G1_instruction_gpt4_toolllama.json")
	body := `{"q1": {"gpt4": 2, "toolllama": 0, "round_0": "complete", "round_1": "complete"}, "q2": {"gpt4": 0, "toolllama": 2, "round_0": "complete"}, "q3": {"gpt4": 1, "toolllama": 1, "round_0": "incomplete"}}`
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	line, err := WinRateFile(p, "gpt4", "toolllama")
	if err != nil || line != "Test set: G1_instruction. Reference model: gpt4, Candidate model: toolllama. Win rate: 0.3333333333333333, Tie rate: 0.3333333333333333" {
		t.Errorf("%q %v", line, err)
	}
	if _, err := WinRateFile(p, "gpt4", "other"); err == nil || !strings.Contains(err.Error(), `no count for "gpt4" and "other"`) {
		t.Errorf("%v", err)
	}
}
