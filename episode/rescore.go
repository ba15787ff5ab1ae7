package episode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	toolenv "github.com/toolenv/toolenv"
)

// RescoreReport says what Rescore wrote.
type RescoreReport struct {
	// Written counts the records written, NeedsState those among them
	// whose success could not be recomputed from the record (see
	// Outcome.NeedsState).
	Written    int `json:"written"`
	NeedsState int `json:"needs_state,omitempty"`
	// Unscorable counts the episodes whose task the new definition
	// cannot measure (a success measure the task lacks), by reason.
	Unscorable map[string]int `json:"unscorable,omitempty"`
	// Skipped counts the episodes of collections not served, by
	// collection.
	Skipped map[string]int `json:"skipped,omitempty"`
}

// endStateNeeded says what a task's success reads that a record does
// not hold, or "".
func endStateNeeded(t *toolenv.Task) string {
	if len(t.Checks) > 0 || t.Initial != nil {
		return "the end state of the episode's world (the task's state checks), which the record does not hold"
	}
	return ""
}

// Rescore recomputes the rewards of every episode of the store under
// the reward definition def, and writes each as a new record (format as
// Export's): its steps' rewards (def's step cost and penalties) and its
// success measured again from what the record holds — its calls, their
// results, its final answer. The new record's RescoredFrom names the
// episode. A success that reads what the record does not hold (the end
// state of a stateful task's world) is not recomputed: the outcome's
// NeedsState says so, and the record keeps the success the episode was
// rewarded with when the measure is the same, else none. pass_rate asks
// the judge of Options.Judge again.
func (e *Env) Rescore(ctx context.Context, w io.Writer, def Reward, format string) (*RescoreReport, error) {
	rep := &RescoreReport{}
	probe := ResetOptions{Reward: def}
	if err := probe.check(); err != nil {
		return rep, err
	}
	if def.Success == PassRate && e.opts.Judge == nil {
		return rep, invalid("reward.success pass_rate needs a judge model", "give --episode-judge-url and --episode-judge-model, or choose another measure")
	}
	if _, err := writerFor(format); err != nil {
		return rep, err
	}
	src := e.log
	if src == nil {
		src = e.archive
	}
	if src == nil {
		return rep, invalid("this store holds no episodes table", "rescore from the store toolenv serve used (--store)")
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
			rep.Skipped[sp.Collection]++
			continue
		}
		ep, err := e.rebuild(ctx, "", row, steps)
		if err != nil {
			return rep, fmt.Errorf("episode %s: %w", clip(id), err)
		}
		rec, needs, err := ep.rescored(ctx, def)
		if err != nil {
			if toolenv.StatusOf(err) == toolenv.StatusInvalidArguments {
				if rep.Unscorable == nil {
					rep.Unscorable = map[string]int{}
				}
				rep.Unscorable[messageOf(err)]++
				continue
			}
			return rep, fmt.Errorf("episode %s: %w", clip(id), err)
		}
		if err := WriteRecord(w, rec, format); err != nil {
			return rep, err
		}
		rep.Written++
		if needs {
			rep.NeedsState++
		}
	}
	return rep, nil
}

// rescored is ep's record under reward definition def.
func (ep *Episode) rescored(ctx context.Context, def Reward) (*Record, bool, error) {
	kind, why, err := successFor(&def, ep.task, ep.info.hasAnswer, ep.env.opts.Judge != nil)
	if err != nil {
		return nil, false, err
	}
	old := ep.outcome
	rec := ep.record()
	rec.RescoredFrom, rec.EpisodeID = ep.id, ep.id+"-rescored"
	rec.Reward, rec.SuccessKind, rec.Options.Reward = def, kind, def
	rec.Return = 0
	needs := false
	var calls []callEntry
	for i := range ep.history {
		h := &ep.history[i]
		r := 0.0
		r -= def.StepCost // (not -StepCost: no negative zero)
		for _, c := range h.Calls {
			if c.Status != toolenv.StatusOK {
				r -= penalty(def.Penalty, string(c.Status))
			}
		}
		calls = append(calls, h.Calls...)
		if h.Done {
			// ep was rebuilt for this alone: it may be measured anew.
			ep.success, ep.successWhy, ep.rescoring = kind, why, true
			out, err := ep.score(ctx, calls, h.Answer)
			if err != nil {
				return nil, false, err
			}
			if state := endStateNeeded(ep.task); state != "" && (kind == Completion || kind == StateSuccess || kind == StateF1) {
				needs = true
				out.NeedsState = state
				out.Success = 0
				if old != nil && old.SuccessKind == kind {
					out.Success = old.Success // as the episode was rewarded, not recomputed
				}
			}
			if old != nil {
				out.InfraFailure, out.InfraFailures, out.State = old.InfraFailure, old.InfraFailures, old.State
			}
			r += out.Success
			rec.Outcome = out
		}
		rec.Steps[i].Reward = r
		rec.Return += r
	}
	return rec, needs, nil
}

// messageOf is an error's message without its hint.
func messageOf(err error) string {
	var te *toolenv.Error
	if errors.As(err, &te) {
		return te.Message
	}
	return err.Error()
}

// ParseReward reads a reward definition from JSON (Reward's fields,
// as a reset's "reward" option): an unknown key is an error naming the
// known ones, and the values are checked as a reset checks them.
func ParseReward(data []byte) (Reward, error) {
	var r Reward
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, invalid("the reward definition: "+err.Error(), `write it as a reset's reward option, e.g. {"success": "slot_f1", "step_cost": 0.01, "penalty": {"*": 0.05}}`)
	}
	probe := ResetOptions{Reward: r}
	return r, probe.check()
}

// UnscorableNote says which episodes Rescore could not measure, for a
// command's summary line ("" when none).
func UnscorableNote(rep *RescoreReport) string {
	if rep == nil || len(rep.Unscorable) == 0 {
		return ""
	}
	n := 0
	why := ""
	for w, k := range rep.Unscorable {
		n += k
		if why == "" || w < why {
			why = w
		}
	}
	return fmt.Sprintf("; %d episodes not rescored: their task cannot be measured so (%s)", n, why)
}
