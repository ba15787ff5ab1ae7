package episode

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// The action types of Action.Type.
const (
	// ActionCallTool is one tool call: OpenEnv's CallToolAction
	// ({"type": "call_tool", "tool_name": ..., "arguments": {...}}).
	ActionCallTool = "call_tool"
	// ActionToolCalls is several tool calls in one step, each
	// {"name", "arguments", "label"}, or OpenAI's tool_calls as a chat
	// completion returns them.
	ActionToolCalls = "tool_calls"
	// ActionListTools lists the episode's tools: OpenEnv's
	// ListToolsAction. It is not a step.
	ActionListTools = "list_tools"
	// ActionFinalAnswer ends the episode with an answer (as calling the
	// submit_answer tool does).
	ActionFinalAnswer = "final_answer"
)

// SubmitTool is the tool that ends an episode with its answer. It is
// offered with the task's tools.
const SubmitTool = "submit_answer"

// Action is what an agent does in one step.
type Action struct {
	// Type is one of the Action* constants.
	Type string `json:"type"`
	// Calls are the tool calls of a call_tool or tool_calls action.
	Calls []Call `json:"calls,omitempty"`
	// Answer is a final_answer's answer (also a call to SubmitTool).
	Answer *Answer `json:"answer,omitempty"`
	// RequestID is the client's id of the request (OpenEnv's
	// StepRequest.request_id): a step sent again with the id of a step
	// already taken is not taken again; it gets that step's answer.
	RequestID string `json:"-"`
}

// sum is a digest of what the action does, to tell a step resent with
// its request id from another action sent with the same id.
func (a *Action) sum() string {
	b, _ := json.Marshal(struct {
		Type   string  `json:"type"`
		Calls  []Call  `json:"calls,omitempty"`
		Answer *Answer `json:"answer,omitempty"`
	}{a.Type, a.Calls, a.Answer})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:12])
}

// Call is one tool call of an action.
type Call struct {
	// ID is the caller's id for the call (OpenAI's tool_call_id), echoed
	// in its observation.
	ID   string         `json:"id,omitempty"`
	Name string         `json:"name"`
	Args map[string]any `json:"arguments"`
	// Label names the call's output for later calls (NESTful; the
	// SLOT/SEL tools store their results under it).
	Label string `json:"label,omitempty"`
}

// Answer is a final answer. For a task with a gold answer (NL2SQL) it is
// the results stored under Labels, side by side, or the table Value; with
// neither, the evaluation harness's rule: the results stored under the
// task's answer labels, else the last successful result. For other tasks
// it is the Text given to the user.
type Answer struct {
	Labels []string        `json:"labels,omitempty"`
	Value  json.RawMessage `json:"value,omitempty"`
	Text   string          `json:"text,omitempty"`
}

