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
	"github.com/toolenv/toolenv/backend/sqltools"
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
	rescoring  bool // measured again from its record by Rescore: no world to read
	faults     *episodeFaults

	client     string // the key its client's share is counted by
	applied    int64  // steps recorded in the store and applied here
	done       bool
	truncated  bool
	ret        float64
	calls      []callEntry
	failed     map[string]int
	infraSteps int // steps marked as infrastructure failures
	outcome    *Outcome
	answer     *Answer
	created    time.Time
	lastUsed   time.Time
	gone       error
	history    []stepEntry // every step, as logged: len(history) steps taken
	bytes      int64       // an estimate of the memory the steps hold
}

// callEntry is one tool call as an episode keeps and logs it.
type callEntry struct {
	ID     string          `json:"id,omitempty"`
	Name   string          `json:"name"`
	Args   argsMap         `json:"arguments"`
	Label  string          `json:"label,omitempty"`
	Status toolenv.Status  `json:"status"`
	Body   json.RawMessage `json:"body,omitempty"`
	Error  string          `json:"error,omitempty"`
	Hint   string          `json:"hint,omitempty"`
	// Text is the observation a model reads (agent.Observation).
	Text   string   `json:"text"`
	Faults []string `json:"faults,omitempty"`
	// Infra is the reason the environment failed the call (see
	// infra.go); Injected says an injected fault did.
	Infra    string `json:"infra_failure,omitempty"`
	Injected bool   `json:"injected,omitempty"`
	// ends says the backend marked the failure itself
	// (toolenv.MetaInfraFailure: the episode's own world failed, such as
	// its MCP server's own instance crashing): the episode ends there.
	// The step's record says so (its Done and Outcome).
	ends bool
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
	// Infra is the reason of the step's first call the environment
	// failed ("" when none did).
	Infra string `json:"infra_failure,omitempty"`
	// RequestID is the client's id of the request that took the step,
	// and ActionSum a digest of its action: the same id sent again gets
	// this step's answer.
	RequestID string `json:"request_id,omitempty"`
	ActionSum string `json:"action_sum,omitempty"`
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
	for _, s := range steps {
		if err := ep.applyLogged(s); err != nil {
			return err
		}
	}
	switch row.State {
	case epstore.StateClosed:
		ep.gone = closedErr(ep.id)
		return ep.gone
	case epstore.StateExpired:
		ep.gone = ep.env.expiredErr(ep.id, row.LastUsed)
		return ep.gone
	}
	if ep.done {
		return doneErr(ep.id, len(ep.history), ep.truncated)
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
		ep.bytes += int64(len(c.Body)+len(c.Text)+len(c.Error)+len(c.Hint)+len(c.Name)+len(c.Label)) + 64*int64(len(c.Args)) + 128
	}
	if st.Infra != "" {
		ep.infraSteps++
	}
	if a := st.Answer; a != nil {
		ep.bytes += int64(len(a.Text) + len(a.Value) + 16*len(a.Labels))
	}
	ep.ret += st.Reward
	if st.Done {
		ep.done, ep.truncated, ep.outcome, ep.answer = true, st.Truncated, st.Outcome, st.Answer
	}
	ep.bytes += 256
	ep.history = append(ep.history, *st)
}

