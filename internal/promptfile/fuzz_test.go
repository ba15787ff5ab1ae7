package promptfile

import (
	"strings"
	"testing"
)

// FuzzParse reads any text as a prompt file: no panic; a prompt it
// accepts has a name and a version, its text is what follows the first
// "---" line, and its digest is 16 hex digits that change with the text.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"# name: simulate\n# version: 3\n# source: StableToolBench\n---\nYou are {role}.\n",
		"name: a\nversion: 1\n---\n---\nsecond\n", "# name:\n# version: 1\n---\nx", "---\n", "# name: a\r\n# version: 1\r\n---\r\nx", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		if p.Name == "" || p.Version == "" {
			t.Fatalf("accepted without a name or version: %+v", p)
		}
		_, body, _ := strings.Cut(data, "\n---\n")
		if p.Text != strings.TrimSuffix(body, "\n") {
			t.Fatalf("text %q, want what follows the separator %q", p.Text, body)
		}
		if len(p.SHA256) != 16 || strings.Trim(p.SHA256, "0123456789abcdef") != "" {
			t.Fatalf("digest %q", p.SHA256)
		}
		q, err := Parse(data + "x")
		if err != nil || q.SHA256 == p.SHA256 {
			t.Fatalf("another text, same digest %q (%v)", q.SHA256, err)
		}
		Fill(p.Text, map[string]string{"role": "{x}", "": "y"})
	})
}
