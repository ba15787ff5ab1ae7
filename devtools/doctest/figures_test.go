package doctest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseFigures(t *testing.T) {
	src := "# t\n<!-- figures\n# a comment\nx.kept  out/r.json  flavors[flavor=slot].kept\nx.pct  out/r.json  a.b[1]  fmt=%.1f scale=100 tol=0.5\nx.re   out/log.txt  re=kept\\s(\\d+)\n-->\n" +
		"| kept | <!--fig:x.kept-->286<!--/fig--> and <!--fig:x.pct-->98.6<!--/fig--> |\n```text\n<!--fig:x.kept-->1<!--/fig--> in a fence is text\n```\nquoted in code: `<!--fig:ID-->VALUE<!--/fig-->` and `<!--fig:x`\n"
	defs, uses, err := ParseFigures("t.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 3 || defs[0].ID != "x.kept" || defs[0].Line != 4 || defs[1].Fmt != "%.1f" || defs[1].Scale != 100 || defs[1].Tol != 0.5 || defs[2].Regex == nil {
		t.Errorf("defs = %+v", defs)
	}
	if len(uses) != 2 || uses[0] != (FigureUse{ID: "x.kept", File: "t.md", Line: 8, Value: "286"}) || uses[1].Value != "98.6" {
		t.Errorf("uses = %+v", uses)
	}
	for _, bad := range []struct{ src, want string }{
		{"<!-- figures\nx out/r.json\n-->\n", "is defined as ID FILE PATH"},
		{"<!-- figures\nx out/r.json a[\n-->\n", "a [ without its ]"},
		{"<!-- figures\nx out/r.json a fmt=%s\n-->\n", "fmt=%s"},
		{"<!-- figures\nx out/r.json a tolerance=1\n-->\n", `unknown option "tolerance=1"`},
		{"<!-- figures\nx out/r.json re=a(1) per=b\n-->\n", "a re= figure cannot use it"},
		{"<!-- figures\nx out/r.json re=(\n-->\n", "want a regular expression"},
		{"<!-- figures\nx out/r.json a\n", "never closed"},
		{"a <!--fig:x-->1 and no end\n", "without its end"},
	} {
		if _, _, err := ParseFigures("t.md", []byte(bad.src)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err = %v, want %q", bad.src, err, bad.want)
		}
	}
}

func TestFigureEvalAndCheck(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "r.json"), `{"flavors":[{"flavor":"sel","kept":1},{"flavor":"slot","kept":63107,"pct":0.98606}],"ok":true}`)
	writeFile(t, filepath.Join(dir, "log.txt"), "SoPR: CoT 66.7 % ± 0.0\n")
	tests := []struct {
		def       string
		shown     string
		wantShown string
		ok        bool
	}{
		{"f r.json flavors[flavor=slot].kept", "63,107", "63,107", true},
		{"f r.json flavors[flavor=slot].kept", "63,108", "63,107", false},
		{"f r.json flavors[1].kept fmt=%d", "63107", "63107", true},
		{"f r.json flavors[flavor=slot].pct fmt=%.1f scale=100", "98.6", "98.6", true},
		{"f r.json flavors[flavor=slot].pct fmt=%.1f scale=100", "98.7", "98.6", false},
		{"f r.json flavors[flavor=slot].pct fmt=%.1f scale=100 tol=0.5", "98.9 %", "98.6", true},
		{"f r.json flavors[flavor=slot].pct fmt=%.3f", "0.986", "0.986", true},
		{"f r.json ok", "1", "1", true},
		{"f r.json flavors[0].kept per=flavors[1].kept scale=100 fmt=%.4f", "0.0016", "0.0016", true},
		{`f log.txt re=CoT\s([\d.]+)\s% fmt=%.1f`, "66.7", "66.7", true},
	}
	for _, tc := range tests {
		d, err := parseFigureDef(tc.def)
		if err != nil {
			t.Fatal(err)
		}
		v, err := d.Eval(dir)
		if err != nil {
			t.Fatalf("%s: %v", tc.def, err)
		}
		if v.Shown != tc.wantShown {
			t.Errorf("%s: shown %q, want %q", tc.def, v.Shown, tc.wantShown)
		}
		err = FigureUse{ID: "f", File: "t.md", Line: 3, Value: tc.shown}.Check(v)
		if (err == nil) != tc.ok {
			t.Errorf("%s with %q documented: err = %v, want ok=%v", tc.def, tc.shown, err, tc.ok)
		}
	}
	for _, bad := range []struct{ def, want string }{
		{"f r.json flavors[flavor=x].kept", "no element with flavor=x"},
		{"f r.json flavor.kept", `no key "flavor" (keys: flavors, ok)`},
		{"f r.json flavors[9].kept", "no element 9"},
		{"f r.json flavors", "is not a number"},
		{"f missing.json a", "no such file"},
		{`f log.txt re=FAC\s(\d+)`, "does not match"},
	} {
		d, err := parseFigureDef(bad.def)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Eval(dir); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: err = %v, want %q", bad.def, err, bad.want)
		}
	}
}

