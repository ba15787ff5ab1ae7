package drift

import (
	"encoding/json"
	"testing"
)

const typedTool = `{"name":"list_items","input":{"type":"object","properties":{
 "limit":{"type":"integer","default":10,"minimum":1},
 "ratio":{"type":"number"},
 "verbose":{"type":"boolean"},
 "order":{"type":"string","enum":["asc","desc"]},
 "country":{"type":"string","enum":["FR","fr"]},
 "ref":{"type":"integer"},
 "columns":{"type":"string","enum":["a","b","c","d","e","f","g","h","i","j","k","l","m"]}}}}`

func TestTypeDrift(t *testing.T) {
	cs, nt := planOp(t, "type", mustTool(t, typedTool), 1, 1, func(p *planner) { p.refs = map[string]bool{"ref": true} })
	got := map[string]Change{}
	for _, c := range cs {
		got[c.Param] = c
	}
	for _, p := range []string{"limit", "ratio", "verbose"} {
		if c := got[p]; c.Op != OpRetype || c.ToType != "string" {
			t.Errorf("%s: %+v, want retype to string", p, c)
		}
	}
	if _, ok := got["ref"]; ok {
		t.Error("a parameter filled with $label$ references drifted")
	}
	if _, ok := got["columns"]; ok {
		t.Error("a 13-value enum (data values, not options) changed case")
	}
	if c := got["order"]; c.Op != OpEnumCase {
		t.Errorf("order: %+v, want enum_case", c)
	}
	if c, ok := got["country"]; ok && c.Rule != "title" {
		// FR/fr collide in upper and lower case; only title case keeps them apart.
		t.Errorf("country: %+v", c)
	}
	if s := nt.Input.Prop("limit"); s.Type != "string" || s.Pattern != integerPattern || s.Default != "10" {
		t.Errorf("limit schema after drift: %s", mustJSON(s))
	}
	fwd := roundTrip(t, cs, nt, args(t, `{"limit":5,"ratio":2.50,"verbose":false,"order":"desc","ref":7}`))
	if fwd["limit"] != "5" || fwd["ratio"] != "2.5" || fwd["verbose"] != "false" {
		t.Errorf("forward: %s", canonString(fwd))
	}
	// And back: a second step turns the strings into their types again.
	cs2, nt2 := planOp(t, "type", nt, 1, 1, nil)
	back := map[string]string{}
	for _, c := range cs2 {
		if c.Op == OpRetype {
			back[c.Param] = c.ToType
		}
	}
	if back["limit"] != "integer" || back["ratio"] != "number" || back["verbose"] != "boolean" {
		t.Errorf("second step: %v", back)
	}
	if s := nt2.Input.Prop("limit"); s.Pattern != "" || s.Type != "integer" {
		t.Errorf("limit after two steps: %s", mustJSON(s))
	}
}

func TestConvertValueIsLossless(t *testing.T) {
	for _, tt := range []struct {
		typ string
		v   any
	}{{"integer", json.Number("-12")}, {"integer", json.Number("12345678901234567890")}, {"number", json.Number("1e-7")}, {"number", json.Number("2.50")}, {"boolean", true}} {
		s := convertValue(tt.v, tt.typ, "string")
		back := convertValue(s, "string", tt.typ)
		if canonString(back) != canonString(tt.v) {
			t.Errorf("%v → %v → %v", tt.v, s, back)
		}
	}
	if v := convertValue("abc", "string", "integer"); v != "abc" {
		t.Errorf("a non-number string converted: %v", v)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
