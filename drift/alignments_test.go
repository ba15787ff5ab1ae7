package drift

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// TestAlignmentsFollowNestedThenRenamedObject: a parameter nested into an
// object in one step, whose object is renamed in the next, is reported
// under its base name with its final dotted path.
func TestAlignmentsFollowNestedThenRenamedObject(t *testing.T) {
	m := &Manifest{Steps: []Step{
		{From: "v1", To: "v2", Tools: []ToolChange{{Tool: "geo", Name: "geo", Changes: []Change{
			{Op: OpNest, Param: "loc", Members: []Member{{Param: "lat", Key: "lat"}, {Param: "lon", Key: "lon"}}},
			{Op: OpRenameParam, Param: "zoom", From: "zoom", To: "zoom_level"},
		}}}},
		{From: "v2", To: "v3", Tools: []ToolChange{{Tool: "geo", Name: "geo", Changes: []Change{
			{Op: OpRenameParam, Param: "loc", From: "loc", To: "location"},
			{Op: OpRenameParam, Param: "zoom_level", From: "zoom_level", To: "z"},
		}}}},
	}}
	var got []string
	for _, r := range m.Alignments() {
		if r.Kind == "param" {
			got = append(got, r.Old+"->"+r.New+" "+strings.Join(r.Ops, ","))
		}
	}
	sort.Strings(got)
	want := []string{
		"lat->location.lat " + OpNest + "," + OpRenameParam,
		"lon->location.lon " + OpNest + "," + OpRenameParam,
		"zoom->z " + OpRenameParam + "," + OpRenameParam,
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("alignments:\n got %v\nwant %v", got, want)
	}
}

// TestConvertValueKeepsLiteralsJSONCanWrite: translating a string back to
// a number only happens for a literal encoding/json can write.
func TestConvertValueKeepsLiteralsJSONCanWrite(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want any
	}{{"7", json.Number("7")}, {"-2.5", json.Number("-2.5")}, {"007", "007"}, {"+5", "+5"}, {"1e3", json.Number("1e3")}, {"x", "x"}} {
		got := convertValue(tt.in, "string", "integer")
		if got != tt.want {
			t.Errorf("convertValue(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
		if _, err := json.Marshal(got); err != nil {
			t.Errorf("convertValue(%q) = %#v, which encoding/json cannot write: %v", tt.in, got, err)
		}
	}
}
