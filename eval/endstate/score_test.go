package endstate

import (
	"testing"

	"github.com/toolenv/toolenv/eval/statecheck"
)

// TestScore: how the parts of a state check combine, in a world (a gold
// end state compared) and without one (an MCP server's instance: the
// checks alone).
func TestScore(t *testing.T) {
	row := func(id int, stock int) []any { return []any{id, stock} }
	changes := func(rows ...RowChange) *Changes {
		c := &Changes{Tables: []TableChanges{{Table: "products", Columns: []string{"id", "stock"}, Key: []string{"id"}, Rows: rows}}}
		c.Normalize()
		return c
	}
	gold := changes(RowChange{Before: row(1, 0), After: row(1, 40)})
	held := &statecheck.Report{Checks: []statecheck.Result{{Name: "a", Passed: true}}, Passed: 1, Total: 1, Success: 1}
	failed := &statecheck.Report{Checks: []statecheck.Result{{Name: "a", Why: "got 3"}, {Name: "b", Passed: true}}, Passed: 1, Total: 2, InfraFailure: "crashed"}
	yes, no := true, false
	for _, c := range []struct {
		name          string
		gold, got     *Changes
		checks        *statecheck.Report
		answer        *bool
		success, f1   float64
		state, nocoll *bool
		hash          bool
	}{
		{"the gold end state", gold, changes(RowChange{Before: row(1, 0), After: row(1, 40)}), nil, nil, 1, 1, &yes, &yes, true},
		{"a wrong value", gold, changes(RowChange{Before: row(1, 0), After: row(1, 41)}), nil, nil, 0, 0, &no, &yes, true},
		{"the gold change and another row", gold, changes(RowChange{Before: row(1, 0), After: row(1, 40)}, RowChange{Before: row(2, 5), After: row(2, 6)}), nil, nil, 0, 2.0 / 3, &no, &no, true},
		{"nothing changed", gold, &Changes{}, nil, nil, 0, 0, &no, &yes, true},
		{"the gold end state, a check fails", gold, changes(RowChange{Before: row(1, 0), After: row(1, 40)}), failed, nil, 0, 0, &yes, &yes, true},
		{"the gold end state, the answer wrong", gold, changes(RowChange{Before: row(1, 0), After: row(1, 40)}), held, &no, 0, 0, &yes, &yes, true},
		{"checks only, in a world", nil, &Changes{}, held, &yes, 1, 1, nil, nil, true},
		{"checks only, no world", nil, nil, held, nil, 1, 1, nil, nil, false},
		{"checks only, no world, one fails", nil, nil, failed, nil, 0, 0, nil, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Score(c.gold, c.got, c.checks, c.answer)
			if r.Success != c.success || r.F1 < c.f1-1e-9 || r.F1 > c.f1+1e-9 {
				t.Errorf("success %v, F1 %v; want %v, %v", r.Success, r.F1, c.success, c.f1)
			}
			same := func(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
			if !same(r.State, c.state) || !same(r.NoCollateral, c.nocoll) {
				t.Errorf("state %v, no collateral %v; want %v, %v", r.State, r.NoCollateral, c.state, c.nocoll)
			}
			if (r.Hash != "") != c.hash {
				t.Errorf("hash %q with a world: %v", r.Hash, c.hash)
			}
			if c.checks != nil && (r.Passed != c.checks.Passed || r.Total != c.checks.Total || len(r.Checks) != len(c.checks.Checks) || r.InfraFailure != c.checks.InfraFailure) {
				t.Errorf("checks %d/%d %q, want the report's %d/%d %q", r.Passed, r.Total, r.InfraFailure, c.checks.Passed, c.checks.Total, c.checks.InfraFailure)
			}
			if r.ChecksHold() != (c.checks == nil || c.checks.Passed == c.checks.Total) {
				t.Errorf("ChecksHold %v", r.ChecksHold())
			}
		})
	}
}
