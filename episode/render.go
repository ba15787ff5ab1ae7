package episode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/openai"
)

// StepResult is what a reset or a step returns: the observation, the
// step's reward, whether the episode is done (and truncated at its step
// limit), and info.
type StepResult struct {
	Observation *Observation `json:"observation"`
	// Reward is the step's reward: minus its costs, plus the success
	// measure on the last step. Nil after a reset and a list_tools.
	Reward    *float64 `json:"reward"`
	Done      bool     `json:"done"`
	Truncated bool     `json:"truncated"`
	Info      *Info    `json:"info"`
	// Results are the pipeline's results of the step's calls, in order
	// (for front-ends that render them their own way).
	Results []*toolenv.Result `json:"-"`
	// Calls are the step's calls as the episode ran them.
	Calls []Call `json:"-"`
}

// Observation is what the agent sees. A reset's holds the task; a
// call_tool's is OpenEnv's CallToolObservation (tool_name, result,
// error); a tool_calls' holds one such per call (results); a
// list_tools' holds the tools (as OpenEnv's ListToolsObservation).
type Observation struct {
	EpisodeID string `json:"episode_id"`
	Step      int    `json:"step"`

	TaskID       string          `json:"task_id,omitempty"`
	Collection   string          `json:"collection,omitempty"`
	Query        string          `json:"query,omitempty"`
	Instructions string          `json:"instructions,omitempty"`
	ToolFormat   string          `json:"tool_format,omitempty"`
	MaxSteps     int             `json:"max_steps,omitempty"`
	Tools        json.RawMessage `json:"tools,omitempty"`

	ToolName string            `json:"tool_name,omitempty"`
	Result   *CallResult       `json:"result,omitempty"`
	Error    *ToolError        `json:"error,omitempty"`
	Results  []CallObservation `json:"results,omitempty"`

	// Answer echoes a final answer's text; Outcome measures the episode
	// (on its last step).
	Outcome *Outcome `json:"outcome,omitempty"`
}

// CallObservation is one call's observation: OpenEnv's
// CallToolObservation, with the caller's call id.
type CallObservation struct {
	ID       string      `json:"id,omitempty"`
	ToolName string      `json:"tool_name"`
	Result   *CallResult `json:"result"`
	Error    *ToolError  `json:"error"`
}

// CallResult is a call's result as MCP writes one (content, structured
// content, isError) plus its data: the response body, which OpenEnv's
// MCPToolClient.call_tool returns.
type CallResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structured_content,omitempty"`
	IsError           bool            `json:"is_error"`
	Data              json.RawMessage `json:"data,omitempty"`
	Status            toolenv.Status  `json:"status"`
	Label             string          `json:"label,omitempty"`
	Faults            []string        `json:"faults,omitempty"`
}

// Content is one text content item.
type Content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ToolError is OpenEnv's ToolError: the category of a failed call
// (execution_error, invalid_args, tool_not_found, timeout) and its
// message.
type ToolError struct {
	ErrorType string `json:"error_type"`
	Message   string `json:"message"`
}

// Info is what a step says beyond its observation: the metrics so far.
type Info struct {
	EpisodeID string `json:"episode_id"`
	Step      int    `json:"step"`
	MaxSteps  int    `json:"max_steps"`
	// Return is the sum of the rewards so far.
	Return float64 `json:"return"`
	// Calls counts the tool calls so far, Failed the failed ones by
	// status.
	Calls  int            `json:"calls"`
	Failed map[string]int `json:"failed,omitempty"`
	// Reward is the reward definition in force, SuccessKind the success
	// measure it resolved to and Why why.
	Reward      Reward `json:"reward"`
	SuccessKind string `json:"success_kind"`
	Why         string `json:"success_why,omitempty"`
	// Outcome measures the episode, on its last step.
	Outcome *Outcome `json:"outcome,omitempty"`
	// ClientEpisodeID is the client's own name for the episode.
	ClientEpisodeID string `json:"client_episode_id,omitempty"`
}

// State is an episode's state: OpenEnv's State (episode_id, step_count)
// and toolenv's.
type State struct {
	EpisodeID       string   `json:"episode_id"`
	StepCount       int      `json:"step_count"`
	Done            bool     `json:"done"`
	Truncated       bool     `json:"truncated"`
	Collection      string   `json:"collection"`
	TaskID          string   `json:"task_id"`
	Seed            int64    `json:"seed"`
	Return          float64  `json:"return"`
	Calls           int      `json:"calls"`
	MaxSteps        int      `json:"max_steps"`
	Reward          Reward   `json:"reward"`
	SuccessKind     string   `json:"success_kind"`
	Outcome         *Outcome `json:"outcome,omitempty"`
	ClientEpisodeID string   `json:"client_episode_id,omitempty"`
}

func (ep *Episode) infoNow() *Info {
	in := &Info{EpisodeID: ep.id, Step: len(ep.history), MaxSteps: ep.maxSteps, Return: ep.ret, Calls: len(ep.calls),
		Reward: ep.spec.Options.Reward, SuccessKind: ep.success, Why: ep.successWhy, Outcome: ep.outcome, ClientEpisodeID: ep.spec.Options.EpisodeID}
	if len(ep.failed) > 0 {
		in.Failed = make(map[string]int, len(ep.failed))
		for k, v := range ep.failed {
			in.Failed[k] = v
		}
	}
	return in
}

