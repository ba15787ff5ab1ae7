package judge

import (
	"context"
	"embed"
	"encoding/json"
	"regexp"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/eval/stb"
	"github.com/toolenv/toolenv/internal/promptfile"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/openai"
)

//go:embed prompts/*.txt
var promptFiles embed.FS

var (
	promptCheck = promptfile.MustLoad(promptFiles, "prompts/sopr_check_answer_status.txt")
	promptParse = promptfile.MustLoad(promptFiles, "prompts/sopr_parse_answer_status.txt")
	promptFAC   = promptfile.MustLoad(promptFiles, "prompts/fac.txt")
)

// Prompts lists the judge prompts (name, version, source, hash).
func Prompts() []promptfile.Prompt { return []promptfile.Prompt{promptCheck, promptParse, promptFAC} }

// Model is the chat endpoint of the judge. *llm.Client implements it.
type Model interface {
	Chat(ctx context.Context, req *llm.Request) (*llm.Response, error)
}

// Judge asks one model for verdicts.
type Judge struct {
	Model Model
	// ModelName is sent as the request's model.
	ModelName string
	// Seed is sent with every request.
	Seed int64
	// SoPRTemperature is StableToolBench's evaluator temperature (0.2 when
	// nil); FACTemperature the FAC evaluator's (0 when nil).
	SoPRTemperature *float64
	FACTemperature  *float64
}

// The stages a verdict can come from.
const (
	StageRule  = "rule"                // decided without a judge
	StageCheck = "check_answer_status" // the judge read the final answer
	StageParse = "parse_answer_status" // the judge read the whole chain
	StageFAC   = "fac"
)

// Verdict is one judgement.
type Verdict struct {
	Label metrics.Label `json:"label"`
	// Stage says what decided it; Reason is the judge's (or the rule's)
	// explanation; Raw the judge's reply as received.
	Stage  string `json:"stage"`
	Reason string `json:"reason,omitempty"`
	Raw    string `json:"raw,omitempty"`
	// Error is set when the judge could not be asked (the label is then
	// Unparseable).
	Error string `json:"error,omitempty"`
	// Failed says the judge's model did not answer (after its retries):
	// no verdict was given, and the label is no measurement.
	Failed bool `json:"failed,omitempty"`
}

// SoPR judges a converted answer as eval_pass_rate.py does. query is the
// user's query.
func (j *Judge) SoPR(ctx context.Context, query string, answer *stb.ConvertedAnswer) Verdict {
	if !stb.HasFinish(answer) {
		return Verdict{Label: metrics.Unsolved, Stage: StageRule, Reason: "No answer"}
	}
	if answer.FinalAnswer == "" || strings.Contains(answer.FinalAnswer, "give_up_and_restart") {
		return Verdict{Label: metrics.Unsolved, Stage: StageRule, Reason: "Empty final answer!"}
	}
	v := j.askStatus(ctx, StageCheck, promptCheck, query, answer.FinalAnswer)
	if v.Label != metrics.Unsure {
		return v
	}
	raw, err := json.Marshal(answer)
	if err != nil {
		return Verdict{Label: metrics.Unparseable, Stage: StageParse, Error: err.Error()}
	}
	dumped, err := pyfmt.JSONDumps(raw)
	if err != nil {
		return Verdict{Label: metrics.Unparseable, Stage: StageParse, Error: err.Error()}
	}
	return j.askStatus(ctx, StageParse, promptParse, query, dumped)
}

// statusFunction is the function StableToolBench's evaluator forces the
// judge to call (config.yaml of tooleval_gpt-3.5-turbo_default, with the
// "reason" argument its return_reason adds).
func statusFunction(name string) openai.Tool {
	s := toolenv.ObjectSchema()
	s.SetProp("answer_status", &toolenv.Schema{Type: "string", Enum: []any{"Unsure", "Unsolved", "Solved"}})
	s.SetProp("reason", &toolenv.Schema{Type: "string", Description: "explain your answer."})
	s.Required = []string{"answer_status", "reason"}
	return openai.Tool{Type: "function", Function: openai.Function{
		Name:        name,
		Description: "Parse the json answer with layerd nodes and return the answer_status about the answer",
		Parameters:  s,
	}}
}

