package episode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/store/epstore"
)

// Episode is one open episode. Its methods are Env's; it is exported for
// documentation of what an episode holds.
type Episode struct {
	env        *Env
	mu         sync.Mutex
	id         string
	principal  string // digest
	coll       *toolenv.Collection
	task       *toolenv.Task
	info       *taskInfo
	spec       spec
	query      string // perturbed query ("" : the task's)
	maxSteps   int
	success    string
	successWhy string
	faults     *episodeFaults

	applied   int64 // steps recorded in the store and applied here
	done      bool
	truncated bool
	ret       float64
	calls     []callEntry
	failed    map[string]int
	outcome   *Outcome
	answer    *Answer
	lastUsed  time.Time
	gone      error
	history   []stepEntry // every step, as logged: len(history) steps taken
}

// callEntry is one tool call as an episode keeps and logs it.
type callEntry struct {
	ID     string          `json:"id,omitempty"`
	Name   string          `json:"name"`
	Args   map[string]any  `json:"arguments"`
	Label  string          `json:"label,omitempty"`
	Status toolenv.Status  `json:"status"`
	Body   json.RawMessage `json:"body,omitempty"`
	Error  string          `json:"error,omitempty"`
	Hint   string          `json:"hint,omitempty"`
	// Text is the observation a model reads (agent.Observation).
	Text   string   `json:"text"`
	Faults []string `json:"faults,omitempty"`
	// InfraFailure names the environment's failure of the call
	// (invoke.MetaInfraFailure): not the agent's.
	InfraFailure string `json:"infra_failure,omitempty"`
}

// stepEntry is one step as the store logs it: applying the entries in
// order rebuilds the episode.
type stepEntry struct {
	Seq       int64       `json:"seq"`
	Type      string      `json:"type"`
	Calls     []callEntry `json:"calls,omitempty"`
	Answer    *Answer     `json:"answer,omitempty"`
	Reward    float64     `json:"reward"`
	Done      bool        `json:"done,omitempty"`
	Truncated bool        `json:"truncated,omitempty"`
	Outcome   *Outcome    `json:"outcome,omitempty"`
}

func (ep *Episode) touch(now time.Time) { ep.lastUsed = now }

func (ep *Episode) idleSince(now time.Time) time.Duration { return now.Sub(ep.lastUsedAt()) }

func (ep *Episode) lastUsedAt() time.Time { return ep.lastUsed }

// Query is the query the episode asks (perturbed when asked).
func (ep *Episode) Query() string {
	if ep.query != "" {
		return ep.query
	}
	return ep.task.Query
}

// catchUp applies the steps other replicas recorded since this copy last
// saw the episode.
func (ep *Episode) catchUp(ctx context.Context) error {
	row, steps, err := ep.env.log.ReadDigest(ctx, ep.id, ep.principal, ep.applied)
	if errors.Is(err, epstore.ErrNotFound) {
		return unknownErr(ep.id)
	}
	if err != nil {
		return err
	}
	return ep.applyRows(row, steps)
}

func (ep *Episode) applyRows(row *epstore.Row, steps []epstore.Step) error {
	switch row.State {
	case epstore.StateClosed:
		ep.gone = closedErr(ep.id)
		return ep.gone
	case epstore.StateExpired:
		ep.gone = ep.env.expiredErr(ep.id, row.LastUsed)
		return ep.gone
	}
	for _, s := range steps {
		if err := ep.applyLogged(s); err != nil {
			return err
		}
	}
	return nil
}

