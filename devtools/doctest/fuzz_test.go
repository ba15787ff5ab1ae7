package doctest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseMarkdown holds Parse to never panic and to return blocks whose lines
// all come from the document, in order.
func FuzzParseMarkdown(f *testing.F) {
	for _, s := range []string{"```sh\nls\n```\n", "```\n```", "  ~~~sh exit=2\n x\n  ~~~\n", "```sh timeout=1m illustrative\n```", "````go\n```\n````"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		blocks, _ := Parse("f.md", []byte(src))
		last := 0
		for _, b := range blocks {
			if b.Line <= last {
				t.Fatalf("block at line %d after one at %d", b.Line, last)
			}
			last = b.Line + len(b.Lines)
			for _, l := range b.Lines {
				if !strings.Contains(src, l) {
					t.Fatalf("line %q is not in the document", l)
				}
			}
		}
	})
}

// FuzzShellCommands holds Commands to never panic and to split a block into
// commands that cover ordered, disjoint line ranges.
func FuzzShellCommands(f *testing.F) {
	for _, s := range []string{"toolenv serve &  # x", "a \\\n b &", "curl -d '{\n}' &", "echo \"a\\\"&\" >&2 && b", "x # 'unclosed"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		lines := strings.Split(src, "\n")
		prev := -1
		for _, c := range Commands(lines) {
			if c.First <= prev || c.Last < c.First || c.Last >= len(lines) {
				t.Fatalf("command spans %d..%d after %d (of %d lines)", c.First, c.Last, prev, len(lines))
			}
			if c.Background && (c.amp < 0 || c.amp >= len(lines[c.Last]) || lines[c.Last][c.amp] != '&') {
				t.Fatalf("background command's & at %d of %q", c.amp, lines[c.Last])
			}
			prev = c.Last
		}
	})
}

// FuzzFigures holds the figures' parser and JSON paths to never panic,
// and a definition it accepts to evaluate without panicking.
func FuzzFigures(f *testing.F) {
	for _, s := range []string{
		"<!-- figures\nx r.json a[k=v].b[0] fmt=%.1f scale=100 tol=0.5 per=c\n-->\n<!--fig:x-->1<!--/fig-->",
		"<!-- figures\ny log.txt re=a(\\d+)\n-->",
		"<!--fig:x-->1,389<!--/fig--> <!--fig:y-->",
	} {
		f.Add(s, `{"a":[{"k":"v","b":[1.5]}],"c":3}`)
	}
	f.Fuzz(func(t *testing.T, doc, data string) {
		defs, uses, _ := ParseFigures("f.md", []byte(doc))
		dir := t.TempDir()
		for _, d := range defs {
			if strings.ContainsAny(d.Path, "/\\") || d.Path == ".." || d.Path == "." {
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, d.Path), []byte(data), 0o644); err != nil {
				continue
			}
			if v, err := d.Eval(dir); err == nil {
				for _, u := range uses {
					_ = u.Check(v)
				}
			}
		}
	})
}