// ParseAction reads an action from JSON. It accepts OpenEnv's MCP actions
// (call_tool, list_tools; a missing type means call_tool, as in OpenEnv),
// tool_calls with several calls, and final_answer; a call_tool of
// submit_answer is a final_answer. Anything else is an error saying what
// was expected.
func ParseAction(data []byte) (*Action, error) {
	raw, err := splitObject(data)
	if err != nil || raw == nil {
		return nil, invalid("the action is not a JSON object", `send {"type": "call_tool", "tool_name": "...", "arguments": {...}}, {"type": "tool_calls", "calls": [...]}, {"type": "final_answer", "answer": ...} or {"type": "list_tools"}`)
	}
	typ := ActionCallTool
	if t, ok := raw["type"]; ok {
		if err := json.Unmarshal(t, &typ); err != nil {
			return nil, invalid("the action's type is not a string", "type is call_tool, tool_calls, final_answer or list_tools")
		}
	}
	allowed := func(keys ...string) error {
		for k := range raw {
			if k == "type" || k == "metadata" { // metadata: OpenEnv's Action base field
				continue
			}
			ok := false
			for _, a := range keys {
				ok = ok || k == a
			}
			if !ok {
				return invalid(fmt.Sprintf("a %s action has no field %q", typ, k), fmt.Sprintf("its fields are %s", strings.Join(keys, ", ")))
			}
		}
		return nil
	}
	switch typ {
	case ActionListTools:
		if err := allowed(); err != nil {
			return nil, err
		}
		return &Action{Type: ActionListTools}, nil
	case ActionCallTool:
		if err := allowed("tool_name", "arguments", "label", "id"); err != nil {
			return nil, err
		}
		var c struct {
			Name  *string         `json:"tool_name"`
			Args  json.RawMessage `json:"arguments"`
			Label string          `json:"label"`
			ID    string          `json:"id"`
		}
		// Field by field from the members already split: the arguments
		// (all but a few bytes of a large action) are not scanned again.
		c.Args = raw["arguments"]
		for _, f := range []struct {
			name string
			dst  any
		}{{"tool_name", &c.Name}, {"label", &c.Label}, {"id", &c.ID}} {
			if v, ok := raw[f.name]; ok {
				if err := json.Unmarshal(v, f.dst); err != nil {
					return nil, invalid("call_tool: "+f.name+": "+err.Error(), "tool_name is a string, arguments an object, label a string")
				}
			}
		}
		if c.Name == nil || *c.Name == "" {
			return nil, invalid("call_tool has no tool_name", "name the tool to call, as list_tools lists it")
		}
		args, err := parseArgs(*c.Name, c.Args)
		if err != nil {
			return nil, err
		}
		if *c.Name == SubmitTool {
			ans, err := answerFromArgs(args)
			if err != nil {
				return nil, err
			}
			return &Action{Type: ActionFinalAnswer, Answer: ans}, nil
		}
		return &Action{Type: ActionCallTool, Calls: []Call{{ID: c.ID, Name: *c.Name, Args: args, Label: strings.Trim(c.Label, "$")}}}, nil
	case ActionToolCalls:
		if err := allowed("calls", "tool_calls"); err != nil {
			return nil, err
		}
		return parseToolCalls(raw)
	case ActionFinalAnswer, SubmitTool:
		if err := allowed("answer", "labels", "value", "text"); err != nil {
			return nil, err
		}
		args := map[string]any{}
		for k, v := range raw {
			if k == "type" || k == "metadata" {
				continue
			}
			var x any
			if err := decodeUseNumber(v, &x); err != nil {
				return nil, invalid("final_answer: "+k+": "+err.Error(), "")
			}
			args[k] = x
		}
		ans, err := answerFromArgs(args)
		if err != nil {
			return nil, err
		}
		return &Action{Type: ActionFinalAnswer, Answer: ans}, nil
	}
	return nil, invalid(fmt.Sprintf("unknown action type %q", typ), "type is call_tool, tool_calls, final_answer or list_tools")
}

func parseToolCalls(raw map[string]json.RawMessage) (*Action, error) {
	a := &Action{Type: ActionToolCalls}
	if b, ok := raw["calls"]; ok {
		var calls []struct {
			ID       string          `json:"id"`
			Name     string          `json:"name"`
			ToolName string          `json:"tool_name"`
			Args     json.RawMessage `json:"arguments"`
			Label    string          `json:"label"`
		}
		if err := decodeUseNumber(b, &calls); err != nil {
			return nil, invalid("tool_calls: calls is not a list of calls", `each call is {"name": "...", "arguments": {...}, "label": "..."}`)
		}
		for i, c := range calls {
			name := c.Name
			if name == "" {
				name = c.ToolName
			}
			if name == "" {
				return nil, invalid(fmt.Sprintf("tool_calls: call %d has no name", i+1), "name the tool to call, as list_tools lists it")
			}
			args, err := parseArgs(name, c.Args)
			if err != nil {
				return nil, err
			}
			a.Calls = append(a.Calls, Call{ID: c.ID, Name: name, Args: args, Label: strings.Trim(c.Label, "$")})
		}
	}
	if b, ok := raw["tool_calls"]; ok {
		var calls []struct {
			ID       string `json:"id"`
			Function struct {
				Name string          `json:"name"`
				Args json.RawMessage `json:"arguments"`
			} `json:"function"`
		}
		if err := decodeUseNumber(b, &calls); err != nil {
			return nil, invalid("tool_calls: tool_calls is not a list of OpenAI tool calls", `each is {"id": "...", "type": "function", "function": {"name": "...", "arguments": "{...}"}}`)
		}
		for i, c := range calls {
			if c.Function.Name == "" {
				return nil, invalid(fmt.Sprintf("tool_calls: tool call %d has no function name", i+1), "")
			}
			args := c.Function.Args
			// OpenAI writes the arguments as a JSON string holding the object.
			var s string
			if len(args) > 0 && args[0] == '"' && json.Unmarshal(args, &s) == nil {
				args = json.RawMessage(s)
			}
			parsed, err := parseArgs(c.Function.Name, args)
			if err != nil {
				return nil, err
			}
			a.Calls = append(a.Calls, Call{ID: c.ID, Name: c.Function.Name, Args: parsed})
		}
	}
	if len(a.Calls) == 0 {
		return nil, invalid("tool_calls holds no call", `give "calls": [{"name": ..., "arguments": {...}}] (or OpenAI's "tool_calls"); to end the episode send a final_answer`)
	}
	for _, c := range a.Calls {
		if c.Name == SubmitTool {
			if len(a.Calls) > 1 {
				return nil, invalid("submit_answer is called with other tools in one step", "make the calls, then submit the answer in a step of its own")
			}
			ans, err := answerFromArgs(c.Args)
			if err != nil {
				return nil, err
			}
			return &Action{Type: ActionFinalAnswer, Answer: ans}, nil
		}
	}
	return a, nil
}

