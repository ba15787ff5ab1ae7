package eval

import (
	"strings"

	"encoding/json"
	"github.com/toolenv/toolenv/eval/endstate"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/eval/answer"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/eval/stb"
)

// Episode is one finished run of one task: what the agent did and how it
// scored. It carries the task's query and gold sequence so that a journal
// can be summarised, merged and compared without the task files.
type Episode struct {
	TaskID     string `json:"task_id"`
	Run        int    `json:"run"`
	Agent      string `json:"agent"`
	Model      string `json:"model"`
	Split      string `json:"split"`
	Collection string `json:"collection,omitempty"`
	Source     string `json:"source,omitempty"`
	Seed       int64  `json:"seed"`
	Query      string `json:"query"`
	// Gold is the task's gold call sequence.
	Gold []toolenv.GoldCall `json:"gold,omitempty"`
	// Outcome is what the agent did.
	Outcome *agent.Outcome `json:"outcome"`
	Score   Score          `json:"score"`
	// SoPR and FAC hold the judge's verdicts, one per judging round.
	SoPR []judge.Verdict `json:"sopr,omitempty"`
	FAC  []judge.Verdict `json:"fac,omitempty"`
}

// Score is an episode's per-task measurements.
type Score struct {
	// HasAnswer says the task has a gold answer; Completed that the
	// agent reached it (AnswerError says why not).
	HasAnswer   bool   `json:"has_answer"`
	Completed   bool   `json:"completed"`
	AnswerError string `json:"answer_error,omitempty"`
	// HasGold says the task has a gold call sequence, which the sequence
	// metrics need.
	HasGold    bool                      `json:"has_gold"`
	Positional *metrics.PositionalResult `json:"positional,omitempty"`
	Set        *metrics.PRF              `json:"set,omitempty"`
	Order      *metrics.PRF              `json:"order,omitempty"`
	// ErrorCategory is the Live API-Bench Appendix G (BFCL-style)
	// category of a failed direct attempt.
	ErrorCategory string `json:"error_category,omitempty"`
	// BFCL is BFCL's own checker's verdict on a direct attempt, call by
	// call in order, the gold sequence's values the only accepted ones
	// (metrics.BFCLAttempt): "valid" or its error_type.
	BFCL string `json:"bfcl,omitempty"`
	// Stuck marks a failed episode that made the same call twice in a
	// row.
	Stuck bool `json:"stuck,omitempty"`
	// State is a stateful task's state check (eval/endstate): the world's
	// end state against the gold end state, collateral changes, the
	// end-state checks (eval/statecheck, made in the episode's own world
	// before it was released), the answer. The task then counts as having an
	// answer, and Completed is State.Success == 1: what completion and
	// pass^k count.
	State *endstate.Result `json:"state,omitempty"`
}

// Errored says why the episode measured nothing, or "": it could not
// run to its end (the model or the environment did not answer), or a
// judge it needed did not answer.
func (e *Episode) Errored() string {
	if e.Outcome != nil && e.Outcome.Trajectory != nil && e.Outcome.Trajectory.Error != "" {
		return e.Outcome.Trajectory.Error
	}
	for _, vs := range [][]judge.Verdict{e.SoPR, e.FAC} {
		for _, v := range vs {
			if v.Failed {
				return "judge: " + v.Error
			}
		}
	}
	return ""
}

// Succeeded is the harness's per-episode success, what pass^k counts: the
// episode measured something (not Errored) and did not fail (Failed).
func (e *Episode) Succeeded() bool { return e.Errored() == "" && !e.Failed() }

// Failed reports whether the episode counts as failed: the gold answer
// was not reached (when there is one), else an end-state check does not
// hold (when there are some), else the sequence does not match the gold
// sequence fully.
func (e *Episode) Failed() bool {
	if e.Score.HasAnswer {
		return !e.Score.Completed
	}
	if e.Score.State != nil {
		return e.Score.State.Success < 1
	}
	if e.Score.HasGold && e.Score.Positional != nil {
		p := e.Score.Positional
		return p.Intent.F1 < 1 || !p.SlotDefined || p.Slot.F1 < 1
	}
	return !e.Outcome.Trajectory.Finished
}

