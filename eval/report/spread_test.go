package report

import (
	"math"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/eval/metrics"
)

// TestRunsSpreadAndPassK: three runs of four tasks whose completion moves
// between runs. The summary gives each metric its sample standard
// deviation and 95 % interval, and pass^3 counts only the tasks that
// succeeded in all three runs; the report shows them.
func TestRunsSpreadAndPassK(t *testing.T) {
	// task i succeeds in run r when ok[i][r].
	ok := [][]bool{{true, true, true}, {true, false, true}, {false, false, false}, {true, true, false}}
	var eps []*eval.Episode
	for r := 0; r < 3; r++ {
		for i := range ok {
			eps = append(eps, &eval.Episode{TaskID: string(rune('a' + i)), Run: r, Agent: "direct", Model: "m", Split: "s",
				Outcome: &agent.Outcome{Trajectory: &toolenv.Trajectory{Finished: true}},
				Score:   eval.Score{HasAnswer: true, Completed: ok[i][r]}})
		}
	}
	s := eval.Summarize(eps)
	g := s.Groups[0]
	c := g.Completion
	// Per run: 3/4, 2/4, 2/4.
	if c == nil || c.SampleStd == nil || c.CI95 == nil {
		t.Fatalf("no spread: %+v", c)
	}
	mean := (0.75 + 0.5 + 0.5) / 3
	sd := math.Sqrt((math.Pow(0.75-mean, 2) + 2*math.Pow(0.5-mean, 2)) / 2)
	half := 4.302652729749464 * sd / math.Sqrt(3)
	if math.Abs(c.Mean-mean) > 1e-12 || math.Abs(*c.SampleStd-sd) > 1e-12 || math.Abs(c.CI95[0]-(mean-half)) > 1e-9 || math.Abs(c.CI95[1]-(mean+half)) > 1e-9 {
		t.Errorf("completion %+v %v %v", c, *c.SampleStd, *c.CI95)
	}
	if pk := g.PassK; pk == nil || pk.K != 3 || pk.Value != 0.25 || pk.Tasks != 4 || pk.Successes != 7 {
		t.Errorf("pass^k %+v", g.PassK)
	}
	md := Markdown(&eval.RunInfo{Agent: "direct", Model: "m", Runs: 3}, s)
	for _, want := range []string{"## Run-to-run spread", "| s | direct | m | Completion | 0.58 | 0.12 | 0.14 | [0.22, 0.94] | 0.75, 0.50, 0.50 |", "| s | direct | m | pass^3 | 0.25 (n=4 tasks) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("%q not in report:\n%s", want, md)
		}
	}
}

// TestUnreadableVerdictsAreNotAScore: when no judge verdict could be read
// the report says so instead of showing SoPR 0.0 over the tasks; when
// some could not, it says how many were counted as 0.
func TestUnreadableVerdictsAreNotAScore(t *testing.T) {
	build := func(readable int) *eval.Summary {
		var eps []*eval.Episode
		for i := 0; i < 20; i++ {
			l := metrics.Unparseable
			if i < readable {
				l = metrics.Solved
			}
			eps = append(eps, &eval.Episode{TaskID: string(rune('a' + i)), Agent: "react", Model: "m", Split: "s",
				Outcome: &agent.Outcome{Trajectory: &toolenv.Trajectory{Finished: true}},
				SoPR:    []judge.Verdict{{Label: l, Raw: "no function call"}}})
		}
		return eval.Summarize(eps)
	}
	md := Markdown(&eval.RunInfo{Agent: "react", Model: "m", Runs: 1}, build(0))
	if strings.Contains(md, "0.0 (n=20 tasks)") || !strings.Contains(md, "not measured: none of the 20 judge verdict(s) could be read") {
		t.Errorf("SoPR over no readable verdict shown as measured:\n%s", md)
	}
	if c := barChart(mSoPR, build(0).Groups); c != "" {
		t.Errorf("a SoPR chart over no readable verdict:\n%s", c)
	}
	md = Markdown(&eval.RunInfo{Agent: "react", Model: "m", Runs: 1}, build(15))
	if !strings.Contains(md, "75.0 (n=20 tasks; 5 verdict(s) unreadable, counted 0)") {
		t.Errorf("unreadable verdicts not counted in the cell:\n%s", md)
	}
}
