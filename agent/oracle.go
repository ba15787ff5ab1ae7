package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// Oracle executes a task's gold call sequence. It checks the environment,
// not a model: on every verified task it must reach the gold answer.
type Oracle struct {
	// MaxObservation bounds each observation kept in the trajectory
	// (bytes; 0 means 8192). Results keep the full body.
	MaxObservation int
}

var _ Agent = Oracle{}

// Name returns "oracle".
func (Oracle) Name() string { return "oracle" }

// Run executes the gold calls in order, stopping at the first that fails.
func (a Oracle) Run(ctx context.Context, ep *Episode) *Outcome {
	o := newOutcome(a.Name(), ep)
	o.Parsed = true
	if len(ep.Task.Gold) == 0 {
		o.Trajectory.Error = "the task has no gold call sequence, which the oracle agent executes"
		return o
	}
	executeCalls(ctx, ep, o, ep.Task.Gold, obsLimit(a.MaxObservation))
	return o
}

// executeCalls runs calls in order in the episode's session, recording a
// step and a result for each and stopping at the first failure. The last
// successful result's body becomes the trajectory's answer.
//
// References to earlier outputs ("$var1.results[0].isbn$") are resolved
// here, from the bodies of this sequence's earlier calls, for every
// listed tool that does not keep labelled results itself: that is how a
// NESTful sequence executes against any collection. A tool the session
// does not list is passed as written (its server decides). The session
// keeps what a tool that takes labels (Tool.LabelArg: the NL2SQL
// SLOT/SEL tools) stores, and resolves "$label$" itself: such a tool
// gets its arguments as written, and its output is not a body
// references resolve to (a later tool that reads "$F_0$" reads the
// stored data, as do references to the task's hidden initialisation). A
// reference that does not resolve ends the sequence with an
// invalid_arguments result naming it; the call is not sent.
func executeCalls(ctx context.Context, ep *Episode, o *Outcome, calls []toolenv.GoldCall, maxObs int) {
	outputs := map[string]json.RawMessage{}
	for i := range calls {
		g := calls[i]
		o.Predicted = append(o.Predicted, g)
		res := resolvedCall(ctx, ep, o, g, outputs)
		o.Trajectory.Steps = append(o.Trajectory.Steps, toolenv.Step{
			Call: &g, Observation: truncate(Observation(res), maxObs), Status: res.Status, Source: res.Source,
		})
		if o.Canceled {
			return
		}
		if !res.OK() {
			return
		}
		if l := strings.Trim(g.Label, "$"); l != "" && !keepsLabels(ep, g.Name) {
			outputs[l] = res.Body
		}
		o.Trajectory.Answer = string(res.Body)
	}
	o.Trajectory.Finished = true
}

// resolvedCall resolves g's references to outputs (unless its tool keeps
// labelled results itself) and runs it; a reference that does not
// resolve is recorded as an invalid_arguments result without a call.
func resolvedCall(ctx context.Context, ep *Episode, o *Outcome, g toolenv.GoldCall, outputs map[string]json.RawMessage) *toolenv.Result {
	args := g.Args
	// Only a tool the session lists, and that does not keep labelled
	// results itself, gets its references resolved here: a tool the
	// session does not list (an SEL getter of a column an aggregate made,
	// say) is passed as written, and its server decides what "$label$"
	// means.
	if t := toolNamed(ep.Session, g.Name); t != nil && t.LabelArg() == "" {
		var err error
		if args, err = ResolveRefs(g.Args, outputs); err != nil {
			res := toolenv.Errorf(toolenv.StatusInvalidArguments, "a reference names an earlier call's label and a path that exists in its output, e.g. $var1.results[0].id$", "%s: %v", g.Name, err)
			var re *RefError
			if errors.As(err, &re) {
				res.Problems = []toolenv.Problem{{Param: re.Param, Code: "unresolved_reference", Message: "reference " + re.Ref + ": " + re.Reason}}
			}
			o.Results = append(o.Results, Result{Name: g.Name, Label: strings.Trim(g.Label, "$"), Status: res.Status, Error: res.Error})
			return res
		}
	}
	return o.call(ctx, ep, Call{Name: g.Name, Args: args, Label: g.Label})
}

// keepsLabels reports whether the offered tool called name takes labels:
// the session stores its output under the label and resolves references
// to it.
func keepsLabels(ep *Episode, name string) bool {
	t := toolNamed(ep.Session, name)
	return t != nil && t.LabelArg() != ""
}

func obsLimit(n int) int {
	if n <= 0 {
		return 8192
	}
	return n
}
