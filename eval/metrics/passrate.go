package metrics

// Label is a judge's verdict on one answer.
type Label string

// The verdicts of StableToolBench's pass-rate judge and MirrorAPI's FAC
// judge, plus what toolenv records when a verdict could not be read.
const (
	Solved      Label = "Solved"
	Unsolved    Label = "Unsolved"
	Unsure      Label = "Unsure"
	Unparseable Label = "Unparseable"
)

// Score is what a label counts for in the pass rate: 1 for Solved, 0.5 for
// Unsure, 0 otherwise (an unparseable verdict counts as not solved and is
// reported separately).
func (l Label) Score() float64 {
	switch l {
	case Solved:
		return 1
	case Unsure:
		return 0.5
	}
	return 0
}

// PassRateResult is a pass rate over several evaluation rounds.
type PassRateResult struct {
	// Mean and Std are percentages: the mean of the per-round rates and
	// their population standard deviation.
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
	// PerRound is each round's rate as a fraction.
	PerRound []float64 `json:"per_round"`
	// Tasks is the number of tasks the rates are over.
	Tasks int `json:"tasks"`
}

// PassRate computes StableToolBench's Solvable Pass Rate the way
// toolbench/tooleval/eval_pass_rate.py does (THUNLP-MT/StableToolBench):
// labels[i][r] is task i's label in round r (a run, or one of several
// judgements of the same answer); for each round r in [0, rounds) the
// score is the sum over tasks of Label.Score (a task with no label for
// that round scores 0) divided by the number of tasks; the result is the
// mean of the round scores and their population standard deviation
// (numpy.std), times 100.
//
// MirrorAPI's Final Answer Completeness is computed the same way over FAC
// labels (Solved or Unsolved).
func PassRate(labels []map[int]Label, rounds int) PassRateResult {
	res := PassRateResult{Tasks: len(labels)}
	if len(labels) == 0 || rounds <= 0 {
		return res
	}
	scores := make([]float64, rounds)
	for r := 0; r < rounds; r++ {
		var s float64
		for _, l := range labels {
			if v, ok := l[r]; ok {
				s += v.Score()
			}
		}
		scores[r] = s / float64(len(labels))
	}
	var sum float64
	for _, s := range scores {
		sum += s
	}
	mean := sum / float64(rounds)
	_, std := MeanStd(scores)
	res.Mean = mean * 100
	res.Std = std * 100
	res.PerRound = scores
	return res
}

// Rounds returns the number of rounds labels cover: one more than the
// largest round index present.
func Rounds(labels []map[int]Label) int {
	n := 0
	for _, l := range labels {
		for r := range l {
			if r+1 > n {
				n = r + 1
			}
		}
	}
	return n
}
