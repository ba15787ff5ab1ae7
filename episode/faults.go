package episode

import (
	"context"
	"encoding/json"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/faults"
)

// episodeFaults are one episode's own faults: an injector whose draws
// come from the fault configuration's seed mixed with the episode's, and
// whose clock is the episode's (StepTime per step, injected latency added
// at once), so that the same seed and actions meet the same faults on
// any replica.
type episodeFaults struct {
	in    *faults.Injector
	clock *faults.ManualClock
}

// epoch is where every episode's fault clock starts.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newEpisodeFaults(raw json.RawMessage, seed int64, step time.Duration) (*episodeFaults, error) {
	cfg, err := faults.ParseConfig(raw, "reset option faults")
	if err != nil {
		return nil, invalid(err.Error(), "faults take the JSON of --faults (docs/drift.md), e.g. {\"rules\": [{\"tool\": \"*\", \"errors\": {\"rate\": 0.2}}]}")
	}
	cfg.Seed = cfg.Seed*0x9e3779b97f4a7c15 + uint64(seed)
	clock := faults.NewManualClock(epoch)
	in, err := faults.New(cfg, faults.Options{Clock: clock})
	if err != nil {
		return nil, invalid(err.Error(), "")
	}
	return &episodeFaults{in: in, clock: clock}, nil
}

// invoke runs a call through the episode's faults, then the pipeline.
func (f *episodeFaults) invoke(ctx context.Context, ep *Episode, t *toolenv.Tool, args map[string]any) *toolenv.Result {
	next := toolenv.HandlerFunc(func(_ context.Context, call *toolenv.Call) *toolenv.Result {
		return ep.env.invoke(ctx, ep, t, call.Args)
	})
	call := &toolenv.Call{Tool: t, Collection: ep.coll, Args: args, Session: ep.id, Frontend: "episode"}
	// The injector sees no deadline: its draws and clock must not depend
	// on how much wall time the caller allows (replay has none).
	return f.in.Middleware()(next).Invoke(context.WithoutCancel(ctx), call)
}

// replay feeds a logged step to the injector, so that its draws, buckets
// and clock stand where they stood after the step; the pipeline is not
// called (the logged results stand in for it).
func (f *episodeFaults) replay(ep *Episode, st *stepEntry) {
	f.clock.Advance(ep.env.opts.StepTime)
	for i := range st.Calls {
		c := &st.Calls[i]
		t := ep.coll.Tool(c.Name)
		if t == nil {
			continue
		}
		logged := &toolenv.Result{Status: c.Status, Body: c.Body, Error: c.Error}
		next := toolenv.HandlerFunc(func(context.Context, *toolenv.Call) *toolenv.Result { return logged })
		call := &toolenv.Call{Tool: t, Collection: ep.coll, Args: c.Args, Session: ep.id, Frontend: "episode"}
		f.in.Middleware()(next).Invoke(context.Background(), call)
	}
}

// rewind puts the episode's faults back where they stood before a step
// that was cut: a fresh injector, fed the steps taken, on a clock at
// the step's start. Its draws then go on as if the cut step had never
// been sent, which keeps the episode's record replayable.
func (f *episodeFaults) rewind(ep *Episode, at time.Time) {
	fresh, err := newEpisodeFaults(ep.spec.Options.Faults, ep.spec.Seed, ep.env.opts.StepTime)
	if err != nil {
		return // it was made from the same options at reset
	}
	for i := range ep.history {
		fresh.replay(ep, &ep.history[i])
	}
	if d := at.Sub(fresh.clock.Now()); d > 0 {
		fresh.clock.Advance(d)
	}
	*f = *fresh
}
