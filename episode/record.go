package episode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/openai"
	"github.com/toolenv/toolenv/store/epstore"
)

// Record is an episode as a trajectory: everything needed to train on it
// offline or to audit its reward, one JSON object (a line of the JSONL
// export).
type Record struct {
	EpisodeID       string       `json:"episode_id"`
	ClientEpisodeID string       `json:"client_episode_id,omitempty"`
	Collection      string       `json:"collection"`
	Version         string       `json:"version,omitempty"`
	TaskID          string       `json:"task_id"`
	Seed            int64        `json:"seed"`
	Query           string       `json:"query"`
	Instructions    string       `json:"instructions"`
	Options         ResetOptions `json:"options"`
	// Reward is the reward definition, SuccessKind the success measure
	// it resolved to.
	Reward      Reward        `json:"reward"`
	SuccessKind string        `json:"success_kind"`
	Tools       []openai.Tool `json:"tools"`
	Steps       []RecordStep  `json:"steps"`
	Return      float64       `json:"return"`
	Done        bool          `json:"done"`
	Truncated   bool          `json:"truncated"`
	Outcome     *Outcome      `json:"outcome,omitempty"`
	Toolenv     string        `json:"toolenv"`
}

// RecordStep is one step of a Record.
type RecordStep struct {
	Type   string       `json:"type"`
	Calls  []RecordCall `json:"calls,omitempty"`
	Answer *Answer      `json:"answer,omitempty"`
	Reward float64      `json:"reward"`
}

// RecordCall is one call of a step: what was called and what the agent
// observed.
type RecordCall struct {
	ID          string         `json:"id,omitempty"`
	Name        string         `json:"name"`
	Arguments   map[string]any `json:"arguments"`
	Label       string         `json:"label,omitempty"`
	Status      toolenv.Status `json:"status"`
	Observation string         `json:"observation"`
	Faults      []string       `json:"faults,omitempty"`
}

// Record returns principal's episode id as a trajectory: an open one,
// one this process ended within the hour, or (with episodes in the
// store) any episode of the store.
func (e *Env) Record(ctx context.Context, principal, id string) (*Record, error) {
	e.mu.Lock()
	ep := e.live[id]
	tb, dead := e.tombs[id]
	e.mu.Unlock()
	if ep == nil && dead && tb.ep != nil && e.log == nil {
		if tb.ep.principal != epstore.Principal(principal) {
			return nil, unknownErr(id)
		}
		tb.ep.mu.Lock()
		defer tb.ep.mu.Unlock()
		return tb.ep.record(), nil
	}
	if ep != nil {
		// An open episode, brought up to date with the store.
		ep, err := e.acquire(ctx, principal, id)
		if err == nil {
			defer ep.mu.Unlock()
			return ep.record(), nil
		}
		if e.log == nil || (!errors.Is(err, ErrExpired) && !errors.Is(err, ErrClosed)) {
			return nil, err
		}
	}
	if e.log == nil {
		if dead {
			return nil, tb.err
		}
		return nil, unknownErr(id)
	}
	row, steps, err := e.log.Read(ctx, id, principal, 0)
	if errors.Is(err, epstore.ErrNotFound) {
		return nil, unknownErr(id)
	}
	if err != nil {
		return nil, err
	}
	return e.recordOf(ctx, principal, row, steps)
}

func (e *Env) recordOf(ctx context.Context, principal string, row *epstore.Row, steps []epstore.Step) (*Record, error) {
	ep, err := e.rebuild(ctx, principal, row, steps)
	if err != nil {
		return nil, err
	}
	ep.principal = row.Principal()
	return ep.record(), nil
}

