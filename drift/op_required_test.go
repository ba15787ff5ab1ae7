package drift

import "testing"

const requiredTool = `{"name":"convert","binding":{"method":"GET","path":"/fx/{base}/convert"},"input":{"type":"object","properties":{
 "base":{"type":"string"},
 "amount":{"type":"number","examples":[100]},
 "to":{"type":"string","enum":["USD","EUR"]},
 "note":{"type":"string"},
 "round":{"type":"boolean","default":true}},"required":["base","amount","to","note"]}}`

func TestRequiredSwaps(t *testing.T) {
	cs, nt := planOp(t, "required", mustTool(t, requiredTool), 1, 3, nil)
	got := map[string]Change{}
	for _, c := range cs {
		got[c.Param] = c
	}
	if _, ok := got["base"]; ok {
		t.Error("a path parameter became optional")
	}
	if _, ok := got["note"]; ok {
		t.Error("a parameter with nothing to default to became optional")
	}
	if c := got["amount"]; c.Op != OpMakeOptional || string(c.NewValue) != "100" {
		t.Errorf("amount: %+v", c)
	}
	if c := got["to"]; c.Op != OpMakeOptional || string(c.NewValue) != `"USD"` {
		t.Errorf("to: %+v", c)
	}
	if c := got["round"]; c.Op != OpMakeRequired || string(c.OldValue) != "true" {
		t.Errorf("round: %+v", c)
	}
	if nt.Input.IsRequired("amount") || nt.Input.Prop("amount").Default == nil || !nt.Input.IsRequired("round") {
		t.Errorf("schema: %s", mustJSON(nt.Input))
	}
	// An old call (all required present, optional left out) goes forward
	// with the old default made explicit, and back exactly.
	fwd := roundTrip(t, cs, nt, args(t, `{"base":"EUR","amount":5,"to":"EUR","note":"x"}`))
	if fwd["round"] != true {
		t.Errorf("forward: %s", canonString(fwd))
	}
	// A new call that leaves the now-optional arguments out gets their
	// documented defaults on the way to the old backend.
	back := (&ToolChange{Changes: cs}).backward(args(t, `{"base":"EUR","note":"x","round":false}`), false)
	if canonString(back) != `{"amount":100,"base":"EUR","note":"x","round":false,"to":"USD"}` {
		t.Errorf("backward: %s", canonString(back))
	}
}
