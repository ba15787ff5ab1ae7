package metrics

import toolenv "github.com/toolenv/toolenv"

// SetPRF is the API-mapping paper's set-level precision, recall and F1 of
// an API sequence: the distinct predicted APIs that are among the distinct
// gold APIs, over the distinct predicted (precision) and distinct gold
// (recall) APIs.
func SetPRF(gold, pred []string) PRF {
	g, p := toSet(gold), toSet(pred)
	tp := 0
	for x := range p {
		if g[x] {
			tp++
		}
	}
	return NewPRF(tp, len(p), len(g))
}

// OrderPRF is the order-level precision, recall and F1 of an API
// sequence: the length of the longest common subsequence of the predicted
// and gold sequences (the calls that appear in the gold order, repeats
// counted) over the predicted (precision) and gold (recall) lengths.
//
// The paper names set and order metrics without giving a formula for the
// order one; the LCS is the standard measure of agreement in order and
// reduces to the set metric when every API is called once in the right
// order.
func OrderPRF(gold, pred []string) PRF {
	return NewPRF(len(AlignLCS(gold, pred)), len(pred), len(gold))
}

func names(calls []toolenv.GoldCall) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Name
	}
	return out
}

func toSet(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}