// step takes one action; ep.mu is held. The step happens whole — its
// calls applied to the episode's session and the step recorded — or,
// when it is cut (the context ends, its answers pass their budget, its
// record cannot be written), not at all: the session is rolled back to
// where it was before the step's first call, and the error says why.
func (ep *Episode) step(ctx context.Context, a *Action) (*StepResult, error) {
	e := ep.env
	if a.RequestID != "" {
		if sr, found, err := ep.resent(a); found || err != nil {
			return sr, err
		}
	}
	if a.Type == ActionListTools {
		ep.touch(e.opts.Now())
		return ep.listResult()
	}
	if ep.done {
		return nil, doneErr(ep.id, len(ep.history), ep.truncated)
	}
	// Check the whole action before anything runs: bad input changes
	// nothing.
	var final *Answer
	switch a.Type {
	case ActionCallTool, ActionToolCalls:
		if len(a.Calls) == 0 {
			return nil, invalid("the action holds no call", "")
		}
		if len(a.Calls) > e.opts.MaxCalls {
			return nil, invalid(fmt.Sprintf("the step makes %d calls; a step makes at most %d (%s)", len(a.Calls), e.opts.MaxCalls, MaxCallsFlag),
				"split the calls over several steps")
		}
		// The caller's action stays as it was (it may be sent to other
		// episodes at once): the decoded arguments go in a copy.
		cp := *a
		cp.Calls = append([]Call(nil), a.Calls...)
		a = &cp
		for i, c := range a.Calls {
			if ep.info.byName[c.Name] == nil {
				return nil, ep.notOffered(c.Name)
			}
			if c.Args == nil {
				return nil, invalid(fmt.Sprintf("the arguments of %s are not a JSON object", c.Name), "")
			}
			if t := ep.coll.Tool(c.Name); t != nil {
				// ParseAction kept objects and arrays as text: those the
				// tool's schema describes are decoded now.
				a.Calls[i].Args = toolenv.DecodeDescribed(c.Args, t.Input)
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
	st := &stepEntry{Seq: int64(len(ep.history)) + 1, Type: a.Type, Answer: final, RequestID: a.RequestID}
	if a.RequestID != "" {
		st.ActionSum = a.sum()
	}
	rs := ep.rewardSpec()
	st.Reward -= rs.StepCost // (not -StepCost: no negative zero)
	u := e.begin(ep)
	var clock time.Time
	if ep.faults != nil {
		clock = ep.faults.clock.Now()
		ep.faults.clock.Advance(e.opts.StepTime)
	}
	cut := func(err error) (*StepResult, error) {
		if ep.faults != nil {
			ep.faults.rewind(ep, clock)
		}
		if rerr := u.undo(ctx, ep.id); rerr != nil {
			e.opts.Logger.Warn("a cut step's calls were not rolled back", "episode", ep.id, "err", rerr)
		}
		return nil, err
	}
	labels := ep.labelsTaken()
	spent := 0
	var results []*toolenv.Result // as the pipeline answered them
	for _, c := range a.Calls {
		ce, res := ep.call(ctx, c, labels, len(ep.calls)+len(st.Calls)+1)
		if e.onCall != nil {
			e.onCall(len(st.Calls) + 1)
		}
		if ctx.Err() != nil {
			status := toolenv.StatusCanceled
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				status = toolenv.StatusTimeout
			}
			return cut(&toolenv.Error{Status: status, Err: ctx.Err(),
				Message: fmt.Sprintf("the step was cut before its calls finished (%v): it did not happen", context.Cause(ctx)),
				Hint:    "nothing changed in the episode: send the step again"})
		}
		if spent += len(ce.Body) + len(ce.Text); spent > e.opts.MaxStepBytes {
			return cut(&toolenv.Error{Status: toolenv.StatusTooLarge,
				Message: fmt.Sprintf("the step's answers came to more than %d bytes (%s) by its call %d of %d: it did not happen", e.opts.MaxStepBytes, MaxStepBytesFlag, len(st.Calls)+1, len(a.Calls)),
				Hint:    "nothing changed in the episode: make fewer calls per step, or calls that answer less"})
		}
		st.Calls = append(st.Calls, ce)
		results = append(results, res)
		if ce.Status != toolenv.StatusOK {
			st.Reward -= penalty(rs.Penalty, string(ce.Status))
		}
		if ce.Infra != "" && st.Infra == "" {
			st.Infra = ce.Infra
		}
	}
	lost := ""
	for _, c := range st.Calls {
		if c.ends && lost == "" {
			lost = c.Infra
		}
	}
	terminal := final != nil || len(ep.history)+1 >= ep.maxSteps
	switch {
	case lost != "":
		// The environment failed the episode (its own MCP instance
		// crashed, its state lost): it ends here, marked, unscored.
		st.Outcome = &Outcome{SuccessKind: ep.success, InfraFailure: ep.firstInfra(st), InfraFailures: ep.infraSteps + 1}
		st.Done = true
	case terminal:
		calls := append(append([]callEntry(nil), ep.calls...), st.Calls...)
		out, err := ep.score(ctx, calls, final)
		if err != nil {
			return cut(err)
		}
		st.Outcome = out
		st.Done = true
		st.Truncated = final == nil
		st.Reward += out.Success
		if st.Infra != "" || ep.infraSteps > 0 {
			out.InfraFailures = ep.infraSteps
			if st.Infra != "" {
				out.InfraFailures++
			}
			out.InfraFailure = ep.firstInfra(st)
		}
	}
	if e.log != nil {
		data, err := json.Marshal(st)
		if err != nil {
			return cut(err)
		}
		now := e.opts.Now()
		if err := e.log.Append(ctx, ep.id, epstore.Step{Seq: st.Seq, Data: data}, st.Done, now, u.writer()); err != nil {
			if errors.Is(err, epstore.ErrConflict) || errors.Is(err, sqltools.ErrLogConflict) {
				return cut(&toolenv.Error{Status: toolenv.StatusUnavailable, Err: ErrConflict,
					Message: fmt.Sprintf("step %d of episode %s was recorded by another connection or replica at the same time: this one did not happen", st.Seq, clip(ep.id)),
					Hint:    "take one step of an episode at a time; read its state to see where it is"})
			}
			return cut(err)
		}
		ep.applied = st.Seq
	} else if err := u.write(ctx); err != nil {
		return cut(err)
	}
	u.end()
	ep.apply(st)
	ep.touch(e.opts.Now())
	sr := ep.stepResult(len(ep.history))
	if len(sr.Results) == len(results) {
		sr.Results = results // with their source and meta (a resent step's are rebuilt from its record)
	}
	return sr, nil
}

// labelsTaken returns the labels the episode's calls used.
func (ep *Episode) labelsTaken() map[string]bool {
	m := make(map[string]bool, len(ep.calls)+2)
	for _, c := range ep.calls {
		if c.Label != "" {
			m[c.Label] = true
		}
	}
	return m
}

// autoLabel is the label of an unlabelled call: result_n, n its number
// in the episode (the first free one after it), so that every result
// the episode shows has a label a final answer may name.
func (ep *Episode) autoLabel(taken map[string]bool, n int) string {
	for ; ; n++ {
		if l := fmt.Sprintf("result_%d", n); !taken[l] {
			return l
		}
	}
}

// firstInfra is the reason of the episode's first step marked as an
// infrastructure failure (st is the step being taken).
func (ep *Episode) firstInfra(st *stepEntry) string {
	for _, h := range ep.history {
		if h.Infra != "" {
			return h.Infra
		}
	}
	return st.Infra
}

// resent answers an action whose RequestID a step of the episode was
// already taken with: that step's answer (found), or an error when the
// action differs from the first.
func (ep *Episode) resent(a *Action) (*StepResult, bool, error) {
	for i := range ep.history {
		h := &ep.history[i]
		if h.RequestID != a.RequestID {
			continue
		}
		if h.ActionSum != a.sum() {
			return nil, true, &toolenv.Error{Status: toolenv.StatusBadRequest, Err: ErrConflict,
				Message: fmt.Sprintf("request_id %q was already used for step %d of episode %s, with another action", clip(a.RequestID), i+1, clip(ep.id)),
				Hint:    "send a fresh request_id for each new step; resend the same one only with the same action"}
		}
		return ep.stepResult(i + 1), true, nil
	}
	return nil, false, nil
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
// An unlabelled call gets the label result_n (n its number in the
// episode, or the next one free in taken), so that every result the
// episode shows has a label a final answer may name.
func (ep *Episode) call(ctx context.Context, c Call, taken map[string]bool, n int) (callEntry, *toolenv.Result) {
	t := ep.coll.Tool(c.Name)
	g := agent.SplitLabel(t, toolenv.GoldCall{Name: c.Name, Args: c.Args, Label: c.Label})
	if g.Label == "" {
		g.Label = ep.autoLabel(taken, n)
	}
	taken[g.Label] = true
	args := agent.WithLabel(t, g.Args, g.Label)
	var res *toolenv.Result
	if ep.faults != nil {
		res = ep.faults.invoke(ctx, ep, t, args)
	} else {
		res = ep.env.invoke(ctx, ep, t, args)
	}
	ce := callEntry{ID: c.ID, Name: c.Name, Args: g.Args, Label: g.Label, Status: res.Status, Error: res.Error, Hint: res.Hint, Faults: res.Faults}
	ce.Infra, ce.Injected = infraOf(res)
	ce.ends = ce.Infra != "" && res.Meta[toolenv.MetaInfraFailure] != ""
	if res.OK() {
		ce.Body = res.Body // the body is the observation
	} else {
		ce.Text = agent.Observation(res)
	}
	return ce, res
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
