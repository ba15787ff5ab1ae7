package drift

import (
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func TestErrorStylesRoundTrip(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	msg := "invalid arguments: missing required argument `city` (string): see {code}"
	for _, st := range rules.ErrorStyles {
		for _, status := range []toolenv.Status{toolenv.StatusInvalidArguments, toolenv.StatusGone, toolenv.StatusRateLimited} {
			out := st.Render(status, msg)
			code, got, ok := st.Parse(out)
			if !ok || got != msg || code != st.Code(status) {
				t.Errorf("%+v: %q parses to (%q, %q, %v)", st, out, code, got, ok)
			}
		}
	}
	if c := (&ErrorStyle{CodeStyle: "http"}).Code(toolenv.StatusGone); c != "410" {
		t.Errorf("http code of gone: %s", c)
	}
	if err := (&ErrorStyle{CodeStyle: "upper_snake", Template: "{message}"}).check(); err == nil {
		t.Error("a template without {code} passed")
	}
}

func TestErrorsOperator(t *testing.T) {
	cs, nt := planOp(t, "errors", mustTool(t, `{"name":"x","input":{"type":"object"}}`), 1, 1, nil)
	if len(cs) != 1 || cs[0].Op != OpErrorFormat {
		t.Fatalf("changes: %s", mustJSON(cs))
	}
	if st := styleOf(nt); st == nil || st.Template != "{code}: {message}" {
		t.Fatalf("style not documented on the tool: %v", nt.Meta)
	}
	// Switching to the style already in effect is no change.
	if cs, _ := planOp(t, "errors", nt, 1, 1, nil); len(cs) != 0 {
		t.Errorf("same style again: %s", mustJSON(cs))
	}
}
