package sequence

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/toolbench"
)

// Report is what a sequencing run measured: the retrieval baseline and,
// with a model, its scores without and with self-reflection.
type Report struct {
	Tasks     int      `json:"tasks"`
	Mode      string   `json:"search_mode"`
	K         int      `json:"k"`
	Baseline  Summary  `json:"baseline"`
	ModelName string   `json:"model,omitempty"`
	Style     string   `json:"style,omitempty"`
	Scores    *Summary `json:"model_scores,omitempty"`
	// Provenance says which toolenv made the report, with which
	// command and settings.
	Provenance *toolenv.Provenance `json:"provenance,omitempty"`
}

// ReadTasks reads tasks with gold APIs: StableToolBench query files or
// folders (relevant APIs named as the index names ToolBench APIs) and
// task files (.jsonl). Tasks without gold APIs are left out; none at all
// is an invalid-arguments error.
func ReadTasks(paths []string) ([]*toolenv.Task, error) {
	var tasks []*toolenv.Task
	var stb []string
	for _, p := range paths {
		if strings.HasSuffix(p, ".jsonl") {
			ts, _, err := toolenv.ReadTasks(p)
			if err != nil {
				return nil, err
			}
			tasks = append(tasks, ts...)
			continue
		}
		stb = append(stb, p)
	}
	if len(stb) > 0 {
		col, src, err := toolbench.LoadCollection(toolbench.CollectionOptions{}, stb...)
		if err != nil {
			return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Err: err}
		}
		tasks = append(tasks, src.Tasks(col)...)
	}
	var out []*toolenv.Task
	for _, t := range tasks {
		if len(Gold(t)) > 0 {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "no task with gold APIs in %v", paths)
	}
	return out, nil
}

// Write writes sequence.json (the report, every outcome, the baseline's
// outcomes and the prompts) and sequence.md into the folder out.
func Write(out string, r Report, outcomes, baseline []*Outcome) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := toolenv.WriteJSONFile(filepath.Join(out, "sequence.json"), map[string]any{"report": r, "outcomes": outcomes, "baseline": baseline, "prompts": Prompts()}); err != nil {
		return err
	}
	var b strings.Builder
	r.Markdown(&b)
	if r.Provenance != nil {
		fmt.Fprintf(&b, "\nMade by toolenv %s.\n", r.Provenance.Version)
	}
	return toolenv.WriteFileAtomic(filepath.Join(out, "sequence.md"), []byte(b.String()))
}

func prfRow(w io.Writer, name string, set, order metrics.PRF) {
	fmt.Fprintf(w, "| %s | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f |\n", name, set.Precision, set.Recall, set.F1, order.Precision, order.Recall, order.F1)
}

// Markdown writes the report as a Markdown table.
func (r Report) Markdown(w io.Writer) {
	fmt.Fprintf(w, "# API sequencing\n\n%d queries, %d candidates retrieved per query (%s search); candidate recall@%d = %.4f.\n\n", r.Tasks, r.K, r.Mode, r.K, r.Baseline.RetrievalRecall)
	fmt.Fprintf(w, "| sequence | set P | set R | set F1 | order P | order R | order F1 |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	prfRow(w, "retrieval only (the top n, n = number of gold APIs)", r.Baseline.Set, r.Baseline.Order)
	if r.Scores != nil {
		prfRow(w, r.ModelName+", "+r.Style, r.Scores.Set, r.Scores.Order)
		prfRow(w, r.ModelName+", "+r.Style+" + self-reflection", r.Scores.SetReflected, r.Scores.OrderReflected)
		fmt.Fprintf(w, "\n%d queries failed; %d prompt + %d completion tokens.\n", r.Scores.Errors, r.Scores.Usage.PromptTokens, r.Scores.Usage.CompletionTokens)
	}
}
