package answer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	nlanswer "github.com/toolenv/toolenv/nl2api/answer"
)

// Table is an answer.
type Table = nlanswer.Table

// Labeled is one result an agent produced: the label it was stored under,
// whether it succeeded, and its body.
type Labeled struct {
	Label string
	OK    bool
	Body  json.RawMessage
}

// Gold reads a task's gold answer ({"columns": [...], "rows": [...]}). ok
// is false when the task has none (StableToolBench queries).
func Gold(t *toolenv.Task) (tab *Table, ok bool, err error) {
	raw := bytes.TrimSpace(t.Answer)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false, nil
	}
	tab, err = nlanswer.Gold(raw)
	if err != nil {
		return nil, true, fmt.Errorf("task %s: gold answer: %w", t.ID, err)
	}
	return tab, true, nil
}

// Ordered reports whether row order is part of a task's answer
// (meta.ordered).
func Ordered(t *toolenv.Task) bool {
	b, _ := t.Meta["ordered"].(bool)
	return b
}

// AnswerLabels returns a task's meta.answer_labels.
func AnswerLabels(t *toolenv.Task) []string {
	list, _ := t.Meta["answer_labels"].([]any)
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// FromResults builds an agent's answer from its results: when every
// label of the task's meta.answer_labels names a successful result of the
// agent, those results side by side (the agent used the gold labels);
// otherwise its last successful result.
func FromResults(t *toolenv.Task, results []Labeled) (*Table, error) {
	byLabel := map[string]json.RawMessage{}
	var last json.RawMessage
	for _, r := range results {
		if r.OK {
			byLabel[strings.Trim(r.Label, "$")] = r.Body
			last = r.Body
		}
	}
	if labels := AnswerLabels(t); len(labels) > 0 {
		bodies := make([]json.RawMessage, 0, len(labels))
		for _, l := range labels {
			b, ok := byLabel[l]
			if !ok {
				bodies = nil
				break
			}
			bodies = append(bodies, b)
		}
		if bodies != nil {
			return nlanswer.FromBodies(bodies...)
		}
	}
	if last == nil {
		return nil, fmt.Errorf("no call succeeded, so there is no answer")
	}
	return nlanswer.FromBodies(last)
}

// Options tune Equal.
type Options = nlanswer.Options

// Equal reports whether got answers like gold, and when not, why — the
// NL2SQL verification's comparison.
func Equal(gold, got *Table, opt Options) (bool, string) { return nlanswer.Equal(gold, got, opt) }
