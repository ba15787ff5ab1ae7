package episode

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/openai"
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
	// InfraFailures counts the steps the environment failed (see
	// infra.go): the return does not only measure the agent.
	InfraFailures int    `json:"infra_failures,omitempty"`
	Toolenv       string `json:"toolenv"`
	// RescoredFrom, on a record Rescore wrote, is the episode whose
	// steps it rewards anew.
	RescoredFrom string `json:"rescored_from,omitempty"`
}

// RecordStep is one step of a Record.
type RecordStep struct {
	Type   string       `json:"type"`
	Calls  []RecordCall `json:"calls,omitempty"`
	Answer *Answer      `json:"answer,omitempty"`
	Reward float64      `json:"reward"`
	// InfraFailure is why the environment failed the step (see
	// infra.go): its reward does not measure the agent.
	InfraFailure string `json:"infra_failure,omitempty"`
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
	// InfraFailure is why the environment failed the call; Injected says
	// a fault injected on purpose did (the agent's to handle).
	InfraFailure string `json:"infra_failure,omitempty"`
	Injected     bool   `json:"injected,omitempty"`
}

// Record returns principal's episode id as a trajectory: an open one,
// an ended one this process keeps the record of, or any episode the
// store holds (episodes in the store, and those this process wrote there
// when they ended).
func (e *Env) Record(ctx context.Context, principal, id string) (*Record, error) {
	ep, err := e.view(ctx, principal, id)
	if err != nil {
		return nil, err
	}
	defer ep.mu.Unlock()
	return ep.record(), nil
}

// ExportReport says what Export wrote and what it skipped.
type ExportReport struct {
	// Written counts the records written.
	Written int `json:"written"`
	// Skipped counts the episodes of collections this environment does
	// not serve (or not at the version they ran on), by collection.
	Skipped map[string]int `json:"skipped,omitempty"`
}

// Export writes every episode of the store as JSONL records (all
// principals': it is the operator's export), oldest first; format is
// "jsonl" (Record), "openai" or "sharegpt" (SFT formats, as toolenv
// mirror writes them). The store holds the episodes served with
// --sessions store, and every episode a server kept in memory once it
// ended. Episodes of collections this environment does not serve are
// skipped and counted.
func (e *Env) Export(ctx context.Context, w io.Writer, format string) (*ExportReport, error) {
	rep := &ExportReport{}
	src := e.log
	if src == nil {
		src = e.archive
	}
	if src == nil {
		return rep, invalid("this store holds no episodes table", "export from the store toolenv serve used (--store); run toolenv store migrate on an old one")
	}
	if _, err := writerFor(format); err != nil {
		return rep, err
	}
	ids, err := src.IDs(ctx, "", true)
	if err != nil {
		return rep, err
	}
	for _, id := range ids {
		row, steps, err := src.ReadAny(ctx, id)
		if err != nil {
			return rep, err
		}
		var sp spec
		if err := json.Unmarshal(row.Spec, &sp); err != nil {
			return rep, fmt.Errorf("episode %s: its stored reset does not decode: %w", clip(id), err)
		}
		if c := e.env.Registry.Collection(sp.Collection); c == nil || c.Version != sp.Version {
			if rep.Skipped == nil {
				rep.Skipped = map[string]int{}
			}
			name := sp.Collection
			if c != nil {
				name += " (version " + sp.Version + ")"
			}
			rep.Skipped[name]++
			continue
		}
		ep, err := e.rebuild(ctx, "", row, steps)
		if err != nil {
			return rep, fmt.Errorf("episode %s: %w", clip(id), err)
		}
		if err := WriteRecord(w, ep.record(), format); err != nil {
			return rep, err
		}
		rep.Written++
	}
	return rep, nil
}

// SkippedNote says what Export skipped, for a command's summary line
// ("" when nothing was).
func SkippedNote(rep *ExportReport) string {
	if rep == nil || len(rep.Skipped) == 0 {
		return ""
	}
	names := make([]string, 0, len(rep.Skipped))
	n := 0
	for c, k := range rep.Skipped {
		names = append(names, fmt.Sprintf("%s: %d", c, k))
		n += k
	}
	sort.Strings(names)
	return fmt.Sprintf("; %d episodes of collections not given skipped (%s)", n, strings.Join(names, ", "))
}

func writerFor(format string) (string, error) {
	switch format {
	case "", ExportJSONL, ExportOpenAI, ExportShareGPT:
		return format, nil
	}
	return "", invalid(fmt.Sprintf("export format %q", format), "want jsonl, openai or sharegpt")
}

func (ep *Episode) record() *Record {
	r := &Record{EpisodeID: ep.id, ClientEpisodeID: ep.spec.Options.EpisodeID, Collection: ep.coll.Name, Version: ep.coll.Version,
		TaskID: ep.task.ID, Seed: ep.spec.Seed, Query: ep.Query(), Instructions: ep.info.instructions, Options: ep.spec.Options,
		Reward: ep.spec.Options.Reward, SuccessKind: ep.success, Tools: openai.FromTools(ep.info.offered), Steps: []RecordStep{},
		Return: ep.ret, Done: ep.done, Truncated: ep.truncated, Outcome: ep.outcome, InfraFailures: ep.infraSteps, Toolenv: buildinfo.Version()}
	for _, st := range ep.history {
		rs := RecordStep{Type: st.Type, Answer: st.Answer, Reward: st.Reward, InfraFailure: st.Infra}
		for _, c := range st.Calls {
			obs := c.Text
			if c.Status == toolenv.StatusOK {
				obs = bodyText(c.Body)
			}
			rs.Calls = append(rs.Calls, RecordCall{ID: c.ID, Name: c.Name, Arguments: c.Args, Label: c.Label, Status: c.Status, Observation: obs, Faults: c.Faults,
				InfraFailure: c.Infra, Injected: c.Injected})
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

// Replay plays the actions of rec again, in a fresh episode of its task
// with its reset options and seed, for principal, and returns the new
// episode's record (the episode is closed). A record that is whole —
// every step it shows happened, and nothing else did — replays to the
// same observations and rewards, step for step.
func (e *Env) Replay(ctx context.Context, principal string, rec *Record) (*Record, error) {
	o := rec.Options
	o.Collection, o.TaskID = rec.Collection, rec.TaskID
	seed := rec.Seed
	o.Seed = &seed
	first, err := e.Reset(ctx, principal, &o)
	if err != nil {
		return nil, fmt.Errorf("replay of %s: reset: %w", clip(rec.EpisodeID), err)
	}
	id := first.Observation.EpisodeID
	for i, st := range rec.Steps {
		a := &Action{Type: st.Type, Answer: st.Answer}
		for _, c := range st.Calls {
			a.Calls = append(a.Calls, Call{ID: c.ID, Name: c.Name, Args: c.Arguments, Label: c.Label})
		}
		if _, err := e.Step(ctx, principal, id, a); err != nil {
			_ = e.End(ctx, principal, id)
			return nil, fmt.Errorf("replay of %s: step %d: %w", clip(rec.EpisodeID), i+1, err)
		}
	}
	out, err := e.Record(ctx, principal, id)
	if err != nil {
		return nil, err
	}
	return out, e.End(ctx, principal, id)
}
