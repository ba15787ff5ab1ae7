package promptfile

import "testing"

func TestParseAndFill(t *testing.T) {
	p, err := Parse("# name: x\n# version: 2\n# source: written here\n---\n\nHello {name}, {{literal}} {missing}\n")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "x" || p.Version != "2" || p.Source != "written here" || p.Text != "\nHello {name}, {{literal}} {missing}" || len(p.SHA256) != 16 {
		t.Errorf("Parse = %+v", p)
	}
	if got := Fill(p.Text, map[string]string{"name": "Ann {x}"}); got != "\nHello Ann {x}, {literal} {missing}" {
		t.Errorf("Fill = %q", got)
	}
	for _, bad := range []string{"no separator", "# version: 1\n---\ntext", "# name: a\n---\ntext"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}
