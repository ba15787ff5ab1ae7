package stb

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/internal/shareddata"
)

var models = []struct{ model, method string }{
	{"virtual_chatgpt_cot", "CoT@1"},
	{"virtual_chatgpt_dfs", "DFS_woFilter_w2"},
}

// TestConvertMatchesReference converts every raw answer of the
// StableToolBench example and compares it with the converted answers
// StableToolBench's convert_to_answer_format.py wrote for it.
func TestConvertMatchesReference(t *testing.T) {
	dir := shareddata.Require(t, "stabletoolbench", "data_example")
	for _, m := range models {
		t.Run(m.model, func(t *testing.T) {
			want, err := ReadConverted(filepath.Join(dir, "model_predictions_converted", m.model, "G1_instruction.json"))
			if err != nil {
				t.Fatal(err)
			}
			files, problems, err := ReadRawAnswers(filepath.Join(dir, "answer", m.model, "G1_instruction"), m.method)
			if err != nil || len(problems) > 0 {
				t.Fatal(err, problems)
			}
			if len(files) != len(want.IDs) {
				t.Fatalf("%d raw answers, %d converted", len(files), len(want.IDs))
			}
			for _, f := range files {
				got, err := Convert(f.Method, f.Answer)
				if err != nil {
					t.Fatalf("%s: %v", f.Path, err)
				}
				if !sameJSON(t, got, want.Entries[f.QueryID]) {
					g, _ := json.MarshalIndent(got.Answer, "", " ")
					w, _ := json.MarshalIndent(want.Entries[f.QueryID].Answer, "", " ")
					t.Errorf("query %s differs:\n got %.2000s\nwant %.2000s", f.QueryID, g, w)
				}
			}
		})
	}
}

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	norm := func(v any) any {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var out any
		if err := toolenv.DecodeJSON(raw, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// TestStepsMatchReference checks that the step strings built from the
// converted answers are exactly those eval_pass_rate.py recorded.
func TestStepsMatchReference(t *testing.T) {
	dir := shareddata.Require(t, "stabletoolbench", "data_example")
	for _, m := range models {
		t.Run(m.model, func(t *testing.T) {
			conv, err := ReadConverted(filepath.Join(dir, "model_predictions_converted", m.model, "G1_instruction.json"))
			if err != nil {
				t.Fatal(err)
			}
			pr, err := ReadPassRate(filepath.Join(dir, "pass_rate_results", m.model, "G1_instruction_"+m.model+".json"))
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range pr.IDs {
				steps, final := Steps(&conv.Entries[id].Answer)
				want := pr.Entries[id]
				if steps != want.AnswerSteps {
					t.Errorf("query %s answer_steps differ:\n got %.600q\nwant %.600q", id, steps, want.AnswerSteps)
				}
				if final != want.FinalStep {
					t.Errorf("query %s final_step differs:\n got %.300q\nwant %.300q", id, final, want.FinalStep)
				}
				// The Finish test: 588's CoT chain never called Finish.
				if has := HasFinish(&conv.Entries[id].Answer); has != strings.Contains(want.FinalStep, "'name': 'Finish'") {
					t.Errorf("query %s HasFinish = %v", id, has)
				}
			}
		})
	}
}

// TestSolvePassRateMatchesReference computes SoPR from the recorded judge
// labels. eval_pass_rate.py run with --evaluate_times 3 prints
// "Solve rate: 66.7% Std: 0.0%" for the CoT labels (588 Unsolved three
// times, 1073 and 608 Solved) and 100.0% / 0.0% for DFS.
func TestSolvePassRateMatchesReference(t *testing.T) {
	dir := shareddata.Require(t, "stabletoolbench", "data_example")
	tests := []struct {
		model     string
		mean, std float64
		printed   string
	}{
		{"virtual_chatgpt_cot", 66.66666666666666, 0, "Solve rate: 66.7% Std: 0.0%"}, // Python: sum(scores)/len(scores)*100
		{"virtual_chatgpt_dfs", 100, 0, "Solve rate: 100.0% Std: 0.0%"},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			f, err := ReadPassRate(filepath.Join(dir, "pass_rate_results", tt.model, "G1_instruction_"+tt.model+".json"))
			if err != nil {
				t.Fatal(err)
			}
			got, problems := SolvePassRate(f, 3)
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			if got.Mean != tt.mean || got.Std != tt.std || got.Tasks != 3 {
				t.Errorf("SolvePassRate = %+v, want %v ± %v over 3", got, tt.mean, tt.std)
			}
			if s := FormatSolveRate(got); s != tt.printed {
				t.Errorf("printed %q, want %q", s, tt.printed)
			}
		})
	}
}

