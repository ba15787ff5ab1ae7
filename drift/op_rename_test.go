package drift

import (
	"strings"
	"testing"
)

const weatherTool = `{"name":"get_weather","title":"Get weather","input":{"type":"object","properties":{
 "city":{"type":"string","description":"City name"},
 "town":{"type":"string"},
 "sortBy":{"type":"string","enum":["date","name"]},
 "page_number":{"type":"integer","minimum":1},
 "label":{"type":"string"}},"required":["city"]}}`

func TestRenameNeverCollides(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		cs, nt := planOp(t, "rename", mustTool(t, weatherTool), 1, seed, nil)
		seen := map[string]bool{}
		for _, n := range nt.Input.Names() {
			if seen[normName(n)] {
				t.Fatalf("seed %d: two parameters named like %q: %v", seed, n, nt.Input.Names())
			}
			seen[normName(n)] = true
		}
		for _, c := range cs {
			if c.To == "town" || c.To == "city" {
				t.Fatalf("seed %d: renamed %s onto an existing parameter %s", seed, c.Param, c.To)
			}
			if !validIdent(c.To) {
				t.Fatalf("seed %d: invalid name %q", seed, c.To)
			}
		}
		roundTrip(t, cs, nt, args(t, `{"city":"Paris","town":"x","sortBy":"date","page_number":2}`))
	}
}

func TestRenameRules(t *testing.T) {
	rules, _ := DefaultRules()
	tests := []struct {
		name, rule, want string
	}{
		{"city", "synonym", "town"},
		{"page_number", "abbreviation", "page_num"},
		{"sortBy", "case", "sort_by"},
		{"page_size", "case", "pageSize"},
		{"maxResults", "synonym", "limit"},
		{"user_name", "synonym", "account_name"}, // one word of a compound name
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			found := false
			for _, c := range rules.renameCandidates(tt.name)[tt.rule] {
				if c.name == tt.want {
					found = true
				}
			}
			if !found {
				t.Errorf("%s by %s: %v, want %s among them", tt.name, tt.rule, rules.renameCandidates(tt.name)[tt.rule], tt.want)
			}
		})
	}
}

func TestRenameSparesHistoryAndProtocol(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		cs, _ := planOp(t, "rename", mustTool(t, weatherTool), 1, seed, func(p *planner) {
			p.history = map[string]bool{"town": true, "location": true, "municipality": true}
			p.sessions = true
		})
		for _, c := range cs {
			if c.Param == "label" {
				t.Fatalf("renamed the session label")
			}
			if c.To == "location" || c.To == "municipality" {
				t.Fatalf("reused a name of an older version: %s", c.To)
			}
		}
	}
}

func TestRenameToolBenchNamesStayStandard(t *testing.T) {
	tool := mustTool(t, `{"name":"search_for_x","title":"Search","meta":{"toolbench_name":"search_for_x"},"input":{"type":"object","properties":{
	 "is_from":{"type":"string"},"userid":{"type":"string"},"page_size":{"type":"integer"}},"required":[]}}`)
	for seed := uint64(0); seed < 100; seed++ {
		cs, _ := planOp(t, "rename", tool, 1, seed, nil)
		for _, c := range cs {
			if strings.ToLower(c.To) != c.To || strings.Contains(c.To, "-") {
				t.Fatalf("seed %d: %s → %q is not a standardized ToolBench name", seed, c.Param, c.To)
			}
		}
	}
}
