package main

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelpFiles: every help file belongs to a command, whose help it
// sets whole (the command sets none of its own), and every command but
// the groups without text and the ones whose help is computed has help.
func TestHelpFiles(t *testing.T) {
	cmds := map[string]*cobra.Command{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		cmds[helpName(c)] = c
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	root := newRootCmd(&env{})
	walk(root)
	files, err := fs.Glob(helpFiles, "help/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no help files: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "help/"), ".txt")
		c, ok := cmds[name]
		if !ok {
			t.Errorf("%s: no command toolenv %s", f, strings.ReplaceAll(name, "-", " "))
			continue
		}
		b, _ := helpFiles.ReadFile(f)
		long, example, found := splitHelp(string(b))
		if !found {
			t.Errorf("%s: no line --- between the long help and the examples", f)
		}
		if strings.TrimSpace(long) == "" && strings.TrimSpace(example) == "" {
			t.Errorf("%s is empty", f)
		}
		if c.Long != long || c.Example != example {
			t.Errorf("%s does not set the help of %s", f, c.CommandPath())
		}
		for _, l := range strings.Split(strings.Trim(example, "\n"), "\n") {
			if l != "" && !strings.HasPrefix(l, "  ") {
				t.Errorf("%s: example line %q is not indented as cobra shows examples", f, l)
			}
		}
	}
	for name, c := range cmds {
		if c.Runnable() && c.Short == "" {
			t.Errorf("toolenv %s has no short help", name)
		}
	}
}
