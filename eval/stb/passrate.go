package stb

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/toolenv/toolenv/eval/metrics"
)

// PassRateEntry is one query's record in a pass-rate results file.
type PassRateEntry struct {
	Query       string   `json:"query"`
	ToolNames   []string `json:"tool_names"`
	AnswerSteps string   `json:"answer_steps"`
	FinalStep   string   `json:"final_step"`
	// IsSolved maps an evaluation round ("0", "1", ...) to
	// "AnswerStatus.Solved", "AnswerStatus.Unsolved" or
	// "AnswerStatus.Unsure".
	IsSolved map[string]string `json:"is_solved"`
}

// PassRateFile is a pass-rate results file: query id to entry, in file
// order.
type PassRateFile struct {
	IDs     []string
	Entries map[string]*PassRateEntry
}

// ReadPassRate reads a pass-rate results file
// (pass_rate_results/<model>/<group>_<model>.json).
func ReadPassRate(path string) (*PassRateFile, error) {
	ids, entries, err := readKeyed[PassRateEntry](path, "pass-rate results")
	if err != nil {
		return nil, err
	}
	return &PassRateFile{IDs: ids, Entries: entries}, nil
}

// Labels returns each query's labels by round, in file order. A label
// toolenv does not know (not AnswerStatus.Solved/Unsolved/Unsure) is
// returned as metrics.Unparseable and reported in problems.
func (f *PassRateFile) Labels() (labels []map[int]metrics.Label, problems []error) {
	for _, id := range f.IDs {
		m := map[int]metrics.Label{}
		for k, v := range f.Entries[id].IsSolved {
			r, err := strconv.Atoi(k)
			if err != nil || r < 0 {
				problems = append(problems, fmt.Errorf("query %s: round %q is not a number; skipped", id, k))
				continue
			}
			l, ok := ParseAnswerStatus(v)
			if !ok {
				problems = append(problems, fmt.Errorf("query %s round %d: unknown label %q, counted as unsolved", id, r, v))
			}
			m[r] = l
		}
		labels = append(labels, m)
	}
	return labels, problems
}

// ParseAnswerStatus reads "AnswerStatus.Solved" (or "Solved", in any
// case, as a judge model may write it) as a label.
func ParseAnswerStatus(s string) (metrics.Label, bool) {
	switch strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "AnswerStatus.")) {
	case "solved":
		return metrics.Solved, true
	case "unsolved":
		return metrics.Unsolved, true
	case "unsure":
		return metrics.Unsure, true
	}
	return metrics.Unparseable, false
}

// AnswerStatus writes a label as eval_pass_rate.py stores it
// ("AnswerStatus.Solved"). Unparseable is stored as Unsolved, which is
// what it scores.
func AnswerStatus(l metrics.Label) string {
	switch l {
	case metrics.Solved, metrics.Unsure:
		return "AnswerStatus." + string(l)
	}
	return "AnswerStatus.Unsolved"
}

// SolvePassRate is what eval_pass_rate.py prints for a results file:
// rounds is its --evaluate_times (0 means the number of rounds the file
// holds). It returns the pass rate and standard deviation as percentages.
func SolvePassRate(f *PassRateFile, rounds int) (metrics.PassRateResult, []error) {
	labels, problems := f.Labels()
	if rounds <= 0 {
		rounds = metrics.Rounds(labels)
	}
	return metrics.PassRate(labels, rounds), problems
}

// FormatSolveRate writes a result the way eval_pass_rate.py prints it:
// "Solve rate: 66.7% Std: 0.0%".
func FormatSolveRate(r metrics.PassRateResult) string {
	return fmt.Sprintf("Solve rate: %.1f%% Std: %.1f%%", r.Mean, r.Std)
}

// WritePassRate writes a pass-rate results file in StableToolBench's
// format (indent 4), atomically.
func WritePassRate(path string, f *PassRateFile) error {
	return writeKeyed(path, "pass-rate results", "    ", f.IDs, f.Entries)
}