func TestUpdateFigures(t *testing.T) {
	d, _ := parseFigureDef("a r.json x fmt=%.1f tol=0.2")
	src := "a <!--fig:a-->1.0<!--/fig--> b <!--fig:a-->1.5<!--/fig--> <!--fig:other-->7<!--/fig-->\n```text\n<!--fig:a-->9<!--/fig-->\n```\n`<!--fig:a-->5<!--/fig-->` <!--fig:a-->5<!--/fig-->\n"
	got, n := UpdateFigures([]byte(src), map[string]FigureValue{"a": {Def: d, Value: 1.1, Shown: "1.1"}})
	want := "a <!--fig:a-->1.0<!--/fig--> b <!--fig:a-->1.1<!--/fig--> <!--fig:other-->7<!--/fig-->\n```text\n<!--fig:a-->9<!--/fig-->\n```\n`<!--fig:a-->5<!--/fig-->` <!--fig:a-->1.1<!--/fig-->\n"
	if string(got) != want || n != 2 {
		t.Errorf("updated (%d):\n%s\nwant (2):\n%s", n, got, want)
	}
}

// TestFigureChangeFails shows that a page whose documented figure no
// longer matches what its command writes fails, naming the figure.
func TestFigureChangeFails(t *testing.T) {
	besidePages(t)
	src, err := os.ReadFile("testdata/figures.md")
	if err != nil {
		t.Fatal(err)
	}
	check := func(src []byte) error {
		defs, uses, err := ParseFigures("figures.md", src)
		if err != nil {
			return err
		}
		blocks, err := Parse("figures.md", src)
		if err != nil {
			return err
		}
		values := map[string]FigureValue{}
		opts := fixtureOptions(t)
		opts.After = func(dir string) error {
			for _, d := range defs {
				v, err := d.Eval(dir)
				if err != nil {
					return err
				}
				values[d.ID] = v
			}
			return nil
		}
		if _, err := Run(context.Background(), opts, "figures.md", blocks); err != nil {
			return err
		}
		var errs []string
		for _, u := range uses {
			if err := u.Check(values[u.ID]); err != nil {
				errs = append(errs, err.Error())
			}
		}
		if len(errs) > 0 {
			return &figureErrors{errs}
		}
		return nil
	}
	if err := check(src); err != nil {
		t.Fatalf("the page as written: %v", err)
	}
	changed := strings.Replace(string(src), "<!--fig:demo.tools-->6<!--/fig-->", "<!--fig:demo.tools-->7<!--/fig-->", 1)
	err = check([]byte(changed))
	if err == nil || !strings.Contains(err.Error(), "figures.md:12: figure demo.tools shows 7, a fresh run gives 6") {
		t.Errorf("the changed page: err = %v, want the figure named", err)
	}
}

type figureErrors struct{ errs []string }

func (e *figureErrors) Error() string { return strings.Join(e.errs, "\n") }
