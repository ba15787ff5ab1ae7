// Package episodetest holds what the tests of RL episodes share: a
// generated NL2SQL corpus built into SLOT, SEL and REST collections
// (nl2apitest's adversarial databases), and an oracle that plays a
// task's gold call sequence through any episode interface.
package episodetest

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/nl2api"
	"github.com/toolenv/toolenv/nl2api/nl2apitest"
)

// Corpus generates an NL2SQL corpus under dir and builds it into the
// SLOT, SEL and REST flavors; it returns the collection folders by
// flavor.
func Corpus(tb testing.TB, dir string, seed uint64) map[string]string {
	tb.Helper()
	data, out := filepath.Join(dir, "data"), filepath.Join(dir, "out")
	if _, err := nl2apitest.Generate(data, nl2apitest.Options{Seed: seed}); err != nil {
		tb.Fatal(err)
	}
	if _, err := nl2api.Build(context.Background(), nl2api.Options{Data: data, Out: out, Flavors: []string{"slot", "sel", "rest"}, Seed: int64(seed), Workers: 1}); err != nil {
		tb.Fatal(err)
	}
	return map[string]string{"slot": filepath.Join(out, "slot"), "sel": filepath.Join(out, "sel"), "rest": filepath.Join(out, "rest")}
}

// Oracle plays task's gold sequence: Next gives each gold call in turn,
// its references to earlier outputs resolved for the tools that do not
// keep labelled results themselves (as the oracle agent does); Observe
// tells it each call's output.
type Oracle struct {
	task    *toolenv.Task
	coll    *toolenv.Collection
	outputs map[string]json.RawMessage
	i       int
}

// NewOracle returns the oracle of task over collection c.
func NewOracle(c *toolenv.Collection, task *toolenv.Task) *Oracle {
	return &Oracle{task: task, coll: c, outputs: map[string]json.RawMessage{}}
}

// Next returns the next gold call, or ok false at the end.
func (o *Oracle) Next() (call toolenv.GoldCall, ok bool, err error) {
	if o.i >= len(o.task.Gold) {
		return toolenv.GoldCall{}, false, nil
	}
	g := o.task.Gold[o.i]
	o.i++
	g.Label = strings.Trim(g.Label, "$")
	if t := o.coll.Tool(g.Name); t != nil && t.LabelArg() == "" {
		args, err := agent.ResolveRefs(g.Args, o.outputs)
		if err != nil {
			return g, false, fmt.Errorf("task %s call %d: %w", o.task.ID, o.i, err)
		}
		g.Args = args
	}
	return g, true, nil
}

// Observe records the output of the call labelled label.
func (o *Oracle) Observe(label string, body json.RawMessage) {
	if label != "" {
		o.outputs[strings.Trim(label, "$")] = body
	}
}
