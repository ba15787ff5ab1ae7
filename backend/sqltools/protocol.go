package sqltools

import (
	"context"
	"encoding/json"
	"fmt"

	toolenv "github.com/toolenv/toolenv"
)

// The Task.Meta keys of NL2SQL tasks.
const (
	MetaInit         = "init"          // []GoldCall: the hidden initialisation calls
	MetaAnswerLabels = "answer_labels" // []string: labels whose results form the answer
	MetaColumns      = "columns"       // []Column: the starting tables' columns
	MetaOrdered      = "ordered"       // bool: row order is part of the answer
)

// LabelArg is the argument through which every SLOT and SEL tool takes
// the label its result is stored under; the tools declare it in
// Meta[toolenv.MetaLabelArg].
const LabelArg = "label"

// CallArgs returns the arguments of a gold call as a tool call takes
// them: the NESTful label becomes the argument the tool declares for it
// (tool.LabelArg(): SLOT and SEL tools take it as `label`). A tool that
// declares none (REST) gets the gold arguments unchanged, even when one
// of its own parameters is called "label": toolenv's label never shares
// a namespace with an API's arguments.
func CallArgs(g toolenv.GoldCall, tool *toolenv.Tool) map[string]any {
	args := make(map[string]any, len(g.Args)+1)
	for k, v := range g.Args {
		args[k] = v
	}
	if name := tool.LabelArg(); g.Label != "" && name != "" {
		args[name] = g.Label
	}
	return args
}

// InitCalls returns a task's hidden initialisation calls (meta.init), to
// make first, in order, in a fresh session. Tasks without sessions (REST)
// have none.
func InitCalls(t *toolenv.Task) ([]toolenv.GoldCall, error) {
	raw, ok := t.Meta[MetaInit]
	if !ok || raw == nil {
		return nil, nil
	}
	var calls []toolenv.GoldCall
	if err := remarshal(raw, &calls); err != nil {
		return nil, fmt.Errorf("task %s: meta.init: %w", t.ID, err)
	}
	return calls, nil
}

// AnswerLabels returns the labels whose results form a task's answer.
func AnswerLabels(t *toolenv.Task) []string {
	var labels []string
	_ = remarshal(t.Meta[MetaAnswerLabels], &labels)
	return labels
}

// Step is one replayed call and its result.
type Step struct {
	Call   toolenv.GoldCall
	Result *toolenv.Result
}

// Replay runs task t in session: its init calls, then its gold calls, each
// through h (a backend, or a pipeline around one) with the tool resolved
// in collection c. It returns the gold steps (not the init ones) and stops
// at the first call that fails, returning an error that names it and has
// its status.
func Replay(ctx context.Context, h toolenv.Handler, c *toolenv.Collection, t *toolenv.Task, session string) ([]Step, error) {
	inits, err := InitCalls(t)
	if err != nil {
		return nil, err
	}
	run := func(g toolenv.GoldCall) (*toolenv.Result, error) {
		tool := c.Tool(g.Name)
		if tool == nil {
			return nil, fmt.Errorf("task %s: collection %s has no tool %s", t.ID, c.Name, g.Name)
		}
		res := h.Invoke(ctx, &toolenv.Call{Tool: tool, Collection: c, Args: CallArgs(g, tool), Session: session, Frontend: "go"})
		if res == nil || !res.OK() {
			msg, status := "no result", toolenv.StatusInternal
			if res != nil {
				msg, status = string(res.Status)+": "+res.Error, res.Status
			}
			// The error keeps the call's status (a timeout is told from a
			// wrong call by toolenv.StatusOf).
			return res, toolenv.Errorw(status, "", "task %s: %s (label %q) failed: %s", t.ID, g.Name, g.Label, msg)
		}
		return res, nil
	}
	for _, g := range inits {
		if _, err := run(g); err != nil {
			return nil, err
		}
	}
	steps := make([]Step, 0, len(t.Gold))
	for _, g := range t.Gold {
		res, err := run(g)
		steps = append(steps, Step{Call: g, Result: res})
		if err != nil {
			return steps, err
		}
	}
	return steps, nil
}

// AnswerBodies returns the result bodies of a task's answer labels, in
// order, from replayed steps.
func AnswerBodies(t *toolenv.Task, steps []Step) ([]json.RawMessage, error) {
	byLabel := map[string]json.RawMessage{}
	for _, s := range steps {
		if s.Result != nil && s.Result.OK() {
			byLabel[s.Call.Label] = s.Result.Body
		}
	}
	labels := AnswerLabels(t)
	if len(labels) == 0 && len(steps) > 0 {
		labels = []string{steps[len(steps)-1].Call.Label}
	}
	out := make([]json.RawMessage, len(labels))
	for i, l := range labels {
		b, ok := byLabel[l]
		if !ok {
			return nil, fmt.Errorf("task %s: no result labelled %q", t.ID, l)
		}
		out[i] = b
	}
	return out, nil
}
