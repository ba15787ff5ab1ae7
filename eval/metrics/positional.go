package metrics

import (
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// PositionalResult is one sample's position-aware scores.
type PositionalResult struct {
	Intent PRF `json:"intent"`
	// Slot is defined only when at least one gold call was predicted
	// (SlotDefined): slots are scored on correctly predicted intents and
	// never penalised for missing ones, as in Live API-Bench.
	Slot        PRF  `json:"slot"`
	SlotDefined bool `json:"slot_defined"`
}

// Positional computes Live API-Bench's position-aware intent and slot
// scores for one sample:
//
//   - the predicted and gold API names are aligned on a longest common
//     subsequence, so a call counts once per position and repeated calls
//     (filter_data three times) are each matched at most once;
//   - intent precision is aligned calls over predicted calls, recall
//     aligned calls over gold calls;
//   - slots are compared only on aligned calls: each argument is a
//     "name = value" item, values compared as canonical JSON (5 and 5.0
//     agree, "5" and 5 do not); precision is matching items over the
//     predicted items of aligned calls, recall over their gold items.
//
// References to earlier outputs are compared by what they point at, not by
// their spelling: "$FILTERED$", "FILTERED" and "$FILTERED.rows$" in a
// predicted call that refer to a predicted call aligned with the gold call
// labelled "data_1" are read as "data_1", "data_1" and "data_1.rows".
func Positional(gold, pred []toolenv.GoldCall) PositionalResult {
	pairs := AlignLCS(names(gold), names(pred))
	res := PositionalResult{Intent: NewPRF(len(pairs), len(pred), len(gold))}
	if len(pairs) == 0 {
		return res
	}
	relabel := Relabeling(gold, pred, pairs)
	goldLabels := labelSet(gold)
	tp, np, ng := 0, 0, 0
	for _, pr := range pairs {
		g, p := gold[pr.Gold], pred[pr.Pred]
		gi := slotItems(g.Args, nil, goldLabels)
		pi := slotItems(p.Args, relabel, goldLabels)
		np += len(pi)
		ng += len(gi)
		for k := range pi {
			if gi[k] {
				tp++
			}
		}
	}
	res.Slot = NewPRF(tp, np, ng)
	res.SlotDefined = true
	return res
}

// Relabeling maps the labels of predicted calls to the labels of the gold
// calls they are aligned with.
func Relabeling(gold, pred []toolenv.GoldCall, pairs []Pair) map[string]string {
	m := map[string]string{}
	for _, pr := range pairs {
		pl, gl := pred[pr.Pred].Label, gold[pr.Gold].Label
		if pl != "" && gl != "" {
			m[strings.Trim(pl, "$")] = strings.Trim(gl, "$")
		}
	}
	return m
}

func labelSet(calls []toolenv.GoldCall) map[string]bool {
	m := map[string]bool{}
	for _, c := range calls {
		if c.Label != "" {
			m[strings.Trim(c.Label, "$")] = true
		}
	}
	return m
}

// slotItems returns each argument as "name=canonical value", references
// normalised.
func slotItems(args map[string]any, relabel map[string]string, goldLabels map[string]bool) map[string]bool {
	out := make(map[string]bool, len(args))
	for k, v := range args {
		out[k+"="+NormalizeValue(v, relabel, goldLabels)] = true
	}
	return out
}

// NormalizeValue returns the canonical JSON of an argument value with
// references resolved, so that two spellings of the same reference agree:
// a string "$x$" or "$x" is a reference to x; a string x (bare or wrapped)
// that is a predicted label in relabel becomes a reference to the gold
// label it maps to, and a bare string equal to a known label a reference
// to it; "$x.field$" keeps its field after the mapped label. Labels may
// themselves contain dots ("data_1.csv").
func NormalizeValue(v any, relabel map[string]string, known map[string]bool) string {
	if s, ok := v.(string); ok {
		inner, isRef := strings.CutPrefix(s, "$")
		inner = strings.TrimSuffix(inner, "$")
		if g, ok := relabel[inner]; ok {
			return "$ref:" + g
		}
		if known[inner] {
			return "$ref:" + inner
		}
		if isRef {
			if head, rest, dotted := strings.Cut(inner, "."); dotted {
				if g, ok := relabel[head]; ok {
					return "$ref:" + g + "." + rest
				}
			}
			return "$ref:" + inner
		}
	}
	b, err := toolenv.Canonical(v)
	if err != nil {
		return "?"
	}
	return string(b)
}
