package episode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/answer"
	"github.com/toolenv/toolenv/eval/endstate"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/eval/stb"
	nlanswer "github.com/toolenv/toolenv/nl2api/answer"
)

// Outcome is how an episode ended, measured: the success measure it is
// rewarded with, and every measure its task allows, so that a record
// says more than its reward.
type Outcome struct {
	// SuccessKind is the measure rewarded (Reward.Success, or the
	// default the task allows) and Success its value.
	SuccessKind string  `json:"success_kind"`
	Success     float64 `json:"success"`
	// Completed says the answer equals the gold answer; AnswerError why
	// not. Set for tasks with a gold answer.
	Completed   *bool  `json:"completed,omitempty"`
	AnswerError string `json:"answer_error,omitempty"`
	// Positional are Live API-Bench's intent and slot scores, Nestful
	// NESTful's, against the gold sequence (tasks with one).
	Positional *metrics.PositionalResult `json:"positional,omitempty"`
	Nestful    *metrics.NestfulResult    `json:"nestful,omitempty"`
	// NestfulError says why NESTful's scores could not be computed.
	NestfulError string `json:"nestful_error,omitempty"`
	// API is the set P/R/F1 of the APIs called against the solvable API
	// list or the gold sequence's.
	API *metrics.PRF `json:"api,omitempty"`
	// Answer is the final answer text, for tasks without a gold answer.
	Answer string `json:"answer,omitempty"`
	// Judge is the judge's verdict (pass_rate).
	Judge *judge.Verdict `json:"judge,omitempty"`
	// InfraFailure is the reason of the episode's first step the
	// environment failed (see infra.go), or of its end-state check's
	// call the environment failed, and InfraFailures how many steps it
	// failed: the reward does not only measure the agent, and a trainer
	// may mask it. A failure the backend marked itself (its own MCP
	// instance of the episode crashed) ends the episode there, unscored.
	InfraFailure  string `json:"infra_failure,omitempty"`
	InfraFailures int    `json:"infra_failures,omitempty"`
	// NeedsState, set on a record's outcome recomputed by Rescore, says
	// the success measure reads state the record does not hold (a
	// judge's verdict, a world's end state): its value was not
	// recomputed.
	NeedsState string `json:"needs_state,omitempty"`
	// State is the state the episode left and how it compares with the
	// task's (stateful tasks: eval/endstate): its end state, collateral
	// changes, end-state checks (eval/statecheck's, with their counts
	// and infrastructure failure), the world's changes and hash. It is
	// read in the episode's own world before it is released; a record
	// Rescore measures again keeps the one the episode was given.
	State *endstate.Result `json:"state,omitempty"`
}

// successFor resolves the success measure of r for task t.
func successFor(r *Reward, t *toolenv.Task, hasAnswer, judged bool) (kind, why string, err error) {
	hasGold := len(t.Gold) > 0
	hasAPIs := len(relevantAPIs(t)) > 0 || hasGold
	kind = r.Success
	stateful := endstate.Stateful(t)
	if kind == "" {
		switch {
		case stateful:
			return StateSuccess, "the task is judged on the state it leaves (its gold end state, end-state checks and answer)", nil
		case hasAnswer:
			return Completion, "the task has a verified gold answer", nil
		case hasAPIs:
			return APIF1, "the task has no gold answer: the APIs called are scored against its solvable API list", nil
		default:
			return "", "", invalid(fmt.Sprintf("task %s has no gold answer, gold sequence or solvable API list to reward against", t.ID), `reward it with costs alone: "reward": {"success": "none", "step_cost": 0.01}`)
		}
	}
	need := func(ok bool, what string) error {
		if ok {
			return nil
		}
		return invalid(fmt.Sprintf("reward.success %s needs %s, which task %s lacks", kind, what, t.ID), "choose another measure (completion needs a gold answer; intent_f1, slot_f1 and the sequence matches a gold sequence; api_f1 a solvable API list or a gold sequence)")
	}
	switch kind {
	case Completion:
		err = need(hasAnswer, "a gold answer")
	case IntentF1, SlotF1, SequenceMatch, FullSequenceMatch:
		err = need(hasGold, "a gold call sequence")
	case APIF1:
		err = need(hasAPIs, "a solvable API list or a gold sequence")
	case StateSuccess, StateF1:
		err = need(stateful, "end-state checks or a gold end state")
	case PassRate:
		if !judged {
			err = invalid("reward.success pass_rate needs a judge model, and this server has none", "start it with --episode-judge-url and --episode-judge-model (an OpenAI-compatible endpoint), or choose another measure")
		}
	}
	return kind, "asked for", err
}

