package doctest

import (
	"strings"
	"testing"
)

// FuzzParse holds Parse to never panic and to return blocks whose lines
// all come from the document, in order.
func FuzzParse(f *testing.F) {
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

// FuzzCommands holds Commands to never panic and to split a block into
// commands that cover ordered, disjoint line ranges.
func FuzzCommands(f *testing.F) {
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
