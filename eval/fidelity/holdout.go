package fidelity

import (
	"context"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/store"
)

type heldOutKey struct{}

// heldOut is the call being measured: the example source must not show
// it to the simulator.
type heldOut struct{ tool, args string }

// withHeldOut marks the pair of tool and canonical args as held out for
// the calls made with ctx.
func withHeldOut(ctx context.Context, tool, args string) context.Context {
	return context.WithValue(ctx, heldOutKey{}, heldOut{tool, args})
}

// HoldOut wraps an example source so that the recorded call a context
// holds out (the pair being scored) is never returned: the simulator
// cannot copy the answer it is measured against into its prompt, and
// the synthesizer cannot return it verbatim.
func HoldOut(src simulate.ExampleSource) simulate.ExampleSource {
	return holdOut{src}
}

type holdOut struct{ src simulate.ExampleSource }

var _ simulate.ExampleSource = holdOut{}

// Examples returns the source's examples without the held-out call.
func (h holdOut) Examples(ctx context.Context, toolID string, limit int) ([]*store.Entry, error) {
	ho, ok := ctx.Value(heldOutKey{}).(heldOut)
	if !ok || ho.tool != toolID {
		return h.src.Examples(ctx, toolID, limit)
	}
	es, err := h.src.Examples(ctx, toolID, limit+1)
	out := es[:0:0]
	for _, e := range es {
		if e.Args != ho.args {
			out = append(out, e)
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, err
}

// withoutExample returns t, or a copy of it without its documented
// examples of the canonical arguments args.
func withoutExample(t *toolenv.Tool, args string) *toolenv.Tool {
	keep := make([]toolenv.Example, 0, len(t.Examples))
	for _, ex := range t.Examples {
		a := ex.Args
		if a == nil {
			a = map[string]any{}
		}
		c, err := toolenv.Canonical(a)
		if err == nil && string(c) == args {
			continue
		}
		keep = append(keep, ex)
	}
	if len(keep) == len(t.Examples) {
		return t
	}
	cp := *t
	cp.Examples = keep
	return &cp
}
