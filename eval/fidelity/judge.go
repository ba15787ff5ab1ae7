package fidelity

import (
	"context"
	"embed"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/promptfile"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/toolbench"
)

//go:embed prompts/*.txt
var promptFiles embed.FS

// The judge prompts, reproduced from the MirrorAPI paper's Appendix C
// (each file's header names its source and what the paper copy lost).
var (
	promptRateSystem = promptfile.MustLoad(promptFiles, "prompts/simulation_judge_system.txt")
	promptRateUser   = promptfile.MustLoad(promptFiles, "prompts/simulation_judge_user.txt")
	promptDocSystem  = promptfile.MustLoad(promptFiles, "prompts/doc_following_system.txt")
	promptDocUser    = promptfile.MustLoad(promptFiles, "prompts/doc_following_user.txt")
)

// Prompts lists the judge prompts (name, version, source, hash).
func Prompts() []promptfile.Prompt {
	return []promptfile.Prompt{promptRateSystem, promptRateUser, promptDocSystem, promptDocUser}
}

// ChatModel is the judge's endpoint. *llm.Client implements it.
type ChatModel interface {
	Chat(ctx context.Context, req *llm.Request) (*llm.Response, error)
}

var _ ChatModel = (*llm.Client)(nil)

// Judge asks a model for the paper's two verdicts on a simulated
// response, at temperature 0.
type Judge struct {
	Model ChatModel
	// ModelName is sent as the request's model.
	ModelName string
	// Seed is sent with every request.
	Seed int64
	// MaxTokens bounds each verdict; 0 means 2048 (FastChat's judge).
	MaxTokens int
}

// Rating is the LLM-as-a-judge verdict: a score from 1 to 10.
type Rating struct {
	// Score is the rating; valid when Parsed.
	Score float64 `json:"score,omitempty"`
	// Parsed is false when the reply held no rating in 1–10 (Raw keeps
	// it) or the judge could not be asked (Error says why).
	Parsed bool   `json:"parsed"`
	Raw    string `json:"raw,omitempty"`
	Error  string `json:"error,omitempty"`
}

// DocVerdict is the documentation-following verdict.
type DocVerdict struct {
	// Follows is overall_eval (1 true, 0 false); valid when Parsed.
	Follows bool   `json:"follows"`
	Reason  string `json:"reason,omitempty"`
	Parsed  bool   `json:"parsed"`
	Raw     string `json:"raw,omitempty"`
	Error   string `json:"error,omitempty"`
}

func (j *Judge) ask(ctx context.Context, system, user string) (string, error) {
	maxTok := j.MaxTokens
	if maxTok <= 0 {
		maxTok = 2048
	}
	resp, err := j.Model.Chat(ctx, &llm.Request{
		Model:       j.ModelName,
		Messages:    []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: user}},
		Temperature: llm.Float(0),
		Seed:        llm.Int(j.Seed),
		MaxTokens:   maxTok,
	})
	if err != nil {
		return "", err
	}
	return resp.Text(), nil
}

// Rate asks the LLM-as-a-judge prompt (Table 12): the question is the
// simulator's input (the API doc and the request, as MirrorAPI's user
// turn shows them), the reference answer the real response and the
// assistant's answer the simulated one, both as {"error", "response"}.
func (j *Judge) Rate(ctx context.Context, t *toolenv.Tool, args map[string]any, real, simulated string) Rating {
	user := promptfile.Fill(promptRateUser.Text, map[string]string{
		"question":     Question(t, args),
		"ref_answer_1": real,
		"answer":       simulated,
	})
	raw, err := j.ask(ctx, promptRateSystem.Text, user)
	if err != nil {
		return Rating{Error: err.Error()}
	}
	score, ok := ParseRating(raw)
	return Rating{Score: score, Parsed: ok, Raw: raw}
}

// RateQuestion asks the LLM-as-a-judge prompt with the question given as
// text (a recorded prediction's prompt, MirrorAPI's user turn) and the
// two answers as written.
func (j *Judge) RateQuestion(ctx context.Context, question, real, simulated string) Rating {
	user := promptfile.Fill(promptRateUser.Text, map[string]string{
		"question":     question,
		"ref_answer_1": real,
		"answer":       simulated,
	})
	raw, err := j.ask(ctx, promptRateSystem.Text, user)
	if err != nil {
		return Rating{Error: err.Error()}
	}
	score, ok := ParseRating(raw)
	return Rating{Score: score, Parsed: ok, Raw: raw}
}

// FollowsDoc asks the documentation-following prompt about the simulated
// response (an {"error", "response"} text).
func (j *Judge) FollowsDoc(ctx context.Context, t *toolenv.Tool, args map[string]any, simulated string) DocVerdict {
	doc := toolbench.DocOf(t)
	user := promptfile.Fill(promptDocUser.Text, map[string]string{
		"api_name":            doc.APIName,
		"api_description":     doc.APIDescription,
		"tool_name":           doc.ToolName,
		"tool_description":    doc.ToolDescription,
		"required_parameters": pyfmt.Repr(paramDicts(doc.RequiredParameters)),
		"optional_parameters": pyfmt.Repr(paramDicts(doc.OptionalParameters)),
		"user_request":        pyfmt.Dumps(request(t, args)),
		"api_response":        simulated,
	})
	raw, err := j.ask(ctx, promptDocSystem.Text, user)
	if err != nil {
		return DocVerdict{Error: err.Error()}
	}
	v, ok := ParseDocVerdict(raw)
	v.Parsed, v.Raw = ok, raw
	return v
}