// applyLogged applies a step read from the store.
func (ep *Episode) applyLogged(s epstore.Step) error {
	if s.Seq != ep.applied+1 {
		return &toolenv.Error{Status: toolenv.StatusUnavailable, Message: fmt.Sprintf("episode %s: its log skips from step %d to %d", clip(ep.id), ep.applied, s.Seq), Hint: "the store lost steps of this episode: reset a new one"}
	}
	var st stepEntry
	if err := toolenv.DecodeJSON(s.Data, &st); err != nil {
		return &toolenv.Error{Status: toolenv.StatusUnavailable, Message: fmt.Sprintf("episode %s: step %d does not decode: %v", clip(ep.id), s.Seq, err), Hint: "a newer toolenv wrote it; serve the episode with the same version"}
	}
	if ep.faults != nil {
		ep.faults.replay(ep, &st)
	}
	ep.apply(&st)
	ep.applied = s.Seq
	return nil
}

// apply adds a step's entry to the episode's state.
func (ep *Episode) apply(st *stepEntry) {
	for _, c := range st.Calls {
		ep.calls = append(ep.calls, c)
		if c.Status != toolenv.StatusOK {
			if ep.failed == nil {
				ep.failed = map[string]int{}
			}
			ep.failed[string(c.Status)]++
		}
	}
	ep.ret += st.Reward
	if st.Done {
		ep.done, ep.truncated, ep.outcome, ep.answer = true, st.Truncated, st.Outcome, st.Answer
	}
	ep.history = append(ep.history, *st)
}

// step takes one action; ep.mu is held.
func (ep *Episode) step(ctx context.Context, a *Action) (*StepResult, error) {
	e := ep.env
	if a.Type == ActionListTools {
		ep.touch(e.opts.Now())
		return ep.listResult(), nil
	}
	if ep.done {
		return nil, &toolenv.Error{Status: toolenv.StatusBadRequest, Err: ErrDone,
			Message: fmt.Sprintf("episode %s is done (after %d steps%s): it takes no more steps", clip(ep.id), len(ep.history), map[bool]string{true: ", truncated at its step limit"}[ep.truncated]),
			Hint:    "read its state or record, and reset a new episode"}
	}
	// Check the whole action before anything runs: bad input changes
	// nothing.
	var final *Answer
	switch a.Type {
	case ActionCallTool, ActionToolCalls:
		if len(a.Calls) == 0 {
			return nil, invalid("the action holds no call", "")
		}
		for _, c := range a.Calls {
			if ep.info.byName[c.Name] == nil {
				return nil, ep.notOffered(c.Name)
			}
			if c.Args == nil {
				return nil, invalid(fmt.Sprintf("the arguments of %s are not a JSON object", c.Name), "")
			}
		}
	case ActionFinalAnswer:
		final = a.Answer
		if final == nil {
			final = &Answer{}
		}
		if err := ep.checkAnswer(final); err != nil {
			return nil, err
		}
	default:
		return nil, invalid(fmt.Sprintf("unknown action type %q", a.Type), "type is call_tool, tool_calls, final_answer or list_tools")
	}
	st := &stepEntry{Seq: int64(len(ep.history)) + 1, Type: a.Type, Answer: final}
	rs := ep.rewardSpec()
	st.Reward -= rs.StepCost // (not -StepCost: no negative zero)
	var results []*toolenv.Result
	if ep.faults != nil {
		ep.faults.clock.Advance(e.opts.StepTime)
	}
	for _, c := range a.Calls {
		res, ce := ep.call(ctx, c)
		if ctx.Err() != nil {
			return nil, &toolenv.Error{Status: toolenv.StatusCanceled, Message: "the step was canceled before its calls finished", Err: ctx.Err(),
				Hint: "the calls made may have changed the episode's tool session; read its state"}
		}
		results = append(results, res)
		st.Calls = append(st.Calls, ce)
		if ce.Status != toolenv.StatusOK {
			st.Reward -= penalty(rs.Penalty, string(ce.Status))
		}
	}
	infra := ""
	for _, c := range st.Calls {
		if infra == "" {
			infra = c.InfraFailure
		}
	}
	terminal := final != nil || len(ep.history)+1 >= ep.maxSteps
	switch {
	case infra != "":
		// The environment failed the episode (its own MCP instance
		// crashed, its state lost): it ends here, marked, unscored.
		st.Outcome = &Outcome{SuccessKind: ep.success, InfraFailure: infra}
		st.Done = true
	case terminal:
		calls := append(append([]callEntry(nil), ep.calls...), st.Calls...)
		out, err := ep.score(ctx, calls, final)
		if err != nil {
			return nil, err
		}
		st.Outcome = out
		st.Done = true
		st.Truncated = final == nil
		st.Reward += out.Success
	}
	if e.log != nil {
		data, err := json.Marshal(st)
		if err != nil {
			return nil, err
		}
		now := e.opts.Now()
		if err := e.log.Append(ctx, ep.id, epstore.Step{Seq: st.Seq, Data: data}, now); err != nil {
			if errors.Is(err, epstore.ErrConflict) {
				return nil, &toolenv.Error{Status: toolenv.StatusUnavailable, Err: ErrConflict,
					Message: fmt.Sprintf("step %d of episode %s was recorded by another connection or replica at the same time", st.Seq, clip(ep.id)),
					Hint:    "take one step of an episode at a time; read its state to see where it is"}
			}
			return nil, err
		}
		ep.applied = st.Seq
	}
	ep.apply(st)
	ep.touch(e.opts.Now())
	return ep.stepResult(st, a, results), nil
}

