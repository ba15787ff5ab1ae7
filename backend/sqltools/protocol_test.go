package sqltools_test

import (
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
)

// The NESTful label reaches a tool only through the argument the tool
// declares for it: a REST endpoint whose parameter is called label (after
// a column) keeps the API's value (it used to be overwritten with the
// gold call's label, so every such task failed "answer differs").
func TestCallArgsLabelNamespace(t *testing.T) {
	in := toolenv.ObjectSchema()
	in.SetProp("label", &toolenv.Schema{Type: "string"})
	in.SetProp("session", &toolenv.Schema{Type: "string"})
	rest := &toolenv.Tool{Name: "get_x_by_label", Input: in}
	g := toolenv.GoldCall{Name: rest.Name, Args: map[string]any{"label": "a#b", "session": "s"}, Label: "RESULT"}
	if got := sqltools.CallArgs(g, rest); got["label"] != "a#b" || got["session"] != "s" || len(got) != 2 {
		t.Errorf("REST args %v, want the API's own label and session", got)
	}
	slot := sqltools.SlotTools(nil)[0]
	got := sqltools.CallArgs(toolenv.GoldCall{Name: slot.Name, Args: map[string]any{"data_source": "$t$"}, Label: "F_0"}, slot)
	if got["label"] != "F_0" {
		t.Errorf("SLOT args %v, want label F_0", got)
	}
	for _, tl := range append(sqltools.SelTools([]sqltools.Column{{Name: "a_b", Type: "string"}}), sqltools.InitToolDef([]string{"db"})) {
		if tl.LabelArg() != sqltools.LabelArg || tl.Input.Prop(tl.LabelArg()) == nil {
			t.Errorf("%s declares label argument %q", tl.Name, tl.LabelArg())
		}
	}
}