// Export writes every episode of the store as JSONL records (all
// principals': it is the operator's export), oldest first; format is
// "jsonl" (Record), "openai" or "sharegpt" (SFT formats, as toolenv
// mirror writes them). It needs episodes in the store.
func (e *Env) Export(ctx context.Context, w io.Writer, format string) (int, error) {
	if e.log == nil {
		return 0, invalid("episodes live in this process only, so there is nothing to export from the store", "keep episodes in the store (--sessions store) to export them after the fact, or read each episode's record while it is open")
	}
	ids, err := e.log.IDs(ctx, "", true)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		row, steps, err := e.log.ReadAny(ctx, id)
		if err != nil {
			return n, err
		}
		rec, err := e.recordOf(ctx, "", row, steps)
		if err != nil {
			return n, fmt.Errorf("episode %s: %w", clip(id), err)
		}
		if err := WriteRecord(w, rec, format); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (ep *Episode) record() *Record {
	r := &Record{EpisodeID: ep.id, ClientEpisodeID: ep.spec.Options.EpisodeID, Collection: ep.coll.Name, Version: ep.coll.Version,
		TaskID: ep.task.ID, Seed: ep.spec.Seed, Query: ep.Query(), Instructions: ep.info.instructions, Options: ep.spec.Options,
		Reward: ep.spec.Options.Reward, SuccessKind: ep.success, Tools: openai.FromTools(ep.info.offered), Steps: []RecordStep{},
		Return: ep.ret, Done: ep.done, Truncated: ep.truncated, Outcome: ep.outcome, Toolenv: buildinfo.Version()}
	for _, st := range ep.history {
		rs := RecordStep{Type: st.Type, Answer: st.Answer, Reward: st.Reward}
		for _, c := range st.Calls {
			obs := c.Text
			if c.Status == toolenv.StatusOK {
				obs = bodyText(c.Body)
			}
			rs.Calls = append(rs.Calls, RecordCall{ID: c.ID, Name: c.Name, Arguments: c.Args, Label: c.Label, Status: c.Status, Observation: obs, Faults: c.Faults})
		}
		r.Steps = append(r.Steps, rs)
	}
	return r
}

// The export formats of WriteRecord.
const (
	ExportJSONL    = "jsonl"
	ExportOpenAI   = "openai"
	ExportShareGPT = "sharegpt"
)

// WriteRecord writes r as one JSON line in format: jsonl (the Record),
// openai ({"messages": [...], "tools": [...]}: the chat with its tool
// calls, for OpenAI-style fine-tuning, TRL, axolotl) or sharegpt
// ({"conversations": [...], "system", "tools"}: LLaMA-Factory's
// function-calling form).
func WriteRecord(w io.Writer, r *Record, format string) error {
	var v any
	switch format {
	case "", ExportJSONL:
		v = r
	case ExportOpenAI:
		v = openAIChat(r)
	case ExportShareGPT:
		v = shareGPT(r)
	default:
		return invalid(fmt.Sprintf("export format %q", format), "want jsonl, openai or sharegpt")
	}
	b, err := toolenv.MarshalJSONNoHTML(v)
	if err != nil {
		return err
	}
	b = append(trimNL(b), '\n')
	_, err = w.Write(b)
	return err
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

type chatMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func str(s string) *string { return &s }

func openAIChat(r *Record) any {
	msgs := []chatMessage{{Role: "system", Content: str(r.Instructions)}, {Role: "user", Content: str(r.Query)}}
	n := 0
	for _, st := range r.Steps {
		if len(st.Calls) > 0 {
			m := chatMessage{Role: "assistant"}
			var ids []string
			for _, c := range st.Calls {
				n++
				id := c.ID
				if id == "" {
					id = fmt.Sprintf("call_%d", n)
				}
				ids = append(ids, id)
				tc := chatToolCall{ID: id, Type: "function"}
				tc.Function.Name = c.Name
				args := c.Arguments
				if c.Label != "" {
					args = withLabelArg(args, c.Label)
				}
				b, _ := json.Marshal(args)
				tc.Function.Arguments = string(b)
				m.ToolCalls = append(m.ToolCalls, tc)
			}
			msgs = append(msgs, m)
			for i, c := range st.Calls {
				msgs = append(msgs, chatMessage{Role: "tool", ToolCallID: ids[i], Content: str(c.Observation)})
			}
		}
		if st.Answer != nil {
			msgs = append(msgs, chatMessage{Role: "assistant", Content: str(answerText(st.Answer))})
		}
	}
	return map[string]any{"messages": msgs, "tools": r.Tools, "reward": r.Return, "episode_id": r.EpisodeID, "task_id": r.TaskID}
}

func withLabelArg(args map[string]any, label string) map[string]any {
	out := make(map[string]any, len(args)+1)
	for k, v := range args {
		out[k] = v
	}
	if _, ok := out["label"]; !ok {
		out["label"] = label
	}
	return out
}

func answerText(a *Answer) string {
	switch {
	case a.Text != "":
		return a.Text
	case len(a.Value) > 0:
		return string(a.Value)
	case len(a.Labels) > 0:
		b, _ := json.Marshal(map[string]any{"labels": a.Labels})
		return string(b)
	}
	return ""
}

func shareGPT(r *Record) any {
	type turn struct {
		From  string `json:"from"`
		Value string `json:"value"`
	}
	conv := []turn{{From: "human", Value: r.Query}}
	for _, st := range r.Steps {
		for _, c := range st.Calls {
			args := c.Arguments
			if c.Label != "" {
				args = withLabelArg(args, c.Label)
			}
			b, _ := json.Marshal(map[string]any{"name": c.Name, "arguments": args})
			conv = append(conv, turn{From: "function_call", Value: string(b)}, turn{From: "observation", Value: c.Observation})
		}
		if st.Answer != nil {
			conv = append(conv, turn{From: "gpt", Value: answerText(st.Answer)})
		}
	}
	tools, _ := json.Marshal(r.Tools)
	return map[string]any{"conversations": conv, "system": r.Instructions, "tools": string(tools), "reward": r.Return, "episode_id": r.EpisodeID, "task_id": r.TaskID}
}
