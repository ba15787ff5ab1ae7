package stb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// StableToolBench's preference evaluation (SoWR, the Solvable Win Rate):
// toolbench/tooleval/eval_preference.py compares a candidate model's
// answers with a reference model's, query by query, over several rounds
// of a judge, and reports the share of queries the candidate wins.

// The judge's preference between the two answers of a query in a round
// (eval_preference.py's get_preference).
const (
	PreferRef    = "ref"
	PreferOutput = "output"
	PreferEqual  = "equal"
)

// PreferenceCounts is a query's entry in eval_preference.py's save file
// ({save_path}/{test_set}_{ref}_{output}.json): how many rounds preferred
// each model, and each round's state ("complete" or "incomplete").
type PreferenceCounts struct {
	Ref, Output int
	// Rounds maps "round_i" to "complete" or "incomplete".
	Rounds map[string]string
}

// PreferenceInput is what eval_preference.py reads for one test set.
type PreferenceInput struct {
	// TestIDs are the query ids of the test set, in the order of its
	// test_ids file.
	TestIDs []string
	// HasRef and HasOutput say which queries each model's converted
	// answers hold.
	HasRef, HasOutput map[string]bool
	// RefPass and OutputPass are the models' pass-rate labels
	// ("passed", "failed", ...) by query, from their pass-rate results;
	// a query absent from either is judged.
	RefPass, OutputPass map[string]string
	// Rounds is --evaluate_times (2 in eval_preference.py).
	Rounds int
	// Prior is an existing save file's entries (nil: none); its rounds
	// marked complete are not judged again.
	Prior map[string]*PreferenceCounts
	// PriorOrder is the order of Prior's queries in its file.
	PriorOrder []string
	// Judge gives the judge's preference for a query in a round, called
	// where eval_preference.py calls the evaluator.
	Judge func(ctx context.Context, qid string, round int) (string, error)
}

// PreferenceResult is what eval_preference.py prints and saves.
type PreferenceResult struct {
	// Win, Lose and Tie are the candidate's rates over the queries of
	// the save file (wins: more rounds prefer the candidate).
	Win  float64 `json:"win_rate"`
	Lose float64 `json:"lose_rate"`
	Tie  float64 `json:"tie_rate"`
	// Queries is the number of queries the rates are over.
	Queries int `json:"queries"`
	// Judged counts the judge's verdicts asked.
	Judged int `json:"judged"`
	// Counts are the save file's entries, Order their order.
	Counts map[string]*PreferenceCounts `json:"-"`
	Order  []string                     `json:"-"`
}

// Preference runs eval_preference.py's loop for one test set, step for
// step: every query gets an entry with each round "incomplete"; in each
// round a query whose round is complete is skipped; one the pass-rate
// labels decide (reference "passed" and candidate "failed", or the
// reverse) scores for the winner without the judge — and its round stays
// "incomplete", as in the reference; a query missing from the reference's
// answers scores for the candidate, one missing from the candidate's for
// the reference; the others are judged (the judge's "ref" or "output"
// scores one, "equal" none) and their round marked complete. The rates
// are over every query of the entries (a prior save file's included).
func Preference(ctx context.Context, in PreferenceInput) (*PreferenceResult, error) {
	if in.Rounds < 1 {
		return nil, errors.New("stb: preference needs at least one round (--evaluate-times)")
	}
	counts := map[string]*PreferenceCounts{}
	var order []string
	for _, q := range in.PriorOrder {
		if c := in.Prior[q]; c != nil {
			cc := &PreferenceCounts{Ref: c.Ref, Output: c.Output, Rounds: map[string]string{}}
			for k, v := range c.Rounds {
				cc.Rounds[k] = v
			}
			counts[q] = cc
			order = append(order, q)
		}
	}
	round := func(i int) string { return fmt.Sprintf("round_%d", i) }
	for i := 0; i < in.Rounds; i++ {
		for _, q := range in.TestIDs {
			c, ok := counts[q]
			if !ok {
				counts[q] = &PreferenceCounts{Rounds: map[string]string{round(i): "incomplete"}}
				order = append(order, q)
			} else if _, ok := c.Rounds[round(i)]; !ok {
				c.Rounds[round(i)] = "incomplete"
			}
		}
	}
	res := &PreferenceResult{Counts: counts, Order: order}
	for i := 0; i < in.Rounds; i++ {
		for _, q := range in.TestIDs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			c := counts[q]
			if c.Rounds[round(i)] == "complete" {
				continue
			}
			rp, rok := in.RefPass[q]
			op, ook := in.OutputPass[q]
			if rok && ook {
				if rp == "passed" && op == "failed" {
					c.Ref++
					continue
				}
				if rp == "failed" && op == "passed" {
					c.Output++
					continue
				}
			}
			if !in.HasRef[q] {
				c.Output++
				continue
			}
			if !in.HasOutput[q] {
				c.Ref++
				continue
			}
			if in.Judge == nil {
				return nil, fmt.Errorf("stb: query %s needs the judge's preference in round %d and there is no judge", q, i)
			}
			v, err := in.Judge(ctx, q, i)
			if err != nil {
				return nil, fmt.Errorf("stb: judging query %s, round %d: %w", q, i, err)
			}
			res.Judged++
			switch v {
			case PreferRef:
				c.Ref++
			case PreferOutput:
				c.Output++
			}
			c.Rounds[round(i)] = "complete"
		}
	}
	res.Win, res.Lose, res.Tie, res.Queries = WinRate(counts)
	return res, nil
}

