package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent/parse"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/openai"
)

// FinishName is ToolBench's Finish function.
const FinishName = "Finish"

// finishFunction is ToolBench's Finish function definition, reproduced
// exactly (toolbench/inference/Downstream_tasks/rapidapi.py; the same
// text is in StableToolBench's data_example answers).
var finishFunction = openai.Tool{Type: "function", Function: openai.Function{
	Name:        FinishName,
	Description: "If you believe that you have obtained a result that can answer the task, please call this function to provide the final answer. Alternatively, if you recognize that you are unable to proceed with the task in the current state, call this function to restart. Remember: you must ALWAYS call this function at the end of your attempt, and the only part that will be shown to the user is the final answer, so it should contain sufficient information.",
	Parameters:  finishSchema(),
}}

func finishSchema() *toolenv.Schema {
	s := toolenv.ObjectSchema()
	s.SetProp("return_type", &toolenv.Schema{Type: "string", Enum: []any{"give_answer", "give_up_and_restart"}})
	s.SetProp("final_answer", &toolenv.Schema{Type: "string", Description: `The final answer you want to give the user. You should have this field if "return_type"=="give_answer"`})
	s.Required = []string{"return_type"}
	return s
}

// The observation codes of ToolBench's environment step.
const (
	codeOK           = 0
	codeNoSuchTool   = 1
	codeBadFinish    = 2
	codeFinalAnswer  = 3
	codeGiveUp       = 4
	codeCallFailed   = 12
	maxToolDescBytes = 512
)

// toolbenchRun is what the CoT and DFSDT agents share: ToolBench's
// prompt, functions and environment step.
type toolbenchRun struct {
	ep      *Episode
	o       *Outcome
	tools   []openai.Tool
	names   map[string]bool
	maxObs  int
	answer  string
	gaveUp  bool
	finRaw  string
	hasDone bool
}

func newToolbenchRun(ep *Episode, o *Outcome, maxObs int, strict bool) *toolbenchRun {
	if maxObs <= 0 {
		maxObs = 1024
	}
	r := &toolbenchRun{ep: ep, o: o, maxObs: maxObs, names: map[string]bool{}}
	tools := ep.Session.Tools()
	r.tools = OfferedTools(tools, strict)
	for _, t := range tools {
		r.names[t.Name] = true
	}
	finish := finishFunction
	if strict {
		finish, _ = openai.StrictTool(&toolenv.Tool{Name: FinishName, Description: finishFunction.Function.Description, Input: finishSchema()})
	}
	r.tools = append(r.tools, finish)
	return r
}

// OfferedTools are tools as a chat request's tools field offers them:
// OpenAI functions, strict ones (openai.StrictTool: every argument
// required, optional ones nullable, which the server takes as left out)
// when strict is set.
func OfferedTools(tools []*toolenv.Tool, strict bool) []openai.Tool {
	if !strict {
		return openai.FromTools(tools)
	}
	out, _ := openai.StrictTools(tools)
	return out
}

// initialMessages are ToolBench's system and user messages.
func (r *toolbenchRun) initialMessages() []llm.Message {
	return []llm.Message{
		{Role: "system", Content: ToolBenchSystem(r.ep.Session.Tools())},
		{Role: "user", Content: "\n" + r.ep.Task.Query + "\nBegin!\n"},
	}
}

