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

	TaskID       string `json:"task_id,omitempty"`
	Collection   string `json:"collection,omitempty"`
	Query        string `json:"query,omitempty"`
	Instructions string `json:"instructions,omitempty"`
	ToolFormat   string `json:"tool_format,omitempty"`
	MaxSteps     int    `json:"max_steps,omitempty"`
	// Tools are the tools offered as MCP tool definitions (a reset with
	// tool_format mcp) or OpenEnv's Tool (list_tools); OpenAITools as
	// OpenAI function JSON (a reset with tool_format openai, the
	// default), ready for a chat completion's tools. Two keys, so that
	// OpenEnv's MCPToolClient, which reads any observation holding
	// "tools" as a tool list, reads tools by their names.
	Tools       json.RawMessage `json:"tools,omitempty"`
	OpenAITools json.RawMessage `json:"openai_tools,omitempty"`

	ToolName string            `json:"tool_name,omitempty"`
	Result   *CallResult       `json:"result,omitempty"`
	Error    *ToolError        `json:"error,omitempty"`
	Results  []CallObservation `json:"results,omitempty"`

	// Answer echoes a final answer's text; Outcome measures the episode
	// (on its last step).
	Outcome *Outcome `json:"outcome,omitempty"`

	// Metadata is what a front-end adds for its clients (OpenEnv: the
	// step's info, truncated, the episode's id and task), as OpenEnv's
	// Observation.metadata.
	Metadata map[string]any `json:"metadata,omitempty"`
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
	// InfraFailure is why the environment, not the agent, failed the
	// call (see infra.go); Injected says a fault injected on purpose
	// failed it (the agent's to handle).
	InfraFailure string `json:"infra_failure,omitempty"`
	Injected     bool   `json:"injected,omitempty"`
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
	// InfraFailure is why the environment failed this step's first call
	// so failed (see infra.go): the step's reward does not measure the
	// agent. InfraFailures counts the steps so marked so far.
	InfraFailure  string `json:"infra_failure,omitempty"`
	InfraFailures int    `json:"infra_failures,omitempty"`
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
		Reward: ep.spec.Options.Reward, SuccessKind: ep.success, Why: ep.successWhy, Outcome: ep.outcome, ClientEpisodeID: ep.spec.Options.EpisodeID,
		InfraFailures: ep.infraSteps}
	if len(ep.failed) > 0 {
		in.Failed = make(map[string]int, len(ep.failed))
		for k, v := range ep.failed {
			in.Failed[k] = v
		}
	}
	return in
}

// infoAt is the info of the episode as it stood after its step k: what
// that step answered.
func (ep *Episode) infoAt(k int) *Info {
	in := &Info{EpisodeID: ep.id, Step: k, MaxSteps: ep.maxSteps, Reward: ep.spec.Options.Reward, SuccessKind: ep.success,
		Why: ep.successWhy, ClientEpisodeID: ep.spec.Options.EpisodeID}
	for _, h := range ep.history[:k] {
		in.Return += h.Reward
		for _, c := range h.Calls {
			in.Calls++
			if c.Status != toolenv.StatusOK {
				if in.Failed == nil {
					in.Failed = map[string]int{}
				}
				in.Failed[string(c.Status)]++
			}
		}
		if h.Infra != "" {
			in.InfraFailures++
		}
		if h.Done {
			in.Outcome = h.Outcome
		}
	}
	if k > 0 {
		in.InfraFailure = ep.history[k-1].Infra
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
	obs := &Observation{EpisodeID: ep.id, TaskID: ep.task.ID, Collection: ep.coll.Name, Query: ep.Query(),
		Instructions: ep.info.instructions, ToolFormat: format, MaxSteps: ep.maxSteps}
	// build made this rendering, so it has no error here.
	tools, _ := ep.info.resetTools(format)
	if format == FormatMCP {
		obs.Tools = tools
	} else {
		obs.OpenAITools = tools
	}
	return &StepResult{Observation: obs, Info: ep.infoNow()}
}

func (ep *Episode) listResult() (*StepResult, error) {
	tools, err := ep.info.listedTools()
	if err != nil {
		return nil, &toolenv.Error{Status: toolenv.StatusInternal, Message: fmt.Sprintf("the tools of task %s do not render: %v", ep.task.ID, err)}
	}
	return &StepResult{Observation: &Observation{EpisodeID: ep.id, Step: len(ep.history), Tools: tools}, Done: ep.done, Truncated: ep.truncated, Info: ep.infoNow()}, nil
}

// stepResult is what step k answered (it is rebuilt from the step's
// entry, so that a resent request gets the same answer).
func (ep *Episode) stepResult(k int) *StepResult {
	st := &ep.history[k-1]
	r := st.Reward
	obs := &Observation{EpisodeID: ep.id, Step: k}
	sr := &StepResult{Observation: obs, Reward: &r, Done: st.Done, Truncated: st.Truncated, Info: ep.infoAt(k)}
	for i := range st.Calls {
		c := &st.Calls[i]
		co := callObservation(c)
		if st.Type == ActionCallTool {
			obs.ToolName, obs.Result, obs.Error = co.ToolName, co.Result, co.Error
		} else {
			obs.Results = append(obs.Results, co)
		}
		sr.Results = append(sr.Results, &toolenv.Result{Status: c.Status, Body: c.Body, Error: c.Error, Hint: c.Hint, Faults: c.Faults})
		sr.Calls = append(sr.Calls, Call{ID: c.ID, Name: c.Name, Args: c.Args, Label: c.Label})
	}
	if st.Done {
		obs.Outcome = st.Outcome
	}
	if st.Type == ActionFinalAnswer {
		// As the result of a call of submit_answer, which OpenEnv's
		// MCPToolClient.call_tool returns the data of.
		data, _ := json.Marshal(map[string]any{"reward": r, "return": sr.Info.Return, "done": st.Done, "outcome": st.Outcome})
		obs.ToolName = SubmitTool
		obs.Result = &CallResult{Content: []Content{{Type: "text", Text: fmt.Sprintf("The episode is done after %d steps: reward %g.", k, r)}},
			StructuredContent: data, Data: data, Status: toolenv.StatusOK}
	}
	return sr
}

func callObservation(c *callEntry) CallObservation {
	cr := &CallResult{Status: c.Status, Label: c.Label, Faults: c.Faults, IsError: c.Status != toolenv.StatusOK, InfraFailure: c.Infra, Injected: c.Injected}
	co := CallObservation{ID: c.ID, ToolName: c.Name, Result: cr}
	if c.Status == toolenv.StatusOK {
		body := bytes.TrimSpace(c.Body)
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
	switch c.Status {
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
