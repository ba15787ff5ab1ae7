package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent/parse"
	"github.com/toolenv/toolenv/llm"
)

// ReAct plans one tool call at a time: it writes a Thought, an Action and
// its Action Input, reads the Observation, and repeats until it gives a
// Final Answer or runs out of turns (Live API-Bench, Appendix F).
type ReAct struct {
	// Budget is the number of think-act-observe turns; 0 means 10.
	Budget int
	// MaxObservation bounds the observation shown to the model
	// (characters); 0 means 4096.
	MaxObservation int
}

var _ Agent = ReAct{}

// Name returns "react".
func (ReAct) Name() string { return "react" }

// Run runs the loop.
func (a ReAct) Run(ctx context.Context, ep *Episode) *Outcome {
	o := newOutcome(a.Name(), ep)
	o.Parsed = true
	budget := a.Budget
	if budget <= 0 {
		budget = 10
	}
	maxObs := a.MaxObservation
	if maxObs <= 0 {
		maxObs = 4096
	}
	tools := ep.Session.Tools()
	msgs := []llm.Message{
		{Role: "system", Content: ReActSystem(tools)},
		{Role: "user", Content: "Question: " + UserQuery(ep.Task)},
	}
	for o.Loops < budget {
		resp, err := o.chat(ctx, ep, &llm.Request{Messages: msgs, Stop: []string{"\nObservation:"}})
		if err != nil {
			return o
		}
		o.Loops++
		msg := resp.Choices[0].Message
		step, perr := reactStep(msg)
		written := strings.TrimSpace(msg.Content)
		if perr != nil {
			obs := "Your reply could not be read: " + perr.Error() + ". Reply with Thought, Action and Action Input, or with Final Answer."
			o.Trajectory.Steps = append(o.Trajectory.Steps, toolenv.Step{Thought: written, Observation: obs, Raw: msg.Content})
			msgs = append(msgs, llm.Message{Role: "assistant", Content: written}, llm.Message{Role: "user", Content: "Observation: " + obs})
			continue
		}
		if step.IsFinal {
			o.Trajectory.Steps = append(o.Trajectory.Steps, toolenv.Step{Thought: step.Thought, Raw: msg.Content})
			o.Trajectory.Answer = step.Final
			o.Trajectory.Finished = true
			o.FinalAnswerRaw = step.Final
			return o
		}
		call := toolenv.GoldCall{Name: step.Action, Args: step.Input}
		st := toolenv.Step{Thought: step.Thought, Call: &call, Raw: msg.Content}
		var obs string
		if step.InputProblem != "" {
			obs = "The Action Input could not be read as a JSON object (" + step.InputProblem + "); the tool was not called."
			st.Status = toolenv.StatusBadRequest
		} else {
			res := o.call(ctx, ep, Call{Name: call.Name, Args: call.Args})
			if o.Canceled {
				return o
			}
			o.Predicted = append(o.Predicted, SplitLabel(toolNamed(ep.Session, call.Name), call))
			obs = truncateRunes(Observation(res), maxObs)
			st.Status, st.Source = res.Status, res.Source
		}
		st.Observation = obs
		o.Trajectory.Steps = append(o.Trajectory.Steps, st)
		if written == "" {
			written = fmt.Sprintf("Action: %s\nAction Input: %s", call.Name, step.InputRaw)
		}
		msgs = append(msgs, llm.Message{Role: "assistant", Content: cutObservation(written)}, llm.Message{Role: "user", Content: "Observation: " + obs})
	}
	o.OutOfBudget = true
	return o
}

// reactStep reads a turn from the model's text, or from a native tool
// call when the model made one instead.
func reactStep(msg llm.Message) (parse.Step, error) {
	if len(msg.ToolCalls) > 0 {
		tc := msg.ToolCalls[0]
		args, problem := parse.ArgsFromString(tc.Function.Arguments)
		return parse.Step{Thought: strings.TrimSpace(msg.Content), Action: tc.Function.Name, Input: args, InputRaw: tc.Function.Arguments, InputProblem: problem}, nil
	}
	return parse.ReAct(msg.Content)
}

// cutObservation drops an imagined observation from the model's text.
func cutObservation(s string) string {
	if i := strings.Index(s, "\nObservation:"); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// ReActSystem is the ReAct system prompt listing tools.
func ReActSystem(tools []*toolenv.Tool) string {
	var list strings.Builder
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
		params := "{}"
		if t.Input != nil {
			if b, err := json.Marshal(t.Input); err == nil {
				params = string(b)
			}
		}
		fmt.Fprintf(&list, "%s: %s\n  arguments (JSON Schema): %s\n", t.Name, oneLine(toolDescription(t)), params)
	}
	return fill(promptReAct.Text, map[string]string{"tools": strings.TrimRight(list.String(), "\n"), "tool_names": strings.Join(names, ", ")})
}

func toolDescription(t *toolenv.Tool) string {
	if d := t.Meta["function_description"]; d != "" {
		return d
	}
	return t.Description
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
