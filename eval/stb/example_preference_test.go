package stb_test

import (
	"context"
	"fmt"

	"github.com/toolenv/toolenv/eval/stb"
)

// ExamplePreference computes SoWR as eval_preference.py does: q1 is
// decided by the pass-rate labels, q2 has no candidate answer, q3 is
// judged twice.
func ExamplePreference() {
	verdicts := map[string][]string{"q3": {stb.PreferOutput, stb.PreferEqual}}
	res, err := stb.Preference(context.Background(), stb.PreferenceInput{
		TestIDs:    []string{"q1", "q2", "q3"},
		HasRef:     map[string]bool{"q1": true, "q2": true, "q3": true},
		HasOutput:  map[string]bool{"q1": true, "q3": true},
		RefPass:    map[string]string{"q1": "failed"},
		OutputPass: map[string]string{"q1": "passed"},
		Rounds:     2,
		Judge: func(_ context.Context, q string, round int) (string, error) {
			return verdicts[q][round], nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(stb.FormatWinRate("G1_instruction", "gpt-4", "toolllama", res), "judged:", res.Judged)
	// Output:
	// Test set: G1_instruction. Reference model: gpt-4, Candidate model: toolllama. Win rate: 0.6666666666666666, Tie rate: 0.0 judged: 2
}