func (ep *Episode) state() *State {
	return &State{EpisodeID: ep.id, StepCount: len(ep.history), Done: ep.done, Truncated: ep.truncated, Collection: ep.coll.Name,
		TaskID: ep.task.ID, Seed: ep.spec.Seed, Return: ep.ret, Calls: len(ep.calls), MaxSteps: ep.maxSteps,
		Reward: ep.spec.Options.Reward, SuccessKind: ep.success, Outcome: ep.outcome, ClientEpisodeID: ep.spec.Options.EpisodeID}
}

func (ep *Episode) resetResult() *StepResult {
	format := ep.spec.Options.ToolFormat
	if format == "" {
		format = FormatOpenAI
	}
	tools := ep.info.openai
	if format == FormatMCP {
		tools = ep.info.mcp
	}
	obs := &Observation{EpisodeID: ep.id, TaskID: ep.task.ID, Collection: ep.coll.Name, Query: ep.Query(),
		Instructions: ep.info.instructions, ToolFormat: format, MaxSteps: ep.maxSteps, Tools: tools}
	return &StepResult{Observation: obs, Info: ep.infoNow()}
}

func (ep *Episode) listResult() *StepResult {
	return &StepResult{Observation: &Observation{EpisodeID: ep.id, Step: len(ep.history), Tools: ep.info.listed}, Done: ep.done, Truncated: ep.truncated, Info: ep.infoNow()}
}

func (ep *Episode) stepResult(st *stepEntry, a *Action, results []*toolenv.Result) *StepResult {
	r := st.Reward
	obs := &Observation{EpisodeID: ep.id, Step: len(ep.history)}
	for i, c := range st.Calls {
		co := callObservation(&c, results[i])
		if a.Type == ActionCallTool {
			obs.ToolName, obs.Result, obs.Error = co.ToolName, co.Result, co.Error
		} else {
			obs.Results = append(obs.Results, co)
		}
	}
	if st.Done {
		obs.Outcome = st.Outcome
	}
	return &StepResult{Observation: obs, Reward: &r, Done: st.Done, Truncated: st.Truncated, Info: ep.infoNow(), Results: results, Calls: a.Calls}
}

func callObservation(c *callEntry, res *toolenv.Result) CallObservation {
	cr := &CallResult{Status: c.Status, Label: c.Label, Faults: c.Faults, IsError: c.Status != toolenv.StatusOK}
	co := CallObservation{ID: c.ID, ToolName: c.Name, Result: cr}
	if res.OK() {
		body := bytes.TrimSpace(res.Body)
		cr.Content = []Content{{Type: "text", Text: bodyText(body)}}
		if len(body) > 0 {
			cr.Data = json.RawMessage(body)
			if body[0] == '{' {
				cr.StructuredContent = cr.Data
			}
		}
		return co
	}
	cr.Content = []Content{{Type: "text", Text: c.Text}}
	typ := "execution_error"
	switch res.Status {
	case toolenv.StatusInvalidArguments, toolenv.StatusBadRequest:
		typ = "invalid_args"
	case toolenv.StatusUnknownTool:
		typ = "tool_not_found"
	case toolenv.StatusTimeout:
		typ = "timeout"
	}
	co.Error = &ToolError{ErrorType: typ, Message: c.Text}
	return co
}

// bodyText is a body as text: a JSON string as the string, other JSON
// as written.
func bodyText(body []byte) string {
	if len(body) > 0 && body[0] == '"' {
		var s string
		if json.Unmarshal(body, &s) == nil {
			return s
		}
	}
	if len(body) == 0 {
		return "null"
	}
	return string(body)
}

func renderOpenAI(tools []*toolenv.Tool) (json.RawMessage, error) {
	return toolenv.MarshalJSONNoHTML(openai.FromTools(tools))
}

// renderMCP writes tools as MCP tool definitions; schemaKey is
// "inputSchema" (MCP) or "input_schema" (OpenEnv's Tool).
func renderMCP(tools []*toolenv.Tool, schemaKey string) (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, t := range tools {
		if i > 0 {
			b.WriteByte(',')
		}
		in := t.Input
		if in == nil {
			in = toolenv.ObjectSchema()
		}
		schema, err := in.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		name, _ := toolenv.MarshalJSONNoHTML(t.Name)
		desc, _ := toolenv.MarshalJSONNoHTML(openai.Description(t))
		b.WriteString(`{"name":`)
		b.Write(bytes.TrimSpace(name))
		b.WriteString(`,"description":`)
		b.Write(bytes.TrimSpace(desc))
		b.WriteString(`,"` + schemaKey + `":`)
		b.Write(schema)
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// instructions tell the agent how an episode works.
func instructions(c *toolenv.Collection, t *toolenv.Task, hasAnswer bool) string {
	var b strings.Builder
	b.WriteString("Answer the user's question with the tools offered. Each step is one tool call, or several; their results are your next observation. ")
	if c.Policy.Sessions {
		b.WriteString("Give each call a label: its result is stored under it, and later calls use it as \"$LABEL$\" (the question's data starts as \"$starting_table$\" when the tools say so). ")
	}
	if hasAnswer {
		b.WriteString("When you have the answer, call submit_answer with the labels of the results that answer (or the answer itself); the episode ends and its reward is 1 when the answer is right.")
	} else {
		b.WriteString("When you are done, call submit_answer with your answer to the user; the episode ends with its reward.")
	}
	if t.Evidence != "" {
		b.WriteString("\nEvidence: " + t.Evidence)
	}
	return b.String()
}
