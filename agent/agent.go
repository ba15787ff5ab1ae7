package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/llm"
)

// Agent runs one task.
type Agent interface {
	// Name is the agent's name in reports ("react", "dfsdt").
	Name() string
	// Run runs ep to its end and returns what happened. It never returns
	// nil: a model that cannot be reached ends the episode with
	// Trajectory.Error set. Only a canceled ctx leaves it unfinished
	// (Outcome.Canceled).
	Run(ctx context.Context, ep *Episode) *Outcome
}

// Episode is one run of one task.
type Episode struct {
	Task    *toolenv.Task
	Session Session
	Model   Model
	// ModelName is sent as the request's model.
	ModelName string
	Run       int
	// Seed is sent with every request and seeds any choice the agent
	// makes (which in-context examples to show).
	Seed int64
	// Temperature is sent with every request; nil means the server's
	// default.
	Temperature *float64
	// MaxTokens bounds each completion; 0 means the server's default.
	MaxTokens int
	// Collection is the task's collection (its kind decides prompt
	// styles).
	Collection *toolenv.Collection
	// Examples are solved tasks of the same collection to show as
	// in-context examples (direct, NESTful style).
	Examples []*toolenv.Task
}

// Outcome is what an episode produced.
type Outcome struct {
	Trajectory *toolenv.Trajectory `json:"trajectory"`
	// Predicted is the call sequence the agent produced (direct: the
	// parsed sequence, executed or not; other agents: the calls made).
	Predicted []toolenv.GoldCall `json:"predicted,omitempty"`
	// Parsed is false when the direct agent could not read any call from
	// the model's output (an instruction_alignment_failure); ParseError
	// says why. Malformed counts items read that were not calls.
	Parsed     bool   `json:"parsed"`
	ParseError string `json:"parse_error,omitempty"`
	Malformed  int    `json:"malformed,omitempty"`
	// Results are the calls' results in order, for answer checking.
	Results []Result `json:"results,omitempty"`
	// InfraFailures counts the calls the environment failed rather than
	// the agent (toolenv.InfraFailure: an upstream or model endpoint
	// down, a timeout of toolenv's own; not an injected fault), and
	// InfraFailure is the first one's reason: the episode's failure may
	// not be the agent's.
	InfraFailures int    `json:"infra_failures,omitempty"`
	InfraFailure  string `json:"infra_failure,omitempty"`
	// Loops is the number of think-act-observe iterations (react) or
	// model calls (cot, dfsdt). OutOfBudget says the budget ran out.
	Loops       int  `json:"loops,omitempty"`
	OutOfBudget bool `json:"out_of_budget,omitempty"`
	// FinalAnswerRaw is what the agent's final step carried: the Finish
	// call's arguments as written (ToolBench agents) or the Final Answer
	// text (react).
	FinalAnswerRaw string `json:"final_answer_raw,omitempty"`
	// Tree is the DFSDT search tree.
	Tree []TreeNode `json:"tree,omitempty"`
	// EarlierTries are the chains a CoT@N run abandoned before its last
	// one (the trajectory holds the last, as StableToolBench converts it).
	EarlierTries [][]toolenv.Step `json:"earlier_tries,omitempty"`
	// Canceled says the episode was interrupted and is not a result.
	Canceled bool `json:"-"`
}

// TreeNode is one node of a DFSDT search tree, flattened: Parent is the
// index of its parent node (-1 for children of the root).
type TreeNode struct {
	Parent      int    `json:"parent"`
	Type        string `json:"type"` // "Thought", "Action", "Action Input"
	Description string `json:"description"`
	Observation string `json:"observation,omitempty"`
	Code        int    `json:"code,omitempty"`
	Pruned      bool   `json:"pruned,omitempty"`
	Terminal    bool   `json:"terminal,omitempty"`
}

// newOutcome starts an outcome for ep.
func newOutcome(name string, ep *Episode) *Outcome {
	return &Outcome{Trajectory: &toolenv.Trajectory{TaskID: ep.Task.ID, Agent: name, Model: ep.ModelName, Run: ep.Run, Steps: []toolenv.Step{}}}
}

// chat sends req through ep's model, counting the call and its tokens.
// A failure is recorded on the trajectory and returned.
func (o *Outcome) chat(ctx context.Context, ep *Episode, req *llm.Request) (*llm.Response, error) {
	req.Model = ep.ModelName
	if req.Seed == nil {
		req.Seed = llm.Int(ep.Seed)
	}
	if req.Temperature == nil {
		req.Temperature = ep.Temperature
	}
	if req.MaxTokens == 0 {
		req.MaxTokens = ep.MaxTokens
	}
	if ep.Model == nil {
		err := errors.New("no model is configured for this agent (pass --model and --model-name)")
		o.Trajectory.Error = "model: " + err.Error()
		return nil, err
	}
	resp, err := ep.Model.Chat(ctx, req)
	o.Trajectory.Counts.LLMCalls++
	if err != nil {
		if ctx.Err() != nil {
			o.Canceled = true
		}
		o.Trajectory.Error = "model: " + err.Error()
		return nil, err
	}
	o.Trajectory.Counts.PromptTokens += resp.Usage.PromptTokens
	o.Trajectory.Counts.CompletionTokens += resp.Usage.CompletionTokens
	return resp, nil
}

// call runs c in the episode's session and records its result.
func (o *Outcome) call(ctx context.Context, ep *Episode, c Call) *toolenv.Result {
	c.Label = strings.Trim(c.Label, "$")
	res := ep.Session.Call(ctx, c)
	if ctx.Err() != nil && (res.Status == toolenv.StatusCanceled || res.Status == toolenv.StatusTimeout) {
		o.Canceled = true
	}
	o.Trajectory.Counts.ToolCalls++
	o.Results = append(o.Results, Result{Name: c.Name, Label: c.Label, Status: res.Status, Body: res.Body, Error: res.Error})
	if why, _ := toolenv.InfraFailure(res); why != "" && !o.Canceled {
		o.InfraFailures++
		if o.InfraFailure == "" {
			o.InfraFailure = why
		}
	}
	return res
}

// Observation renders a result as the text a model sees: the body when
// the call succeeded, else the error with its hint and the problems of
// each argument.
func Observation(res *toolenv.Result) string {
	if res.OK() {
		return string(res.Body)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Error (%s): %s", res.Status, res.Error)
	for _, p := range res.Problems {
		b.WriteString("\n- ")
		if p.Param != "" {
			b.WriteString(p.Param + ": ")
		}
		b.WriteString(p.Message)
		if p.Expected != "" {
			b.WriteString(" (expected " + p.Expected + ")")
		}
	}
	if res.Hint != "" {
		b.WriteString("\nHint: " + res.Hint)
	}
	return b.String()
}

// truncateRunes cuts s to its first n characters and appends "..." when
// it is longer, as ToolBench cuts observations (Python slices by
// character).
func truncateRunes(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos] + "..."
		}
		i++
	}
	return s
}

// truncate cuts s to at most n bytes (on a rune boundary), marking the cut.
func truncate(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}