// relevantAPIs returns a StableToolBench task's solvable APIs.
func relevantAPIs(t *toolenv.Task) []string {
	list, _ := t.Meta["relevant_apis"].([]any)
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// score measures the episode's calls and final answer (nil: the
// episode ran out of steps). Only a judge that cannot be asked is an
// error: the reward must not silently be 0.
func (ep *Episode) score(ctx context.Context, calls []callEntry, final *Answer) (*Outcome, error) {
	t := ep.task
	out := &Outcome{SuccessKind: ep.success}
	var predicted []toolenv.GoldCall
	var called []string
	for _, c := range calls {
		predicted = append(predicted, toolenv.GoldCall{Name: c.Name, Args: c.Args, Label: c.Label})
		called = append(called, c.Name)
	}
	if gold, ok, err := answer.Gold(t); ok {
		completed := false
		switch {
		case err != nil:
			out.AnswerError = err.Error()
		default:
			got, gerr := ep.answerTable(calls, final)
			if gerr != nil {
				out.AnswerError = gerr.Error()
			} else {
				completed, out.AnswerError = answer.Equal(gold, got, answer.Options{Ordered: answer.Ordered(t)})
			}
		}
		out.Completed = &completed
	}
	if len(t.Gold) > 0 {
		p := metrics.Positional(t.Gold, predicted)
		out.Positional = &p
		// NESTful's scorer, as the evaluation harness runs it.
		if n, err := metrics.NestfulScores([][]toolenv.GoldCall{t.Gold}, [][]toolenv.GoldCall{predicted}, metrics.NestfulOptions{}); err != nil {
			out.NestfulError = err.Error()
		} else {
			out.Nestful = &n
		}
	}
	apis := relevantAPIs(t)
	if len(apis) == 0 {
		for _, g := range t.Gold {
			apis = append(apis, g.Name)
		}
	}
	if len(apis) > 0 {
		prf := metrics.SetPRF(apis, called)
		out.API = &prf
	}
	if final != nil {
		out.Answer = final.Text
	}
	if endstate.Stateful(t) && !ep.rescoring {
		// The world is read through the pipeline, in the episode's
		// session, as its calls were made, before it is released.
		world := ep.coll.Tool(endstate.InspectTool) != nil
		out.State = endstate.Evaluate(ctx, t, func(ctx context.Context, name string, args map[string]any) *toolenv.Result {
			tool := ep.coll.Tool(name)
			if tool == nil {
				return toolenv.Errorf(toolenv.StatusUnknownTool, "", "collection %s has no tool %s", ep.coll.Name, name)
			}
			return ep.env.invoke(ctx, ep, tool, args)
		}, world, out.Completed)
		out.InfraFailure = out.State.InfraFailure
	}
	switch ep.success {
	case Completion:
		if out.Completed != nil && *out.Completed {
			out.Success = 1
		}
	case IntentF1:
		out.Success = out.Positional.Intent.F1
	case SlotF1:
		if out.Positional.SlotDefined {
			out.Success = out.Positional.Slot.F1
		}
	case SequenceMatch:
		if out.Nestful != nil {
			out.Success = out.Nestful.PartialMatch
		}
	case FullSequenceMatch:
		if out.Nestful != nil {
			out.Success = out.Nestful.FullMatch
		}
	case APIF1:
		out.Success = out.API.F1
	case StateSuccess, StateF1:
		if out.State != nil { // (nil when Rescore measures a record: no world to read)
			out.Success = out.State.Success
			if ep.success == StateF1 {
				out.Success = out.State.F1
			}
		}
	case PassRate:
		v := ep.env.opts.Judge.SoPR(ctx, ep.Query(), ep.converted(calls, final))
		if v.Error != "" {
			return nil, &toolenv.Error{Status: toolenv.StatusUnavailable, Message: "the judge model could not be asked: " + v.Error,
				Hint: "check --episode-judge-url; the episode is unchanged: submit the answer again"}
		}
		out.Judge, out.Success = &v, v.Label.Score()
	}
	return out, nil
}

// converted is the episode as StableToolBench's converted answer, which
// its judge reads: every call with its observation, then Finish with
// the final answer.
func (ep *Episode) converted(calls []callEntry, final *Answer) *stb.ConvertedAnswer {
	tr := &toolenv.Trajectory{TaskID: ep.task.ID, Agent: "episode"}
	for _, c := range calls {
		g := toolenv.GoldCall{Name: c.Name, Args: c.Args, Label: c.Label}
		obs := c.Text
		if c.Status == toolenv.StatusOK {
			obs = bodyText(c.Body)
		}
		tr.Steps = append(tr.Steps, toolenv.Step{Call: &g, Observation: obs, Status: c.Status})
	}
	finish := ""
	if final != nil {
		b, _ := json.Marshal(map[string]string{"return_type": "give_answer", "final_answer": answerText(final)})
		finish = string(b)
		tr.Steps = append(tr.Steps, toolenv.Step{Call: &toolenv.GoldCall{Name: stb.FinishName}, Raw: finish})
		tr.Finished, tr.Answer = true, answerText(final)
	}
	return &stb.FromTrajectory("episode", ep.Query(), finish, tr, nil).Answer
}

// answerTable is the episode's answer: the labelled results or the value
// the final answer names, else the harness's rule over every call.
func (ep *Episode) answerTable(calls []callEntry, final *Answer) (*answer.Table, error) {
	if final != nil && len(final.Labels) > 0 {
		var bodies []json.RawMessage
		for _, l := range final.Labels {
			var body json.RawMessage
			for i := len(calls) - 1; i >= 0; i-- {
				if calls[i].Status == toolenv.StatusOK && calls[i].Label == l {
					body = calls[i].Body
					break
				}
			}
			if body == nil {
				return nil, fmt.Errorf("no successful result is labelled %q", l)
			}
			bodies = append(bodies, body)
		}
		return nlanswer.FromBodies(bodies...)
	}
	if final != nil && len(final.Value) > 0 {
		return tableOf(final.Value)
	}
	labeled := make([]answer.Labeled, 0, len(calls))
	for _, c := range calls {
		labeled = append(labeled, answer.Labeled{Label: c.Label, OK: c.Status == toolenv.StatusOK, Body: c.Body})
	}
	return answer.FromResults(ep.task, labeled)
}

// tableOf reads an answer value: a table {"columns": [...], "rows":
// [[...]]}, a list of rows, a list of values (one column) or one value.
func tableOf(raw json.RawMessage) (*answer.Table, error) {
	raw = bytes.TrimSpace(raw)
	var v any
	if err := decodeUseNumber(raw, &v); err != nil {
		return nil, invalid("submit_answer: the answer is not JSON", "")
	}
	bad := invalid("submit_answer: the answer is an object without rows", `give a table {"columns": [...], "rows": [[...]]}, a list of rows, a list of values or one value`)
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["rows"].([]any); !ok {
			return nil, bad
		}
		var t answer.Table
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, invalid("submit_answer: the answer's rows are not a list of rows", `rows is a list of lists, e.g. [["Blue"], ["Green"]]`)
		}
		return &t, nil
	case []any:
		t := &answer.Table{Rows: [][]any{}}
		for _, e := range x {
			switch r := e.(type) {
			case []any:
				t.Rows = append(t.Rows, plain(r))
			case map[string]any:
				return nil, bad
			default:
				t.Rows = append(t.Rows, plain([]any{r}))
			}
		}
		return t, nil
	default:
		return &answer.Table{Rows: [][]any{plain([]any{x})}}, nil
	}
}

// plain turns json.Numbers into float64s, as the gold answers hold them.
func plain(row []any) []any {
	for i, v := range row {
		if n, ok := v.(json.Number); ok {
			if f, err := n.Float64(); err == nil {
				row[i] = f
			}
		}
	}
	return row
}