// TestSolvePassRateRounds covers what the example data does not: Unsure
// labels, a round missing for one query (it scores 0) and more rounds
// asked for than recorded. The expected values are eval_pass_rate.py's
// arithmetic on the same labels.
func TestSolvePassRateRounds(t *testing.T) {
	f := &PassRateFile{IDs: []string{"1", "2"}, Entries: map[string]*PassRateEntry{
		"1": {IsSolved: map[string]string{"0": "AnswerStatus.Solved", "1": "AnswerStatus.Unsure", "2": "AnswerStatus.Solved"}},
		"2": {IsSolved: map[string]string{"0": "AnswerStatus.Unsure", "2": "AnswerStatus.Unsolved"}},
	}}
	got, _ := SolvePassRate(f, 0)
	// rounds: (1+0.5)/2=0.75, (0.5+0)/2=0.25, (1+0)/2=0.5
	if got.Mean != 50 || !near(got.Std, 20.41241452319315) {
		t.Errorf("3 rounds: %+v", got)
	}
	got, _ = SolvePassRate(f, 4) // a fourth round nobody has scores 0
	if !near(got.Mean, 37.5) || !near(got.Std, 27.95084971874737) {
		t.Errorf("4 rounds: %+v", got)
	}
	bad := &PassRateFile{IDs: []string{"1"}, Entries: map[string]*PassRateEntry{"1": {IsSolved: map[string]string{"0": "maybe", "x": "AnswerStatus.Solved"}}}}
	if _, problems := SolvePassRate(bad, 0); len(problems) != 2 {
		t.Errorf("problems = %v, want 2", problems)
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-9 && d > -1e-9 }

func TestPassRateRoundTrip(t *testing.T) {
	dir := shareddata.Require(t, "stabletoolbench", "data_example")
	f, err := ReadPassRate(filepath.Join(dir, "pass_rate_results", "virtual_chatgpt_cot", "G1_instruction_virtual_chatgpt_cot.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "pr.json")
	if err := WritePassRate(out, f); err != nil {
		t.Fatal(err)
	}
	g, err := ReadPassRate(out)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f, g) {
		t.Error("pass-rate file changed in a write/read round trip")
	}
}

func TestConvertedRoundTrip(t *testing.T) {
	dir := shareddata.Require(t, "stabletoolbench", "data_example")
	f, err := ReadConverted(filepath.Join(dir, "model_predictions_converted", "virtual_chatgpt_dfs", "G1_instruction.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "c.json")
	if err := WriteConverted(out, f); err != nil {
		t.Fatal(err)
	}
	g, err := ReadConverted(out)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, f.Entries, g.Entries) || !reflect.DeepEqual(f.IDs, g.IDs) {
		t.Error("converted file changed in a write/read round trip")
	}
}

func TestFromTrajectory(t *testing.T) {
	finish := "{\n  \"return_type\": \"give_answer\",\n  \"final_answer\": \"It's 3.\"\n}"
	tr := &toolenv.Trajectory{Steps: []toolenv.Step{
		{Thought: "look it up", Call: &toolenv.GoldCall{Name: "get_x", Args: map[string]any{"q": "a"}}, Observation: `{"error": "", "response": "3"}`, Raw: "{\"q\": \"a\"}"},
		{Thought: "The answer is 3."},
		{Call: &toolenv.GoldCall{Name: "Finish", Args: map[string]any{"return_type": "give_answer"}}, Observation: `{"response":"successfully giving the final answer."}`, Raw: finish},
	}}
	c := FromTrajectory("react", "what is x?", finish, tr, nil)
	if c.Answer.TotalSteps != 5 {
		t.Errorf("total_steps = %d, want 5", c.Answer.TotalSteps)
	}
	steps, final := Steps(&c.Answer)
	wantSteps := `Step 1: {'name': 'get_x', 'arguments': '{"q": "a"}', 'response': '{"error": "", "response": "3"}'}` + "\n" +
		`Step 2: {'name': 'Finish', 'arguments': '{\n  "return_type": "give_answer",\n  "final_answer": "It\'s 3."\n}', 'response': ''}`
	if steps != wantSteps {
		t.Errorf("steps =\n%s\nwant\n%s", steps, wantSteps)
	}
	if !strings.HasPrefix(final, "Final step: {'name': 'Finish'") || !HasFinish(&c.Answer) {
		t.Errorf("final step = %s", final)
	}
	if l, ok := ParseAnswerStatus("AnswerStatus.Unsure"); !ok || l != metrics.Unsure {
		t.Error("ParseAnswerStatus")
	}
	for s, want := range map[string]metrics.Label{"Solved": metrics.Solved, " solved ": metrics.Solved, "AnswerStatus.UNSOLVED": metrics.Unsolved} {
		if l, ok := ParseAnswerStatus(s); !ok || l != want {
			t.Errorf("ParseAnswerStatus(%q) = %s, %v; want %s", s, l, ok, want)
		}
	}
	if l, ok := ParseAnswerStatus("maybe"); ok || l != metrics.Unparseable {
		t.Errorf("ParseAnswerStatus(maybe) = %s, %v", l, ok)
	}
}