// ToolBenchSystem is ToolBench's system prompt for tools: the tools
// (groups) the functions belong to, each with its description (first 512
// bytes, newlines removed, "None" when empty), numbered from 1.
func ToolBenchSystem(tools []*toolenv.Tool) string {
	var list strings.Builder
	seen := map[string]bool{}
	k := 0
	for _, t := range tools {
		name := t.Meta["std_tool"]
		if name == "" {
			name = t.Group
		}
		if name == "" {
			name = t.Collection
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		k++
		desc := t.GroupDescription
		if len(desc) > maxToolDescBytes {
			desc = desc[:maxToolDescBytes]
		}
		desc = strings.TrimSpace(strings.ReplaceAll(desc, "\n", ""))
		if desc == "" {
			desc = "None"
		}
		fmt.Fprintf(&list, "%d.%s: %s\n", k, name, desc)
	}
	return fill(promptToolBench.Text, map[string]string{"tools": list.String()})
}

// request builds a chat request over msgs with the functions.
func (r *toolbenchRun) request(msgs []llm.Message) *llm.Request {
	return &llm.Request{Messages: append([]llm.Message(nil), msgs...), Tools: r.tools}
}

// step executes one function call as ToolBench's environment does and
// returns the observation and its code: Finish with give_answer ends the
// run (3), give_up_and_restart abandons the chain (4), a malformed Finish
// is code 2, an unknown function code 1, a failed call 12.
func (r *toolbenchRun) step(ctx context.Context, name, args string) (string, int) {
	if name == FinishName {
		return r.finishStep(args)
	}
	if !r.names[name] && name != "" {
		// ToolBench accepts a name that ends a function's name (the
		// first in the offered order).
		for _, t := range r.ep.Session.Tools() {
			if strings.HasSuffix(t.Name, name) {
				name = t.Name
				break
			}
		}
	}
	if !r.names[name] {
		b, _ := json.Marshal(map[string]string{"error": "No such function name: " + name, "response": ""})
		return string(b), codeNoSuchTool
	}
	argMap, problem := parse.ArgsFromString(args)
	if problem != "" {
		argMap = map[string]any{}
	}
	res := r.o.call(ctx, r.ep, Call{Name: name, Args: argMap})
	call := toolenv.GoldCall{Name: name, Args: argMap}
	r.o.Predicted = append(r.o.Predicted, SplitLabel(toolNamed(r.ep.Session, name), call))
	obs := stbObservation(res)
	code := codeOK
	if !res.OK() {
		code = codeCallFailed
	}
	return truncateRunes(obs, r.maxObs), code
}

// finishStep is ToolBench's handling of Finish, including its reading of
// arguments that are not valid JSON.
func (r *toolbenchRun) finishStep(args string) (string, int) {
	var data map[string]any
	if err := json.Unmarshal([]byte(args), &data); err != nil {
		data = map[string]any{}
		const rt = `"return_type": "`
		if i := strings.Index(args, rt); i >= 0 {
			switch {
			case strings.Contains(args, `"return_type": "give_answer"`):
				data["return_type"] = "give_answer"
			case strings.Contains(args, `"return_type": "give_up_and_restart"`):
				data["return_type"] = "give_up_and_restart"
			default:
				rest := args[i+len(rt):]
				if j := strings.Index(rest, `",`); j >= 0 {
					rest = rest[:j]
				}
				data["return_type"] = rest
			}
		}
		const fa = `"final_answer": "`
		if i := strings.Index(args, fa); i >= 0 {
			data["final_answer"] = args[i+len(fa):]
		}
	}
	switch data["return_type"] {
	case nil:
		return `{error:"must have "return_type""}`, codeBadFinish
	case "give_up_and_restart":
		return `{"response":"chose to give up and restart"}`, codeGiveUp
	case "give_answer":
		fa, ok := data["final_answer"]
		if !ok {
			return `{error:"must have "final_answer""}`, codeBadFinish
		}
		r.answer = fmt.Sprint(fa)
		r.finRaw = args
		r.hasDone = true
		return `{"response":"successfully giving the final answer."}`, codeFinalAnswer
	}
	return `{error:""return_type" is not a valid choice"}`, codeBadFinish
}

// stbObservation renders a result as StableToolBench's server answers:
// Python's json.dumps of {"error": ..., "response": ...}, so that a model
// sees the same text as in StableToolBench.
func stbObservation(res *toolenv.Result) string {
	resp := []byte(`""`)
	errText := ""
	if res.OK() {
		if b := bytes.TrimSpace(res.Body); len(b) > 0 && json.Valid(b) {
			resp = b
		}
	} else {
		errText = Observation(res)
	}
	body, err := pyfmt.JSONDumps(resp)
	if err != nil {
		body = `""`
	}
	return `{"error": ` + pyfmt.JSONString(errText) + `, "response": ` + body + `}`
}

// finishOutcome copies the run's final answer to the outcome.
func (r *toolbenchRun) finishOutcome() {
	if r.hasDone {
		r.o.Trajectory.Finished = true
		r.o.Trajectory.Answer = r.answer
		r.o.FinalAnswerRaw = r.finRaw
		r.o.Trajectory.GaveUp = false
	} else if r.gaveUp {
		r.o.Trajectory.GaveUp = true
	}
}
