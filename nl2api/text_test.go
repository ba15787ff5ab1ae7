package nl2api

import (
	"strings"
	"testing"
)

func TestReportWriteText(t *testing.T) {
	r := &Report{Seconds: 2.5,
		Flavors:   []FlavorReport{{Flavor: Rest, Kept: 3, Questions: 4, Tools: 7}},
		Databases: []DatabaseReport{{Name: "shop"}, {Name: "broken", Error: "no such file"}},
		Variants:  []VariantReport{{Name: "rest-obfuscated", Tools: 7, Tasks: 3, Verified: 3, Dir: "out/rest-obfuscated"}}}
	var b strings.Builder
	if err := r.WriteText(&b, "out"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, w := range []string{"flavor", "rest", "database broken FAILED: no such file", "variant rest-obfuscated: 7 tools, 3 tasks (3 verified) in out/rest-obfuscated",
		"report: out/report.md, out/report.json (2.5 s)"} {
		if !strings.Contains(out, w) {
			t.Errorf("lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "database shop") {
		t.Errorf("a database that built is reported:\n%s", out)
	}
}