// WinRate is eval_preference.py's closing loop: over the save file's
// queries, the share where more rounds preferred the candidate (win),
// the reference (lose), or neither (tie). With no query it is 0 and n 0,
// where the reference divides by zero.
func WinRate(counts map[string]*PreferenceCounts) (win, lose, tie float64, n int) {
	var w, l, t int
	for _, c := range counts {
		switch {
		case c.Ref > c.Output:
			l++
		case c.Ref < c.Output:
			w++
		default:
			t++
		}
	}
	n = len(counts)
	if n == 0 {
		return 0, 0, 0, 0
	}
	return float64(w) / float64(n), float64(l) / float64(n), float64(t) / float64(n), n
}

// ReadPreferenceFile reads eval_preference.py's save file for a
// reference and a candidate model: {query_id: {ref_model: n, output_model:
// m, "round_i": "complete"|"incomplete"}}.
func ReadPreferenceFile(path, refModel, outModel string) (map[string]*PreferenceCounts, []string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, toolenv.Errorw(toolenv.StatusNotFound, "give eval_preference.py's save file (preference_results/<test_set>_<ref>_<output>.json)", "%s: no such file", path)
		}
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	const hint = `a preference file is {query_id: {REF_MODEL: n, OUTPUT_MODEL: m, "round_0": "complete", ...}}, as eval_preference.py saves it; name the two models as the file does`
	v, err := pyfmt.Loads(string(raw))
	if err != nil {
		return nil, nil, toolenv.Errorw(toolenv.StatusInvalidArguments, hint, "%s: not JSON: %v", path, err)
	}
	d, ok := v.(pyfmt.Dict)
	if !ok {
		return nil, nil, toolenv.Errorw(toolenv.StatusInvalidArguments, hint, "%s: not a JSON object", path)
	}
	counts := map[string]*PreferenceCounts{}
	var order []string
	num := func(x any) (int, bool) {
		n, ok := x.(json.Number)
		if !ok {
			return 0, false
		}
		i, err := n.Int64()
		return int(i), err == nil
	}
	for _, it := range d {
		e, ok := it.Value.(pyfmt.Dict)
		if !ok {
			return nil, nil, toolenv.Errorw(toolenv.StatusInvalidArguments, hint, "%s: query %s: not an object", path, it.Key)
		}
		c := &PreferenceCounts{Rounds: map[string]string{}}
		var hasRef, hasOut bool
		for _, f := range e {
			switch f.Key {
			case refModel:
				c.Ref, hasRef = num(f.Value)
			case outModel:
				c.Output, hasOut = num(f.Value)
			default:
				if s, ok := f.Value.(string); ok {
					c.Rounds[f.Key] = s
				}
			}
		}
		if !hasRef || !hasOut {
			return nil, nil, toolenv.Errorw(toolenv.StatusInvalidArguments, hint, "%s: query %s has no count for %q and %q", path, it.Key, refModel, outModel)
		}
		if _, seen := counts[it.Key]; !seen {
			order = append(order, it.Key)
		}
		counts[it.Key] = c
	}
	return counts, order, nil
}

// FormatWinRate is eval_preference.py's closing line: Python's str of
// the rates.
func FormatWinRate(testSet, refModel, outModel string, r *PreferenceResult) string {
	return fmt.Sprintf("Test set: %s. Reference model: %s, Candidate model: %s. Win rate: %s, Tie rate: %s",
		testSet, refModel, outModel, pyfmt.Float(r.Win), pyfmt.Float(r.Tie))
}

// WinRateFile reads eval_preference.py's save file for a test set
// ({test_set}_{ref}_{output}.json) and returns the line eval_preference.py
// prints for it, the test set named after the file.
func WinRateFile(path, refModel, outModel string) (string, error) {
	if refModel == "" || outModel == "" {
		return "", toolenv.Errorw(toolenv.StatusInvalidArguments, "name the two models as the file's entries do", "--reference-model and --output-model are required")
	}
	counts, order, err := ReadPreferenceFile(path, refModel, outModel)
	if err != nil {
		return "", err
	}
	if len(counts) == 0 {
		return "", toolenv.Errorw(toolenv.StatusInvalidArguments, "eval_preference.py divides by the number of queries", "%s: no queries", path)
	}
	r := &PreferenceResult{Counts: counts, Order: order}
	r.Win, r.Lose, r.Tie, r.Queries = WinRate(counts)
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	name = strings.TrimSuffix(name, "_"+refModel+"_"+outModel)
	return FormatWinRate(name, refModel, outModel, r), nil
}
