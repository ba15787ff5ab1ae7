package perturb

import (
	"bytes"
	"fmt"
	"sort"
	"time"
)

// Markdown is the report as Markdown: the counts and the variants, for
// the tasks read from source, perturbed in took.
func (rep *Report) Markdown(source string, took time.Duration) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Query perturbation: %s\n\nTasks: %s, seed %d, %s.\n\n", rep.Mode, source, rep.Seed, took.Round(time.Millisecond))
	fmt.Fprintf(&b, "| | count |\n| --- | --- |\n| tasks | %d |\n| queries changed | %d |\n", rep.Tasks, rep.Changed)
	if rep.Mode == Paraphrase {
		fmt.Fprintf(&b, "| LLM answers | %d |\n| answers rejected | %d |\n| queries kept (every attempt rejected) | %d |\n", rep.Attempts, rep.Rejected, rep.Failed)
	}
	b.WriteString("\n| variant | tasks |\n| --- | --- |\n")
	keys := make([]string, 0, len(rep.Variants))
	for k := range rep.Variants {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "| %s | %d |\n", k, rep.Variants[k])
	}
	if rep.Provenance != nil {
		fmt.Fprintf(&b, "\nMade by toolenv %s.\n", rep.Provenance.Version)
	}
	return b.Bytes()
}

// String is the report in one line: how many queries changed and, for
// paraphrases, what the model did.
func (rep *Report) String() string {
	s := fmt.Sprintf("perturb %s: %d of %d queries changed", rep.Mode, rep.Changed, rep.Tasks)
	if rep.Mode == Paraphrase {
		s += fmt.Sprintf("; %d LLM answers, %d rejected for losing a value or saying nothing new, %d queries kept as they were", rep.Attempts, rep.Rejected, rep.Failed)
	}
	return s
}
