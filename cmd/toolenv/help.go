package main

import (
	"embed"
	"strings"

	"github.com/spf13/cobra"
)

// The commands' long help and examples: help/<command>.txt, the command's
// path after "toolenv" with its words joined by "-" (map-eval-repair.txt),
// the long help, then a line "---", then the examples. A command that
// sets its own (one whose help is computed) has no file.
//
//go:embed help/*.txt
var helpFiles embed.FS

// addHelp gives c and every command below it their help files' long help
// and examples.
func addHelp(c *cobra.Command) {
	for _, s := range c.Commands() {
		addHelp(s)
	}
	b, err := helpFiles.ReadFile("help/" + helpName(c) + ".txt")
	if err != nil {
		return
	}
	long, example, _ := splitHelp(string(b))
	c.Long, c.Example = long, example
}

// helpName is the name of c's help file, without its extension.
func helpName(c *cobra.Command) string {
	return strings.ReplaceAll(strings.TrimPrefix(c.CommandPath(), "toolenv "), " ", "-")
}

// splitHelp splits a help file into the long help and the examples.
func splitHelp(text string) (long, example string, ok bool) {
	long, example, ok = strings.Cut("\n"+text, "\n---\n")
	return strings.Trim(long, "\n"), strings.TrimRight(example, "\n"), ok
}
