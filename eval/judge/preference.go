package judge

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/eval/stb"
	"github.com/toolenv/toolenv/internal/promptfile"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/openai"
)

var promptSelect = promptfile.MustLoad(promptFiles, "prompts/sowr_select_better_answer.txt")

// PreferencePrompts lists the prompts of the preference judge.
func PreferencePrompts() []promptfile.Prompt {
	return []promptfile.Prompt{promptCheck, promptParse, promptSelect}
}

// Preference is one preference verdict between a reference answer and a
// candidate's: stb.PreferRef or stb.PreferOutput, how it was reached,
// and the judge's replies.
type Preference struct {
	Winner string `json:"winner"`
	// Stage is "status" (only one answer solved, or only one unsure),
	// "identical" (equal answers: chosen by the seed, where
	// StableToolBench chooses at random) or "select_better_answer".
	Stage string `json:"stage"`
	// Status are the two answers' statuses (check_answer_status, then
	// parse_answer_status when unsure).
	Status [2]Verdict `json:"status"`
	Raw    string     `json:"raw,omitempty"`
	Reason string     `json:"reason,omitempty"`
}

// Prefer compares two converted answers to a query as StableToolBench's
// preference evaluator does (registered_cls/rtl.py,
// normalized_openai_completions with no recorded statuses): each answer's
// status is judged as for SoPR; if exactly one is Solved it wins; if both
// are, or neither is and exactly one is Unsure, or otherwise, the judge's
// select_better_answer picks between the candidates of that stage (both
// answers, json.dumps'd); answers equal in final answer and details are
// not sent to the judge, one is chosen by the seed. (StableToolBench
// also asks check_task_solvable there, whose answer the choice never
// reads; toolenv does not ask it.) A judge that cannot be reached, or
// whose choice cannot be read, is an error.
func (j *Judge) Prefer(ctx context.Context, query string, ref, out *stb.ConvertedAnswer) (Preference, error) {
	var p Preference
	p.Status[0] = j.SoPR(ctx, query, ref)
	p.Status[1] = j.SoPR(ctx, query, out)
	for _, v := range p.Status {
		if v.Failed {
			return p, fmt.Errorf("judge: %s", v.Error)
		}
	}
	winner := func(i int) string {
		if i == 0 {
			return stb.PreferRef
		}
		return stb.PreferOutput
	}
	for _, want := range []metrics.Label{metrics.Solved, metrics.Unsure} {
		var idx []int
		for i, v := range p.Status {
			if v.Label == want {
				idx = append(idx, i)
			}
		}
		if len(idx) == 1 {
			p.Winner, p.Stage = winner(idx[0]), "status"
			return p, nil
		}
		if len(idx) == 2 {
			break
		}
	}
	// Both solved, both unsure, or neither: select the better of the two.
	if ref.FinalAnswer == out.FinalAnswer && detailsText(ref) == detailsText(out) {
		h := fnv.New64a()
		h.Write([]byte(strconv.FormatInt(j.Seed, 10) + "\x00" + query))
		p.Winner, p.Stage = winner(int(h.Sum64()%2)), "identical"
		return p, nil
	}
	a0, err := dumps(ref)
	if err != nil {
		return p, err
	}
	a1, err := dumps(out)
	if err != nil {
		return p, err
	}
	temp := j.SoPRTemperature
	if temp == nil {
		temp = llm.Float(0.2)
	}
	s := toolenv.ObjectSchema()
	s.SetProp("index", &toolenv.Schema{Type: "integer", Description: "The index of the better answer."})
	s.SetProp("reason", &toolenv.Schema{Type: "string", Description: "explain your answer."})
	s.Required = []string{"index", "reason"}
	resp, err := j.Model.Chat(ctx, &llm.Request{
		Model:    j.ModelName,
		Messages: []llm.Message{{Role: "user", Content: promptfile.Fill(promptSelect.Text, map[string]string{"query": query, "answer_0": a0, "answer_1": a1})}},
		Tools: []openai.Tool{{Type: "function", Function: openai.Function{Name: "select_better_answer",
			Description: "select the better answer with a comprehensive investigation on given aspects. You should ignore the impact of the order of candidate answers.", Parameters: s}}},
		ToolChoice:  map[string]any{"type": "function", "function": map[string]string{"name": "select_better_answer"}},
		Temperature: temp,
		Seed:        llm.Int(j.Seed),
		MaxTokens:   1000,
	})
	if err != nil {
		return p, fmt.Errorf("judge: %w", err)
	}
	p.Stage = "select_better_answer"
	msg := resp.Choices[0].Message
	for _, tc := range msg.ToolCalls {
		p.Raw = tc.Function.Arguments
		var args struct {
			Index  json.Number `json:"index"`
			Reason string      `json:"reason"`
		}
		if json.Unmarshal([]byte(tc.Function.Arguments), &args) == nil {
			if i, err := strconv.Atoi(args.Index.String()); err == nil && (i == 0 || i == 1) {
				p.Winner, p.Reason = winner(i), args.Reason
				return p, nil
			}
		}
	}
	if p.Raw == "" {
		p.Raw = msg.Content
	}
	// rtl.py raises ("Index ... not found!") after three tries; here the
	// verdict is an error the caller records.
	return p, fmt.Errorf("judge: no index 0 or 1 in select_better_answer's reply: %.200q", p.Raw)
}

func detailsText(a *stb.ConvertedAnswer) string {
	b, _ := json.Marshal(a.AnswerDetails)
	return string(b)
}

// dumps is Python's json.dumps of a converted answer.
func dumps(a *stb.ConvertedAnswer) (string, error) {
	raw, err := json.Marshal(a)
	if err != nil {
		return "", err
	}
	return pyfmt.JSONDumps(raw)
}