// score measures an outcome against its task. tools are the tools the
// task offered, by name.
func score(task *toolenv.Task, tools map[string]*toolenv.Tool, out *agent.Outcome, state *endstate.Result) Score {
	var s Score
	if gold, ok, err := answer.Gold(task); ok {
		s.HasAnswer = true
		if err != nil {
			s.AnswerError = err.Error()
		} else {
			var labeled []answer.Labeled
			for _, r := range out.Results {
				labeled = append(labeled, answer.Labeled{Label: r.Label, OK: r.Status == toolenv.StatusOK, Body: r.Body})
			}
			got, err := answer.FromResults(task, labeled)
			if err != nil {
				s.AnswerError = err.Error()
			} else {
				s.Completed, s.AnswerError = answer.Equal(gold, got, answer.Options{Ordered: answer.Ordered(task)})
			}
		}
	}
	if state != nil {
		st := *state
		if s.HasAnswer {
			ok := s.Completed
			st.Answer = &ok
			if !ok {
				st.Success, st.F1 = 0, 0
			}
		}
		s.State = &st
		s.HasAnswer = true
		s.Completed = st.Success == 1
		if !s.Completed && s.AnswerError == "" {
			s.AnswerError = stateWhy(&st)
		}
	}
	if len(task.Gold) > 0 {
		s.HasGold = true
		p := metrics.Positional(task.Gold, out.Predicted)
		s.Positional = &p
		g, pr := names(task.Gold), names(out.Predicted)
		set, order := metrics.SetPRF(g, pr), metrics.OrderPRF(g, pr)
		s.Set, s.Order = &set, &order
	}
	return s
}

func names(calls []toolenv.GoldCall) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Name
	}
	return out
}

// categorize sets BFCL's checker verdict of a direct episode, the
// Appendix G error category of a failed one and the stuck flag of a failed
// episode.
func categorize(e *Episode, tools map[string]*toolenv.Tool) {
	o := e.Outcome
	if e.Agent == "direct" && e.Score.HasGold {
		list := make([]*toolenv.Tool, 0, len(tools))
		for _, t := range tools {
			list = append(list, t)
		}
		if r, err := metrics.BFCLAttempt(list, e.Gold, metrics.Attempt{Parsed: o.Parsed, Calls: o.Predicted, Malformed: o.Malformed}); err == nil {
			e.Score.BFCL = r.Verdict()
		}
	}
	if !e.Failed() {
		return
	}
	if e.Agent == "direct" && e.Score.HasGold {
		e.Score.ErrorCategory = metrics.ErrorCategory(tools, e.Gold, metrics.Attempt{Parsed: o.Parsed, Calls: o.Predicted, Malformed: o.Malformed})
	}
	e.Score.Stuck = metrics.Stuck(metrics.LoopEpisode{Completed: false, Calls: o.Predicted})
}

// Converted returns the episode in StableToolBench's converted-answer
// format: method is the agent's name, the final answer what its last step
// carried (a react Final Answer becomes a Finish call with give_answer).
func (e *Episode) Converted() *stb.Converted {
	tr := e.Outcome.Trajectory
	final := e.Outcome.FinalAnswerRaw
	if e.Agent == "react" && tr.Finished {
		b, _ := json.Marshal(map[string]string{"return_type": "give_answer", "final_answer": tr.Answer})
		final = string(b)
		tr2 := *tr
		tr2.Steps = append(append([]toolenv.Step(nil), tr.Steps...), toolenv.Step{Call: &toolenv.GoldCall{Name: stb.FinishName}, Raw: final})
		tr = &tr2
	}
	return stb.FromTrajectory(e.Agent, e.Query, final, tr, nil)
}

// stateWhy says why a state check failed.
func stateWhy(st *endstate.Result) string {
	switch {
	case st.Error != "":
		return "state: " + st.Error
	case st.State != nil && !*st.State:
		return "state: the world's end state is not the gold end state" + examples(st)
	case st.NoCollateral != nil && !*st.NoCollateral:
		return "state: rows the task leaves alone changed" + examples(st)
	case !st.ChecksHold():
		for _, c := range st.Checks {
			if !c.Passed {
				return "state: check " + c.Name + " fails: " + c.Why
			}
		}
	case st.Answer != nil && !*st.Answer:
		return "the answer differs from the gold answer"
	}
	return "state check failed"
}

func examples(st *endstate.Result) string {
	if st.Diff == nil || len(st.Diff.Examples) == 0 {
		return ""
	}
	return " (" + strings.Join(st.Diff.Examples, "; ") + ")"
}