// splitObject reads a JSON object's members without decoding their
// values (toolenv.SplitJSONObject), accepting what decodeUseNumber into a
// map[string]json.RawMessage accepts: after the object, spaces and then
// the end, or a closing bracket (json.Decoder.More's rule).
func splitObject(data []byte) (map[string]json.RawMessage, error) {
	raw, end, err := toolenv.SplitJSONObject(data)
	if err != nil {
		return nil, err
	}
	rest := bytes.TrimLeft(data[end:], " \t\r\n")
	if len(rest) > 0 && rest[0] != '}' && rest[0] != ']' {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return raw, nil
}

// parseArgs reads a call's arguments: an object (absent means none).
func parseArgs(tool string, raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	// toolenv's own parser (encoding/json's types, no reflection), as
	// the other front-ends parse arguments: a step's cost per byte.
	// Objects and arrays are kept as text until the step knows the
	// tool: it decodes those the tool's schema describes
	// (toolenv.DecodeDescribed), and the others, passed on as given,
	// are never decoded into maps.
	args, err := toolenv.ParseArgsDeferred(raw)
	if err != nil {
		return nil, invalid(fmt.Sprintf("the arguments of %s are not a JSON object", tool), `write them as an object, e.g. {"city": "Paris"}`)
	}
	return args, nil
}

// answerFromArgs reads submit_answer's arguments: answer (a table, rows,
// a value or a text), labels (a label or a list of them), value, text.
func answerFromArgs(args map[string]any) (*Answer, error) {
	args = toolenv.DecodedArgs(args) // parseArgs keeps objects and arrays as text
	a := &Answer{}
	for k, v := range args {
		switch k {
		case "labels":
			switch x := v.(type) {
			case string:
				a.Labels = []string{strings.Trim(x, "$")}
			case []any:
				for _, e := range x {
					s, ok := e.(string)
					if !ok {
						return nil, invalid("submit_answer: labels holds a value that is not a label", `labels is a list of the labels of your results, e.g. ["EYES"]`)
					}
					a.Labels = append(a.Labels, strings.Trim(s, "$"))
				}
			default:
				return nil, invalid("submit_answer: labels is not a list of labels", `labels is a list of the labels of your results, e.g. ["EYES"]`)
			}
		case "text", "final_answer":
			s, ok := v.(string)
			if !ok {
				return nil, invalid("submit_answer: "+k+" is not a string", "give the answer to the user as text")
			}
			a.Text = s
		case "answer", "value":
			if s, ok := v.(string); ok && k == "answer" {
				a.Text = s
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, invalid("submit_answer: "+k+": "+err.Error(), "")
			}
			a.Value = b
		case "return_type":
			// ToolBench's Finish(return_type, final_answer).
		default:
			return nil, invalid(fmt.Sprintf("submit_answer has no argument %q", k), "its arguments are answer (a table {columns, rows}, a list of rows, a value or a text), labels (the labels of your results that answer) and text")
		}
	}
	return a, nil
}

func decodeUseNumber(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}

// submitTool is the definition of SubmitTool offered with the task's
// tools.
func submitTool(hasGoldAnswer bool) *toolenv.Tool {
	desc := "End the episode with your final answer. The episode's reward is given in the result."
	var in *toolenv.Schema
	if hasGoldAnswer {
		desc += " Give the labels of the results that answer the question (side by side, in order), or the answer itself as a table {\"columns\": [...], \"rows\": [[...]]}, a list of rows or a single value. With neither, your last successful result is the answer."
		in = mustSchema(`{"type":"object","properties":{"labels":{"type":"array","items":{"type":"string"},"description":"labels of your results that answer the question, in order"},"answer":{"description":"the answer: a table {\"columns\": [...], \"rows\": [[...]]}, a list of rows, or a single value"}}}`)
	} else {
		in = mustSchema(`{"type":"object","properties":{"answer":{"type":"string","description":"your final answer to the user"}},"required":["answer"]}`)
		desc += " Give your answer to the user as text."
	}
	return &toolenv.Tool{Name: SubmitTool, Description: desc, Input: in}
}

func mustSchema(s string) *toolenv.Schema {
	var sc toolenv.Schema
	if err := json.Unmarshal([]byte(s), &sc); err != nil {
		panic(err)
	}
	return &sc
}
