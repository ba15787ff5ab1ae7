package stb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strings"
	"unicode"

	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// PassRateEntry is one query's record in a pass-rate results file.
type PassRateEntry struct {
	Query       string   `json:"query"`
	ToolNames   []string `json:"tool_names"`
	AnswerSteps string   `json:"answer_steps"`
	FinalStep   string   `json:"final_step"`
	// IsSolved maps an evaluation round ("0", "1", ...) to
	// "AnswerStatus.Solved", "AnswerStatus.Unsolved" or
	// "AnswerStatus.Unsure". A label that is not a JSON string is kept as
	// its JSON text.
	IsSolved map[string]string `json:"is_solved"`

	// order is the order of IsSolved's keys in the file it was read from
	// (eval_pass_rate.py's int(k) can map two keys to one round, and the
	// later one wins); nil for an entry built in Go.
	order []string
	// noLabels says the file's entry had no is_solved at all.
	noLabels bool
}

// MarshalJSON writes an entry with is_solved's keys in the order they were
// read in (then any others, sorted).
func (e PassRateEntry) MarshalJSON() ([]byte, error) {
	type plain PassRateEntry
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range e.roundKeys() {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(e.IsSolved[k])
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	raw := json.RawMessage(b.Bytes())
	if e.IsSolved == nil {
		raw = json.RawMessage("null")
	}
	return json.Marshal(struct {
		plain
		IsSolved json.RawMessage `json:"is_solved"`
	}{plain(e), raw})
}

// roundKeys returns IsSolved's keys in file order, then any others sorted.
func (e *PassRateEntry) roundKeys() []string {
	keys := make([]string, 0, len(e.IsSolved))
	seen := make(map[string]bool, len(e.order))
	for _, k := range e.order {
		if _, ok := e.IsSolved[k]; ok && !seen[k] {
			keys, seen[k] = append(keys, k), true
		}
	}
	rest := len(keys)
	for k := range e.IsSolved {
		if !seen[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys[rest:])
	return keys
}

// UnmarshalJSON reads an entry as eval_pass_rate.py reads it: the order of
// is_solved's keys is kept and a label of any JSON type is accepted.
func (e *PassRateEntry) UnmarshalJSON(data []byte) error {
	type plain PassRateEntry
	var raw struct {
		*plain
		IsSolved json.RawMessage `json:"is_solved"`
	}
	raw.plain = (*plain)(e)
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	e.IsSolved, e.order, e.noLabels = nil, nil, len(raw.IsSolved) == 0 || string(raw.IsSolved) == "null"
	if e.noLabels {
		return nil
	}
	v, err := pyfmt.DecodeOrdered(raw.IsSolved)
	if err != nil {
		return fmt.Errorf("is_solved: %w", err)
	}
	d, ok := v.(pyfmt.Dict)
	if !ok {
		return errors.New("is_solved is not an object of round → label")
	}
	e.IsSolved = make(map[string]string, len(d))
	for _, it := range d {
		label, isStr := it.Value.(string)
		if !isStr {
			text, _ := json.Marshal(it.Value)
			label = string(text)
		}
		if _, seen := e.IsSolved[it.Key]; !seen {
			e.order = append(e.order, it.Key)
		}
		e.IsSolved[it.Key] = label
	}
	return nil
}

// PassRateFile is a pass-rate results file: query id to entry, in file
// order.
type PassRateFile struct {
	IDs     []string
	Entries map[string]*PassRateEntry
}

// ErrNoLabels is the error for a pass-rate results file with nothing to
// score: eval_pass_rate.py divides by the number of queries (and of
// rounds) and fails on it.
var ErrNoLabels = errors.New("no labels to score")

// ReadPassRate reads a pass-rate results file
// (pass_rate_results/<model>/<group>_<model>.json). A file with no
// queries (empty, or {}) is an error wrapping ErrNoLabels.
func ReadPassRate(path string) (*PassRateFile, error) {
	ids, entries, err := readKeyed[PassRateEntry](path, "pass-rate results")
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read pass-rate results %s: the file is empty: %w (want eval_pass_rate.py's {\"<query id>\": {\"is_solved\": {\"0\": \"AnswerStatus.Solved\", ...}}, ...})", path, ErrNoLabels)
		}
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("read pass-rate results %s: the file holds no queries: %w (want eval_pass_rate.py's {\"<query id>\": {\"is_solved\": {\"0\": \"AnswerStatus.Solved\", ...}}, ...})", path, ErrNoLabels)
	}
	return &PassRateFile{IDs: ids, Entries: entries}, nil
}

// Labels returns each query's labels by round, in file order, read as
// eval_pass_rate.py reads them: a round is Python's int() of its key (so
// " 1", "01" and "+1" are round 1, and of two keys naming one round the
// later in the file wins); a label scores only when it is exactly
// "AnswerStatus.Solved" or "AnswerStatus.Unsure". Any other label
// (a bare "Solved" included, which eval_pass_rate.py scores 0) is
// returned as metrics.Unparseable and reported in problems, as is a
// round key Python's int() rejects (eval_pass_rate.py stops on it; it is
// skipped here).
func (f *PassRateFile) Labels() (labels []map[int]metrics.Label, problems []error) {
	for _, id := range f.IDs {
		e := f.Entries[id]
		m := map[int]metrics.Label{}
		if e.noLabels {
			problems = append(problems, fmt.Errorf("query %s has no is_solved (eval_pass_rate.py stops on it); it scores 0 in every round", id))
		}
		for _, k := range e.roundKeys() {
			v := e.IsSolved[k]
			r, ok := pyInt(k)
			if !ok {
				problems = append(problems, fmt.Errorf("query %s: round %q is not an integer as Python's int() reads one; skipped", id, k))
				continue
			}
			if r < 0 {
				continue // a round eval_pass_rate.py never asks for
			}
			l, ok := fileLabel(v)
			if !ok {
				problems = append(problems, fmt.Errorf("query %s round %d: label %q is not one eval_pass_rate.py counts (it compares with \"AnswerStatus.Solved\" and \"AnswerStatus.Unsure\" exactly); scored 0 as it does", id, r, v))
			}
			m[r] = l
		}
		labels = append(labels, m)
	}
	return labels, problems
}

// fileLabel reads a label as eval_pass_rate.py compares it: exactly.
func fileLabel(s string) (metrics.Label, bool) {
	switch s {
	case "AnswerStatus.Solved":
		return metrics.Solved, true
	case "AnswerStatus.Unsure":
		return metrics.Unsure, true
	case "AnswerStatus.Unsolved":
		return metrics.Unsolved, true
	}
	return metrics.Unparseable, false
}

// pyInt is Python's int(s) for a str: surrounding whitespace ignored, an
// optional sign, decimal digits of any script with single underscores
// between them. ok is false where int() raises; a value beyond int's range
// is clamped (no round is that large).
func pyInt(s string) (n int, ok bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) })
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	if s == "" {
		return 0, false
	}
	var digits strings.Builder
	prevUnderscore := true // no leading underscore
	for _, r := range s {
		if r == '_' {
			if prevUnderscore {
				return 0, false
			}
			prevUnderscore = true
			continue
		}
		d, isDigit := decimalValue(r)
		if !isDigit {
			return 0, false
		}
		digits.WriteByte(byte('0' + d))
		prevUnderscore = false
	}
	if prevUnderscore { // trailing underscore
		return 0, false
	}
	v, _ := new(big.Int).SetString(digits.String(), 10)
	if neg {
		v.Neg(v)
	}
	switch {
	case !v.IsInt64() && v.Sign() > 0, v.IsInt64() && v.Int64() > 1<<40:
		return 1 << 40, true
	case !v.IsInt64(), v.Int64() < -(1 << 40):
		return -(1 << 40), true
	}
	return int(v.Int64()), true
}

// decimalValue is the value of a Unicode decimal digit (category Nd, whose
// ranges each run 0 to 9, or several such runs back to back).
func decimalValue(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	if !unicode.Is(unicode.Nd, r) {
		return 0, false
	}
	for _, rg := range unicode.Nd.R16 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	return 0, false
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
// With rounds 0 and no label in any round, the result has no PerRound
// (eval_pass_rate.py would divide by zero): see ErrNoLabels.
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
