package agent

import (
	"context"

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
func executeCalls(ctx context.Context, ep *Episode, o *Outcome, calls []toolenv.GoldCall, maxObs int) {
	for i := range calls {
		g := calls[i]
		o.Predicted = append(o.Predicted, g)
		res := o.call(ctx, ep, Call{Name: g.Name, Args: g.Args, Label: g.Label})
		o.Trajectory.Steps = append(o.Trajectory.Steps, toolenv.Step{
			Call: &g, Observation: truncate(Observation(res), maxObs), Status: res.Status, Source: res.Source,
		})
		if o.Canceled {
			return
		}
		if !res.OK() {
			return
		}
		o.Trajectory.Answer = string(res.Body)
	}
	o.Trajectory.Finished = true
}

func obsLimit(n int) int {
	if n <= 0 {
		return 8192
	}
	return n
}
