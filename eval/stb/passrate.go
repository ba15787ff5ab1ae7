package stb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
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
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read pass-rate results: %w", err)
	}
	f := &PassRateFile{Entries: map[string]*PassRateEntry{}}
	err = decodeOrderedObject(data, func(key string, d *json.Decoder) error {
		var e PassRateEntry
		if err := d.Decode(&e); err != nil {
			return fmt.Errorf("query %s: %w", key, err)
		}
		if _, dup := f.Entries[key]; !dup {
			f.IDs = append(f.IDs, key)
		}
		f.Entries[key] = &e
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read pass-rate results %s: %w", path, err)
	}
	return f, nil
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

// ParseAnswerStatus reads "AnswerStatus.Solved" (or "Solved") as a
// label.
func ParseAnswerStatus(s string) (metrics.Label, bool) {
	switch strings.TrimPrefix(strings.TrimSpace(s), "AnswerStatus.") {
	case "Solved":
		return metrics.Solved, true
	case "Unsolved":
		return metrics.Unsolved, true
	case "Unsure":
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
// format, atomically.
func WritePassRate(path string, f *PassRateFile) error {
	var b bytes.Buffer
	b.WriteString("{")
	for i, id := range f.IDs {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n    ")
		k, _ := json.Marshal(id)
		b.Write(k)
		b.WriteString(": ")
		var e bytes.Buffer
		enc := json.NewEncoder(&e)
		enc.SetEscapeHTML(false)
		enc.SetIndent("    ", "    ")
		if err := enc.Encode(f.Entries[id]); err != nil {
			return fmt.Errorf("write pass-rate results: query %s: %w", id, err)
		}
		b.Write(bytes.TrimRight(e.Bytes(), "\n"))
	}
	b.WriteString("\n}\n")
	return toolenv.WriteFileAtomic(path, b.Bytes())
}