// notOffered is the error of a call to a tool the episode does not offer.
func (ep *Episode) notOffered(name string) error {
	names := make([]string, 0, len(ep.info.offered))
	for _, t := range ep.info.offered {
		names = append(names, t.Name)
	}
	hint := "the episode offers " + strings.Join(names, ", ")
	if len(names) > 12 {
		hint = fmt.Sprintf("the episode offers %d tools: list them with a list_tools action", len(names))
	}
	return &toolenv.Error{Status: toolenv.StatusUnknownTool, Message: fmt.Sprintf("tool %q is not offered in this episode", name), Hint: hint}
}

// call runs one call of the step.
func (ep *Episode) call(ctx context.Context, c Call) (*toolenv.Result, callEntry) {
	t := ep.coll.Tool(c.Name)
	g := agent.SplitLabel(t, toolenv.GoldCall{Name: c.Name, Args: c.Args, Label: c.Label})
	args := agent.WithLabel(t, g.Args, g.Label)
	var res *toolenv.Result
	if ep.faults != nil {
		res = ep.faults.invoke(ctx, ep, t, args)
	} else {
		res = ep.env.invoke(ctx, ep, t, args)
	}
	ce := callEntry{ID: c.ID, Name: c.Name, Args: g.Args, Label: g.Label, Status: res.Status, Error: res.Error, Hint: res.Hint, Faults: res.Faults,
		InfraFailure: res.Meta[invoke.MetaInfraFailure]}
	if res.OK() {
		ce.Body = res.Body // the body is the observation
	} else {
		ce.Text = agent.Observation(res)
	}
	return res, ce
}

// checkAnswer rejects a final answer the episode cannot score.
func (ep *Episode) checkAnswer(a *Answer) error {
	for _, l := range a.Labels {
		if ep.result(l) == nil {
			return invalid(fmt.Sprintf("submit_answer: no successful result is labelled %q", l), "give the labels of successful results of this episode, as you labelled your calls")
		}
	}
	if len(a.Value) > 0 && ep.info.hasAnswer {
		if _, err := tableOf(a.Value); err != nil {
			return err
		}
	}
	return nil
}

// result returns the last successful call labelled l.
func (ep *Episode) result(l string) *callEntry {
	for i := len(ep.calls) - 1; i >= 0; i-- {
		if c := &ep.calls[i]; c.Status == toolenv.StatusOK && c.Label == l {
			return c
		}
	}
	return nil
}

func penalty(p map[string]float64, status string) float64 {
	if v, ok := p[status]; ok {
		return v
	}
	return p["*"]
}

func (ep *Episode) rewardSpec() *Reward { return &ep.spec.Options.Reward }
