package eval_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/eval/report"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite the golden files from this run")

// TestReportGolden runs direct and react (judged) on the superhero tasks
// with scripted models and compares the Markdown report with
// testdata/report.golden.md (go test ./eval -run TestReportGolden -update
// rewrites it).
func TestReportGolden(t *testing.T) {
	f := newFixture(t)
	// Fixed token counts keep the report independent of prompt lengths.
	usage := llm.Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120}
	model := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		r := scripted(req)
		r.Usage = usage
		return r
	})
	defer model.Close()
	judgeSrv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		if len(req.Tools) == 0 {
			return llmtest.Reply{Content: "Answer Status\nSolved\nReason\nIt answers.", Usage: usage}
		}
		return llmtest.Reply{Usage: usage, ToolCalls: []llm.ToolCall{{ID: "j", Type: "function", Function: llm.FunctionCall{Name: req.Tools[0].Function.Name, Arguments: `{"answer_status": "Solved", "reason": "fine"}`}}}}
	})
	defer judgeSrv.Close()
	var eps []*eval.Episode
	for _, a := range []agent.Agent{agent.Direct{}, agent.ReAct{Budget: 4}} {
		cfg := config(f, a, t.TempDir())
		cfg.Model = llm.New(model.URL(), llm.Options{})
		if a.Name() == "react" {
			cfg.Judge = &judge.Judge{Model: llm.New(judgeSrv.URL(), llm.Options{}), ModelName: "judge"}
			cfg.FAC = true
		}
		res, err := eval.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, res.Episodes...)
	}
	info := &eval.RunInfo{Agent: "direct, react", Model: "test", TaskCount: 3, Runs: 2, Seed: 42, Env: "in-process",
		Judge: &eval.JudgeInfo{Model: "judge", Rounds: 1, SoPR: true, FAC: true}, Prompts: append(agent.Prompts(), judge.Prompts()...)}
	got := report.Markdown(info, eval.Summarize(eps))
	golden := filepath.Join("testdata", "report.golden.md")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("report differs from %s (rerun with -update if the change is intended):\n%s", golden, got)
	}
}

// scripted answers like a model: the direct agent gets one correct
// sequence, one list of bare names and one wrong sequence; the react
// agent answers 3-D Man's question in two steps, gets stuck on Dark Horse
// and answers the last at once.
func scripted(req *llm.Request) llmtest.Reply {
	q := req.Messages[1].Content
	if strings.HasPrefix(q, "Question: ") { // react
		if len(req.Messages) == 2 && strings.Contains(q, "3-D Man") {
			return llmtest.Reply{Content: "Thought: find him\nAction: filter_data\nAction Input: {\"data_source\": \"$starting_table$\", \"key_name\": \"superhero_superhero_name\", \"condition\": \"equal_to\", \"value\": \"3-D Man\", \"label\": \"H\"}"}
		}
		if len(req.Messages) == 4 && strings.Contains(q, "3-D Man") {
			return llmtest.Reply{Content: "Thought: eyes\nAction: retrieve_data\nAction Input: {\"data_source\": \"$H$\", \"key_names\": [\"eye_colour_colour\"]}"}
		}
		if strings.Contains(q, "Dark Horse") {
			return llmtest.Reply{Content: "Thought: again\nAction: filter_data\nAction Input: {\"data_source\": \"$DH$\"}"}
		}
		return llmtest.Reply{Content: "Thought: I now know the final answer\nFinal Answer: Brown"}
	}
	switch { // direct
	case strings.Contains(q, "3-D Man"):
		return llmtest.Reply{Content: `[{"name": "filter_data", "arguments": {"data_source": "$starting_table$", "key_name": "superhero_superhero_name", "condition": "equal_to", "value": "3-D Man"}, "label": "X"}, {"name": "retrieve_data", "arguments": {"data_source": "$X$", "key_names": ["eye_colour_colour"]}, "label": "Y"}]`}
	case strings.Contains(q, "Dark Horse"):
		return llmtest.Reply{Content: "```json\n[\"filter_data\", \"retrieve_data\"]\n```"}
	}
	return llmtest.Reply{Content: `[{"name": "sort_data", "arguments": {"data_source": "$starting_table$", "key_name": "superhero_height_cm", "ascending": false}, "label": "S"}, {"name": "retrieve_data", "arguments": {"data_source": "$S$", "key_names": ["superhero_superhero_name"], "limit": 3}, "label": "T"}]`}
}
