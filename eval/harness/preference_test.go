package harness

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/stb"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// writeRun writes an evaluation folder whose react episodes end with the
// given final answers, by task.
func writeRun(t *testing.T, answers map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	j, err := eval.OpenJournal(filepath.Join(dir, "episodes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for id, a := range answers {
		e := &eval.Episode{TaskID: id, Agent: "react", Model: "m", Split: "G1", Query: "query " + id,
			Outcome: &agent.Outcome{Parsed: true, Trajectory: &toolenv.Trajectory{Finished: true, Answer: a,
				Steps: []toolenv.Step{{Thought: "look " + a, Call: &toolenv.GoldCall{Name: "lookup"}, Observation: a, Status: toolenv.StatusOK}}}}}
		if err := j.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPreferenceJudgesTwoRuns: SoWR of a candidate run against a
// reference run with a judge on loopback: a query only one answer solves
// goes to it without select_better_answer, two unsolved answers are
// compared by the judge, a query one run lacks counts for the other; the
// save files are eval_preference.py's, which eval stb winrate reads.
func TestPreferenceJudgesTwoRuns(t *testing.T) {
	ref := writeRun(t, map[string]string{"t1": "good", "t2": "bad one", "t3": "good"})
	cand := writeRun(t, map[string]string{"t1": "bad", "t2": "bad two", "t4": "bad"})
	selects := 0
	srv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		if len(req.Tools) == 0 {
			return llmtest.Reply{Content: "OK"}
		}
		name := req.Tools[0].Function.Name
		if name == "select_better_answer" {
			selects++
			if !strings.Contains(req.Messages[0].Content, "Answer_0:\n{") {
				return llmtest.Reply{Content: "answers not sent as JSON"}
			}
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{Type: "function", Function: llm.FunctionCall{Name: name, Arguments: `{"index": 1, "reason": "more detail"}`}}}}
		}
		status := "Unsolved"
		if strings.Contains(req.Messages[0].Content, `good`) {
			status = "Solved"
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{Type: "function", Function: llm.FunctionCall{Name: name, Arguments: `{"answer_status": "` + status + `", "reason": "r"}`}}}}
	})
	defer srv.Close()
	out := t.TempDir()
	var w bytes.Buffer
	res, err := Preference(context.Background(), &PreferenceConfig{Reference: ref, Candidate: cand, Out: out, Rounds: 2, Seed: 1,
		JudgeURL: srv.URL(), JudgeModel: "judge", Retries: 0}, Options{}, &w)
	if err != nil {
		t.Fatal(err)
	}
	refName, candName := filepath.Base(ref), filepath.Base(cand)
	want := "Test set: G1. Reference model: " + refName + ", Candidate model: " + candName + ". Win rate: 0.5, Tie rate: 0.0"
	if len(res) != 1 || res[0].Line != want || !strings.Contains(w.String(), want) {
		t.Fatalf("%+v\n%s", res, w.String())
	}
	r := res[0].Result
	if r.Counts["t1"].Ref != 2 || r.Counts["t2"].Output != 2 || r.Counts["t3"].Ref != 2 || r.Counts["t4"].Output != 2 || r.Judged != 4 {
		t.Errorf("counts %+v %+v %+v %+v, judged %d", r.Counts["t1"], r.Counts["t2"], r.Counts["t3"], r.Counts["t4"], r.Judged)
	}
	if selects != 2 || res[0].Verdicts["t1"][0].Stage != "status" || res[0].Verdicts["t2"][0].Stage != "select_better_answer" {
		t.Errorf("select_better_answer asked %d times; verdicts %+v", selects, res[0].Verdicts)
	}
	line, err := stb.WinRateFile(filepath.Join(out, "G1_"+refName+"_"+candName+".json"), refName, candName)
	if err != nil || line != want {
		t.Errorf("save file: %q %v", line, err)
	}
	if _, err := os.Stat(filepath.Join(out, "records.db")); err != nil {
		t.Error(err)
	}
}
