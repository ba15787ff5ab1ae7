package perturb

import (
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
)

func TestReportMarkdown(t *testing.T) {
	for _, tc := range []struct {
		rep  Report
		want []string
		not  []string
	}{
		{Report{Mode: CaseMix, Seed: 3, Tasks: 4, Changed: 3, Variants: map[string]int{"b": 1, "a": 2}},
			[]string{"# Query perturbation: case_mix", "Tasks: t.jsonl, seed 3, 1.5s.", "| queries changed | 3 |", "| a | 2 |\n| b | 1 |"}, []string{"LLM answers", "Made by"}},
		{Report{Mode: Paraphrase, Tasks: 2, Attempts: 5, Rejected: 2, Failed: 1, Provenance: &toolenv.Provenance{Version: "v0.0.1-test"}},
			[]string{"| LLM answers | 5 |", "| answers rejected | 2 |", "| queries kept (every attempt rejected) | 1 |", "Made by toolenv v0.0.1-test."}, nil},
	} {
		md := string(tc.rep.Markdown("t.jsonl", 1500*time.Millisecond))
		for _, w := range tc.want {
			if !strings.Contains(md, w) {
				t.Errorf("%s: lacks %q:\n%s", tc.rep.Mode, w, md)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(md, w) {
				t.Errorf("%s: has %q:\n%s", tc.rep.Mode, w, md)
			}
		}
	}
}
