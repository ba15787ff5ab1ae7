package metrics

import (
	"maps"
	"slices"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// NestfulResult holds the scores the NESTful scorer reports for a set of
// samples.
type NestfulResult struct {
	// Intent and Slot are macro-averaged over the gold labels.
	Intent PRF `json:"intent"`
	Slot   PRF `json:"slot"`
	// PartialMatch is the mean, over samples, of the fraction of aligned
	// positions whose call (name and arguments) equals the gold call.
	PartialMatch float64 `json:"partial_match"`
	// FullMatch is the fraction of samples whose every position matches.
	FullMatch float64 `json:"full_match"`
	// Samples is how many samples were scored.
	Samples int `json:"samples"`
}

// NestfulScores computes NESTful's intent, slot and sequence-match scores
// for samples gold[i] / pred[i], reproducing calculate_scores and
// compute_score_sklearn of the NESTful scorer (IBM NESTful, scorer.py and
// utils.py):
//
//   - intent: each sample's label set is the names it calls; a
//     MultiLabelBinarizer is fitted on the gold sets, predicted names not
//     among them are ignored, and precision, recall and F1 are computed
//     per gold label over the samples and averaged (average="macro", a
//     label never predicted has precision 0);
//   - slot: every API named on either side of a sample gives one row
//     whose labels are its arguments written "arg = value" (Python's str
//     of the value; a later call to the same API replaces an earlier one's
//     row; a predicted "$ref" missing its closing '$' gets one), scored
//     like intents;
//   - sequence match: each call is written "name(arg = value, ...)" with
//     the arguments sorted; sequences of different lengths are aligned by
//     name (NESTful's align_lists, padding with blanks) and the fraction of
//     equal positions is the sample's partial match, 1 its full match.
func NestfulScores(gold, pred [][]toolenv.GoldCall) NestfulResult {
	n := len(gold)
	if len(pred) < n {
		pred = append(pred, make([][]toolenv.GoldCall, n-len(pred))...)
	}
	var goldIntent, predIntent, goldSlot, predSlot [][]string
	var partial float64
	full := 0
	for i := 0; i < n; i++ {
		g, p := gold[i], pred[i]
		goldIntent = append(goldIntent, names(g))
		predIntent = append(predIntent, names(p))
		gm, gorder := slotRows(g, false)
		pm, porder := slotRows(p, true)
		for _, name := range unionKeys(gorder, porder) {
			goldSlot = append(goldSlot, gm[name])
			predSlot = append(predSlot, pm[name])
		}
		acc := nestfulAccuracy(callStrings(g, false), callStrings(p, true))
		partial += acc
		if acc == 1 {
			full++
		}
	}
	r := NestfulResult{Samples: n}
	r.Intent = macroMultiLabel(goldIntent, predIntent)
	r.Slot = macroMultiLabel(goldSlot, predSlot)
	if n > 0 {
		r.PartialMatch = partial / float64(n)
		r.FullMatch = float64(full) / float64(n)
	}
	return r
}

func names(calls []toolenv.GoldCall) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Name
	}
	return out
}

// slotRows returns, per API name, the "arg = value" labels of its last
// call, and the names in first-call order.
func slotRows(calls []toolenv.GoldCall, predicted bool) (map[string][]string, []string) {
	rows := map[string][]string{}
	var order []string
	for _, c := range calls {
		if _, ok := rows[c.Name]; !ok {
			order = append(order, c.Name)
		}
		row := []string{}
		for _, k := range slices.Sorted(maps.Keys(c.Args)) {
			row = append(row, k+" = "+nestfulValue(c.Args[k], predicted))
		}
		rows[c.Name] = row
	}
	return rows, order
}

// nestfulValue is Python's str of an argument value, with the scorer's
// repair of a predicted "$ref" that lacks its closing '$'.
func nestfulValue(v any, predicted bool) string {
	if s, ok := v.(string); ok && predicted && strings.HasPrefix(s, "$") && !strings.HasSuffix(s, "$") {
		return s + "$"
	}
	return pyfmt.Str(v)
}

func unionKeys(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range append(append([]string{}, a...), b...) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// callStrings writes each call as NESTful's "name(a = 1, b = x)".
func callStrings(calls []toolenv.GoldCall, predicted bool) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		if c.Args == nil && predicted {
			// The scorer writes a call whose arguments are not a mapping
			// with "{}" in the parentheses.
			out[i] = c.Name + "({})"
			continue
		}
		args := make([]string, 0, len(c.Args))
		for k, v := range c.Args {
			args = append(args, k+" = "+nestfulValue(v, predicted))
		}
		sort.Strings(args)
		out[i] = c.Name + "(" + strings.Join(args, ", ") + ")"
	}
	return out
}

// nestfulAccuracy is NESTful's post_process_api_with_args followed by
// scikit-learn's accuracy_score.
func nestfulAccuracy(gold, pred []string) float64 {
	if len(gold) != len(pred) {
		gold, pred = alignByName(gold, pred)
	}
	if len(gold) == 0 {
		// accuracy_score fails on empty input and the scorer counts 0.
		return 0
	}
	eq := 0
	for i := range gold {
		if gold[i] == pred[i] {
			eq++
		}
	}
	return float64(eq) / float64(len(gold))
}

// alignByName pads two call lists with blanks where their API names do
// not line up, walking both greedily (NESTful's align_lists).
func alignByName(gold, pred []string) ([]string, []string) {
	name := func(s string) string { n, _, _ := strings.Cut(s, "("); return n }
	var ag, ap []string
	i, j := 0, 0
	for i < len(gold) || j < len(pred) {
		switch {
		case i < len(gold) && j < len(pred) && name(gold[i]) == name(pred[j]):
			ag, ap = append(ag, gold[i]), append(ap, pred[j])
			i, j = i+1, j+1
		case i < len(gold):
			ag, ap = append(ag, gold[i]), append(ap, "")
			i++
		default:
			ag, ap = append(ag, ""), append(ap, pred[j])
			j++
		}
	}
	return ag, ap
}

// macroMultiLabel is scikit-learn's precision/recall/f1 with
// average="macro" over label sets binarized by a MultiLabelBinarizer
// fitted on the gold sets (labels only predicted are dropped). A label
// never predicted has precision 0 (zero_division).
func macroMultiLabel(gold, pred [][]string) PRF {
	classes := map[string]int{}
	for _, g := range gold {
		for _, l := range g {
			classes[l] = 0
		}
	}
	if len(classes) == 0 {
		return PRF{}
	}
	type counts struct{ tp, fp, fn int }
	c := make(map[string]*counts, len(classes))
	for l := range classes {
		c[l] = &counts{}
	}
	for i := range gold {
		gs := toSet(gold[i])
		var ps map[string]bool
		if i < len(pred) {
			ps = toSet(pred[i])
		}
		for l, k := range c {
			switch {
			case gs[l] && ps[l]:
				k.tp++
			case ps[l]:
				k.fp++
			case gs[l]:
				k.fn++
			}
		}
	}
	labels := make([]string, 0, len(c))
	for l := range c {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	var sum PRF
	for _, l := range labels {
		k := c[l]
		var p, r float64
		if k.tp+k.fp > 0 {
			p = float64(k.tp) / float64(k.tp+k.fp)
		}
		if k.tp+k.fn > 0 {
			r = float64(k.tp) / float64(k.tp+k.fn)
		}
		sum.Precision += p
		sum.Recall += r
		sum.F1 += F1(p, r)
	}
	n := float64(len(labels))
	return PRF{sum.Precision / n, sum.Recall / n, sum.F1 / n}
}

func toSet(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}
