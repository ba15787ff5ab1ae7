package agent

import (
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// A tool's own parameter called "label" is an argument, never toolenv's
// NESTful label; only a tool that declares its label argument has one.
func TestSplitLabelNamespace(t *testing.T) {
	in := toolenv.ObjectSchema()
	in.SetProp("label", &toolenv.Schema{Type: "string"})
	rest := &toolenv.Tool{Name: "get_by_label", Input: in}
	c := SplitLabel(rest, toolenv.GoldCall{Name: rest.Name, Args: map[string]any{"label": "Marvel"}})
	if c.Label != "" || c.Args["label"] != "Marvel" {
		t.Errorf("REST call split into %+v", c)
	}
	if got := WithLabel(rest, map[string]any{"label": "Marvel"}, "RESULT"); got["label"] != "Marvel" {
		t.Errorf("WithLabel on REST: %v", got)
	}
	if got := WithLabel(rest, map[string]any{}, "RESULT"); len(got) != 0 {
		t.Errorf("WithLabel added %v to a tool without a label argument", got)
	}
	slot := &toolenv.Tool{Name: "filter_data", Input: in, Meta: map[string]string{toolenv.MetaLabelArg: "label"}}
	c = SplitLabel(slot, toolenv.GoldCall{Name: slot.Name, Args: map[string]any{"label": "$F_0$", "key_name": "k"}})
	if c.Label != "F_0" || c.Args["label"] != nil || c.Args["key_name"] != "k" {
		t.Errorf("SLOT call split into %+v", c)
	}
	if got := WithLabel(slot, map[string]any{}, "F_1"); got["label"] != "F_1" {
		t.Errorf("WithLabel on SLOT: %v", got)
	}
}