func (j *Judge) askStatus(ctx context.Context, stage string, p promptfile.Prompt, query, answer string) Verdict {
	temp := j.SoPRTemperature
	if temp == nil {
		temp = llm.Float(0.2)
	}
	req := &llm.Request{
		Model:       j.ModelName,
		Messages:    []llm.Message{{Role: "user", Content: promptfile.Fill(p.Text, map[string]string{"query": query, "answer": answer})}},
		Tools:       []openai.Tool{statusFunction(stage)},
		ToolChoice:  map[string]any{"type": "function", "function": map[string]string{"name": stage}},
		Temperature: temp,
		Seed:        llm.Int(j.Seed),
		MaxTokens:   1000,
	}
	resp, err := j.Model.Chat(ctx, req)
	if err != nil {
		return Verdict{Label: metrics.Unparseable, Stage: stage, Error: err.Error(), Failed: true}
	}
	msg := resp.Choices[0].Message
	v := Verdict{Stage: stage}
	for _, tc := range msg.ToolCalls {
		v.Raw = tc.Function.Arguments
		var args struct {
			Status string `json:"answer_status"`
			Reason string `json:"reason"`
		}
		if json.Unmarshal([]byte(tc.Function.Arguments), &args) == nil {
			if l, ok := stb.ParseAnswerStatus(args.Status); ok {
				v.Label, v.Reason = l, args.Reason
				return v
			}
		}
	}
	// No usable function call: read the reply's text, as a JSON object
	// or the one status word it names.
	if v.Raw == "" {
		v.Raw = msg.Content
	}
	v.Label, v.Reason = statusFromText(msg.Content)
	return v
}

var statusWordRE = regexp.MustCompile(`(?i)\b(unsolved|solved|unsure)\b`)

// statusFromText reads a status from free text: the answer_status of a
// JSON object in it, else the only status word it uses.
func statusFromText(s string) (metrics.Label, string) {
	if i := strings.Index(s, "{"); i >= 0 {
		d := json.NewDecoder(strings.NewReader(s[i:]))
		var obj map[string]any
		if d.Decode(&obj) == nil {
			if st, ok := obj["answer_status"].(string); ok {
				if l, ok := stb.ParseAnswerStatus(st); ok {
					r, _ := obj["reason"].(string)
					return l, r
				}
			}
		}
	}
	words := map[metrics.Label]bool{}
	for _, m := range statusWordRE.FindAllString(s, -1) {
		l, _ := stb.ParseAnswerStatus(m)
		words[l] = true
	}
	if len(words) == 1 {
		for l := range words {
			return l, strings.TrimSpace(s)
		}
	}
	return metrics.Unparseable, ""
}

// FAC judges a final answer's completeness as fac_eval.py does: an empty
// answer is Unsolved without asking; otherwise the judge's reply is read
// as Unsolved when it says "unsolved", Solved when it says "solved", and
// Unparseable (scored as Unsolved) when it says neither. finalAnswer is
// the Finish call's arguments as the agent wrote them (or a final answer
// text); like fac_eval.py, only a value that starts with `{\` is unwrapped
// to its "final_answer".
func (j *Judge) FAC(ctx context.Context, query, finalAnswer string) Verdict {
	if finalAnswer == "" {
		return Verdict{Label: metrics.Unsolved, Stage: StageRule, Reason: "final_answer was not properly loaded"}
	}
	answer := finalAnswer
	if strings.HasPrefix(answer, `{\`) {
		var fa struct {
			FinalAnswer string `json:"final_answer"`
		}
		if json.Unmarshal([]byte(answer), &fa) == nil {
			answer = fa.FinalAnswer
		}
	}
	temp := j.FACTemperature
	if temp == nil {
		temp = llm.Float(0)
	}
	req := &llm.Request{
		Model:       j.ModelName,
		Messages:    []llm.Message{{Role: "user", Content: promptfile.Fill(promptFAC.Text, map[string]string{"query": query, "answer": answer})}},
		Temperature: temp,
		Seed:        llm.Int(j.Seed),
		MaxTokens:   512,
	}
	resp, err := j.Model.Chat(ctx, req)
	if err != nil {
		return Verdict{Label: metrics.Unparseable, Stage: StageFAC, Error: err.Error(), Failed: true}
	}
	text := resp.Text()
	v := Verdict{Stage: StageFAC, Raw: text}
	low := strings.ToLower(text)
	switch {
	case strings.Contains(low, "unsolved"):
		v.Label = metrics.Unsolved
	case strings.Contains(low, "solved"):
		v.Label = metrics.Solved
	default:
		v.Label = metrics.Unparseable
	}
	if _, reason, ok := strings.Cut(text, "Reason"); ok {
		v.Reason = strings.TrimSpace(strings.TrimLeft(reason, ": \n"))
	}
	return v
}
