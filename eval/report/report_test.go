package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/eval/stb"
)

// episodes builds a small evaluation by hand: two runs of two tasks for a
// direct and a react agent, with hostile text in the trajectories.
func episodes() []*eval.Episode {
	var eps []*eval.Episode
	gold := []toolenv.GoldCall{{Name: "get_x", Args: map[string]any{"id": json.Number("1")}, Label: "A"}}
	for run := 0; run < 2; run++ {
		for i, id := range []string{"t/1", "t/2"} {
			ok := i == 0 || run == 1
			d := &eval.Episode{TaskID: id, Run: run, Agent: "direct", Model: "m", Split: "s", Query: "q <b>bold</b>", Gold: gold,
				Outcome: &agent.Outcome{Parsed: ok, Predicted: gold, Trajectory: &toolenv.Trajectory{Steps: []toolenv.Step{
					{Thought: "(the model's answer)", Raw: "<script>alert(1)</script>"},
					{Call: &gold[0], Observation: `{"v": "</pre><img src=x>"}`, Status: toolenv.StatusOK},
				}}},
				Score: eval.Score{HasAnswer: true, Completed: ok, HasGold: true}}
			if !ok {
				d.Score.ErrorCategory = metrics.ErrInstructionAlignment
			}
			eps = append(eps, d)
			final := `{"return_type": "give_answer", "final_answer": "x"}`
			r := &eval.Episode{TaskID: id, Run: run, Agent: "react", Model: "m", Split: "s", Query: "q",
				Outcome: &agent.Outcome{Parsed: true, Loops: 3, FinalAnswerRaw: final, Trajectory: &toolenv.Trajectory{Finished: true, Answer: "x"}},
				SoPR:    []judge.Verdict{{Label: metrics.Solved}, {Label: metrics.Unsure}},
				FAC:     []judge.Verdict{{Label: metrics.Unparseable, Raw: "?"}}}
			eps = append(eps, r)
		}
	}
	return eps
}

func TestHTMLIsSelfContainedAndEscaped(t *testing.T) {
	eps := episodes()
	s := eval.Summarize(eps)
	var b bytes.Buffer
	if err := HTML(&b, &eval.RunInfo{Agent: "direct", Model: "m", Runs: 2, Env: "in-process"}, s, eps, []string{"tasks.jsonl:3: <bad>"}, HTMLOptions{MaxEpisodes: 5}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script>alert", "<img src=x>", "<b>bold</b>", "<bad>", "src=\"http", "<link"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q unescaped", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "<svg", "Completion", "SoPR %", "Failed direct attempts by error category (Live API-Bench Appendix G)", "3 more episode(s)", "tasks.jsonl:3: &lt;bad&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<details id="); n != 5 {
		t.Errorf("%d trajectories shown, want 5", n)
	}
}

func TestBarChart(t *testing.T) {
	s := eval.Summarize(episodes())
	svg := string(barChart(mCompletion, s.Groups))
	if strings.Count(svg, "<rect") != 1 || !strings.Contains(svg, "0.75 ± 0.25") || !strings.Contains(svg, `class="err"`) {
		t.Errorf("completion chart:\n%s", svg)
	}
	if barChart(mFAC, nil) != "" {
		t.Error("a chart for no groups")
	}
}

// TestCompareMarkdown: evaluations side by side, every row naming its
// scorer (the NESTful scorer and the position-aware one both give intent
// and slot P/R/F1), no two rows alike.
func TestCompareMarkdown(t *testing.T) {
	s := eval.Summarize(episodes())
	md := CompareMarkdown([]Evaluation{{Name: "a", Summary: s}, {Name: "b", Summary: s}})
	for _, want := range []string{"## s", "| Metric | a: direct/m | a: react/m | b: direct/m | b: react/m |", "| Completion — NL2SQL answer check | 0.75 ± 0.25 (n=4) | – | 0.75 ± 0.25 (n=4) | – |",
		"| SoPR % — StableToolBench SoPR judge | – | 75.0 ± 25.0 (n=2 tasks) | – | 75.0 ± 25.0 (n=2 tasks) |",
		"| Intent F1 — position-aware (Live API-Bench) |", "| Intent F1 — NESTful scorer |"} {
		if !strings.Contains(md, want) {
			t.Errorf("comparison lacks %q:\n%s", want, md)
		}
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| Metric") || strings.HasPrefix(line, "| ---") {
			continue
		}
		name := strings.SplitN(line, " |", 2)[0]
		if seen[name] {
			t.Errorf("two rows named %q", name)
		}
		seen[name] = true
	}
}

func TestWriteStableToolBench(t *testing.T) {
	dir := t.TempDir()
	if err := WriteStableToolBench(dir, episodes()); err != nil {
		t.Fatal(err)
	}
	f, err := stb.ReadPassRate(filepath.Join(dir, "pass_rate", "react", "s_react.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := stb.SolvePassRate(f, 0)
	if len(r.PerRound) != 4 || r.Mean != 75 {
		t.Errorf("pass rate of the export: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "converted", "direct")); err == nil {
		t.Error("direct episodes exported to StableToolBench's format")
	}
}
