package drift

import "testing"

func TestDefaultFlips(t *testing.T) {
	tool := mustTool(t, `{"name":"list","input":{"type":"object","properties":{
	 "order":{"type":"string","enum":["asc","desc"],"default":"asc","description":"Sort order (default: asc)."},
	 "unit":{"type":"string","enum":["metric"],"default":"metric"},
	 "exact":{"type":"boolean","default":false},
	 "size":{"type":"integer","default":20}}}}`)
	cs, nt := planOp(t, "default", tool, 1, 1, nil)
	got := map[string]Change{}
	for _, c := range cs {
		got[c.Param] = c
	}
	if _, ok := got["unit"]; ok {
		t.Error("flipped to a value the enum does not allow")
	}
	for p, want := range map[string]string{"order": `"desc"`, "exact": "true", "size": "50"} {
		if string(got[p].NewValue) != want {
			t.Errorf("%s: %+v, want new default %s", p, got[p], want)
		}
	}
	if d := nt.Input.Prop("order").Description; d != "Sort order (default: desc)." {
		t.Errorf("description not updated: %q", d)
	}
	// Leaving order out meant asc: translation says so explicitly, and a
	// new call leaving it out means desc.
	fwd := roundTrip(t, cs, nt, args(t, `{}`))
	if fwd["order"] != "asc" || fwd["exact"] != false {
		t.Errorf("forward: %s", canonString(fwd))
	}
	back := (&ToolChange{Changes: cs}).backward(args(t, `{}`), false)
	if back["order"] != "desc" || back["exact"] != true {
		t.Errorf("backward: %s", canonString(back))
	}
}
