package agent

import (
	"embed"
	"sort"

	"github.com/toolenv/toolenv/internal/promptfile"
)

//go:embed prompts/*.txt
var promptFiles embed.FS

// Prompt is a versioned prompt template (see package promptfile).
type Prompt = promptfile.Prompt

// The agents' prompts.
var (
	promptDirectNestful = promptfile.MustLoad(promptFiles, "prompts/direct_nestful.txt")
	promptDirectBFCL    = promptfile.MustLoad(promptFiles, "prompts/direct_bfcl.txt")
	promptReAct         = promptfile.MustLoad(promptFiles, "prompts/react.txt")
	promptToolBench     = promptfile.MustLoad(promptFiles, "prompts/toolbench_system.txt")
	promptDiversity     = promptfile.MustLoad(promptFiles, "prompts/toolbench_diversity.txt")
)

// Prompts lists the agents' prompts (name, version, source, hash), for
// reports.
func Prompts() []Prompt {
	ps := []Prompt{promptDirectNestful, promptDirectBFCL, promptReAct, promptToolBench, promptDiversity}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

// fill replaces {field} placeholders in a template.
func fill(tmpl string, fields map[string]string) string { return promptfile.Fill(tmpl, fields) }
