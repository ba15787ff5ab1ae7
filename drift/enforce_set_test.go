package drift

import (
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// TestEnforcerSetAndRemove: a hot-loaded drifted version is enforced
// from Set on, in place of the lineage of its name, and no more after
// Remove; other collections are untouched.
func TestEnforcerSetAndRemove(t *testing.T) {
	a := toolenv.NewCollection("a", "demo", []*toolenv.Tool{{Name: "x", Input: toolenv.ObjectSchema()}})
	b := toolenv.NewCollection("b", "demo", []*toolenv.Tool{{Name: "y", Input: toolenv.ObjectSchema()}})
	la, lb := NewLineage(a), NewLineage(b)
	e := NewEnforcer(EnforcerOptions{}, lb)
	if e.Lineage("a") != nil || e.Lineage("b") != lb {
		t.Fatal("initial lineages wrong")
	}
	e.Set(la)
	if e.Lineage("a") != la || e.Lineage("b") != lb {
		t.Error("Set lost or missed a lineage")
	}
	la2 := NewLineage(toolenv.NewCollection("a", "demo", []*toolenv.Tool{{Name: "z", Input: toolenv.ObjectSchema()}}))
	e.Set(la2)
	if e.Lineage("a") != la2 {
		t.Error("Set did not replace the lineage of the same name")
	}
	e.Remove("a")
	if e.Lineage("a") != nil || e.Lineage("b") != lb {
		t.Error("Remove removed the wrong lineage")
	}
	call := &toolenv.Call{Tool: a.Tool("x"), Collection: a}
	if e.lineage(call) != nil {
		t.Error("a removed collection's call is still enforced")
	}
}
