package metrics

import "math"

// PRF is a precision, recall and F1 triple.
type PRF struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// NewPRF returns the PRF of tp true positives among pred predictions and
// gold gold items. An empty side scores 0, except that nothing predicted
// for nothing expected scores 1.
func NewPRF(tp, pred, gold int) PRF {
	if pred == 0 && gold == 0 {
		return PRF{1, 1, 1}
	}
	var p, r float64
	if pred > 0 {
		p = float64(tp) / float64(pred)
	}
	if gold > 0 {
		r = float64(tp) / float64(gold)
	}
	return PRF{p, r, F1(p, r)}
}

// F1 is the harmonic mean of p and r, 0 when both are 0.
func F1(p, r float64) float64 {
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// MeanPRF averages PRFs component by component (each F1 is averaged, not
// recomputed from the averaged P and R). It returns zeros for none.
func MeanPRF(xs []PRF) PRF {
	if len(xs) == 0 {
		return PRF{}
	}
	var s PRF
	for _, x := range xs {
		s.Precision += x.Precision
		s.Recall += x.Recall
		s.F1 += x.F1
	}
	n := float64(len(xs))
	return PRF{s.Precision / n, s.Recall / n, s.F1 / n}
}

// MeanStd returns the mean and the population standard deviation of xs
// (numpy.std's default, which StableToolBench reports). Zeros for none.
func MeanStd(xs []float64) (mean, std float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var v float64
	for _, x := range xs {
		v += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(v / float64(len(xs)))
}

// Rate is the fraction of true values, 0 for none.
func Rate(xs []bool) float64 {
	if len(xs) == 0 {
		return 0
	}
	n := 0
	for _, x := range xs {
		if x {
			n++
		}
	}
	return float64(n) / float64(len(xs))
}