// Question is what the simulator was asked, as MirrorAPI's user turn
// writes it: "API doc:\n{doc}\n\nRequest:\n{request}", both as Python's
// str() prints them.
func Question(t *toolenv.Tool, args map[string]any) string {
	doc := toolbench.DocOf(t)
	d := pyfmt.Dict{
		{Key: "api_name", Value: doc.APIName},
		{Key: "api_description", Value: doc.APIDescription},
		{Key: "required_parameters", Value: paramDicts(doc.RequiredParameters)},
		{Key: "optional_parameters", Value: paramDicts(doc.OptionalParameters)},
		{Key: "tool_description", Value: doc.ToolDescription},
		{Key: "tool_name", Value: doc.ToolName},
		{Key: "tool_category", Value: toolbench.StandardizeCategory(doc.CategoryName)},
	}
	return "API doc:\n" + pyfmt.Repr(d) + "\n\nRequest:\n" + pyfmt.Repr(request(t, args))
}

// request is the StableToolBench request of a call, tool_input as the
// JSON of the arguments.
func request(t *toolenv.Tool, args map[string]any) pyfmt.Dict {
	doc := toolbench.DocOf(t)
	in, err := toolenv.MarshalJSONNoHTML(args)
	if err != nil {
		in = []byte("{}")
	}
	return pyfmt.Dict{
		{Key: "category", Value: toolbench.StandardizeCategory(doc.CategoryName)},
		{Key: "tool_name", Value: doc.ToolName},
		{Key: "api_name", Value: doc.APIName},
		{Key: "tool_input", Value: string(in)},
		{Key: "strip", Value: "filter"},
	}
}

func paramDicts(ps []toolbench.ParamDoc) []any {
	out := make([]any, len(ps))
	for i, p := range ps {
		out[i] = pyfmt.Dict{{Key: "name", Value: p.Name}, {Key: "type", Value: p.Type}, {Key: "description", Value: p.Description}, {Key: "default", Value: p.Default}}
	}
	return out
}

// FastChat's rating patterns: "[[8]]", else "[8]".
var (
	ratingRE       = regexp.MustCompile(`\[\[(\d+\.?\d*)\]\]`)
	ratingBackupRE = regexp.MustCompile(`\[(\d+\.?\d*)\]`)
)

// ParseRating reads a rating as FastChat does (the first "[[n]]", else
// the first "[n]"); a rating outside 1–10 is not accepted.
func ParseRating(reply string) (float64, bool) {
	m := ratingRE.FindStringSubmatch(reply)
	if m == nil {
		m = ratingBackupRE.FindStringSubmatch(reply)
	}
	if m == nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(m[1], "."), 64)
	if err != nil || f < 1 || f > 10 {
		return 0, false
	}
	return f, true
}

// quoteFixer turns the typographic quotes the prompt itself uses
// (‘‘overall_eval’’) back into ASCII ones.
var quoteFixer = strings.NewReplacer("‘‘", `"`, "’’", `"`, "“", `"`, "”", `"`, "‘", "'", "’", "'")

// ParseDocVerdict reads {"overall_eval": 1/0, "reason": "..."} from a
// reply: the JSON object in it (also in a code fence, after prose, with
// typographic quotes or as a Python dict); overall_eval may be 1, 0, "1",
// "0", true or false.
func ParseDocVerdict(reply string) (DocVerdict, bool) {
	for _, text := range []string{reply, quoteFixer.Replace(reply)} {
		i, j := strings.Index(text, "{"), strings.LastIndex(text, "}")
		if i < 0 || j < i {
			continue
		}
		v, _, err := pyfmt.DecodeRepaired(text[i:j+1], pyfmt.ParseOptions{})
		if err != nil {
			continue
		}
		obj, ok := v.(pyfmt.Dict)
		if !ok {
			if m, isMap := v.(map[string]any); isMap {
				obj = pyfmt.Dict{}
				for k, x := range m {
					obj = append(obj, pyfmt.Item{Key: k, Value: x})
				}
			}
		}
		var d DocVerdict
		found := false
		for _, it := range obj {
			switch it.Key {
			case "overall_eval":
				d.Follows, found = truth(it.Value)
			case "reason":
				if s, ok := it.Value.(string); ok {
					d.Reason = s
				}
			}
		}
		if found {
			return d, true
		}
	}
	return DocVerdict{}, false
}

// truth reads overall_eval: 1 or 0 as a number, a string or a boolean.
func truth(v any) (value, ok bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		x = strings.TrimSpace(x)
		return x == "1", x == "1" || x == "0"
	case json.Number:
		return x.String() == "1", x.String() == "1" || x.String() == "0"
	case float64:
		return x == 1, x == 1 || x == 0
	case int:
		return x == 1, x == 1 || x == 0
	case int64:
		return x == 1, x == 1 || x == 0
	}
	s := strings.TrimSpace(pyfmt.Repr(v))
	return s == "1", s == "1" || s == "0"
}
