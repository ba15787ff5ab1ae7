package drift

import (
	"encoding/json"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/validate"
)

// mustTool decodes a tool from JSON.
func mustTool(t *testing.T, js string) *toolenv.Tool {
	t.Helper()
	var tool toolenv.Tool
	if err := toolenv.DecodeJSON([]byte(js), &tool); err != nil {
		t.Fatalf("tool: %v", err)
	}
	return &tool
}

// planOp runs one operator at rate over a copy of tool and applies its
// changes, as a drift step does.
func planOp(t *testing.T, op string, tool *toolenv.Tool, rate float64, seed uint64, setup func(*planner)) ([]Change, *toolenv.Tool) {
	t.Helper()
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	var o *Operator
	for _, x := range Operators() {
		if x.Name == op {
			x := x
			o = &x
		}
	}
	if o == nil {
		t.Fatalf("no operator %s", op)
	}
	work := tool.Clone()
	p := &planner{rules: rules, rng: seedFor(seed, "v2", tool.Name, op), rate: rate, from: "v1", to: "v2", kind: "test",
		toolNames: map[string]bool{tool.Name: true}, history: map[string]bool{}, refs: map[string]bool{}, validator: &validate.Validator{},
		style: &ErrorStyle{CodeStyle: "upper_snake", Template: "{code}: {message}"}}
	if setup != nil {
		setup(p)
	}
	cs := o.plan(p, work)
	for i := range cs {
		if err := cs[i].check(); err != nil {
			t.Fatalf("change %d %+v: %v", i, cs[i], err)
		}
		if err := cs[i].apply(work, applyEnv{from: "v1", to: "v2"}); err != nil {
			t.Fatalf("apply %+v: %v", cs[i], err)
		}
	}
	return cs, work
}

// roundTrip translates args forward through the changes and back, and
// checks the new call is valid for the new tool and the way back gives
// the original (canonically).
func roundTrip(t *testing.T, cs []Change, newTool *toolenv.Tool, args map[string]any) map[string]any {
	t.Helper()
	tc := &ToolChange{Changes: cs}
	fwd := tc.forward(args)
	var v validate.Validator
	if o := v.Args(newTool.Input, fwd, false); len(o.Problems) > 0 {
		t.Errorf("translated call %v is invalid for the new schema: %v", canonString(fwd), o.Problems)
	}
	back := tc.backward(fwd, false)
	alt := tc.backward(fwd, true)
	if canonString(back) != canonString(args) && canonString(alt) != canonString(args) {
		t.Errorf("round trip: %s → %s → %s", canonString(args), canonString(fwd), canonString(back))
	}
	return fwd
}

func canonString(v any) string {
	b, err := toolenv.Canonical(v)
	if err != nil {
		return "!" + err.Error()
	}
	return string(b)
}

func args(t *testing.T, js string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := toolenv.DecodeJSON([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func ops(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Op)
	}
	return out
}

var _ = json.Marshal
