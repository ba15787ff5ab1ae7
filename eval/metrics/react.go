package metrics

import toolenv "github.com/toolenv/toolenv"

// LoopEpisode is one ReAct episode as the loop statistics see it.
type LoopEpisode struct {
	// Loops is how many think-act-observe iterations ran.
	Loops int
	// OutOfBudget says the episode used its whole turn budget without a
	// final answer.
	OutOfBudget bool
	// Completed says the episode reached the gold answer.
	Completed bool
	// Calls are the tool calls made, in order.
	Calls []toolenv.GoldCall
}

// LoopStats are Live API-Bench's ReAct loop statistics (Table 4,
// Appendix G.1.2). The rates are fractions of all episodes; OOB and Stuck
// may overlap, Unclassified is the failures that are neither.
type LoopStats struct {
	Episodes     int     `json:"episodes"`
	AvgLoops     float64 `json:"avg_loops"`
	OutOfBudget  float64 `json:"oob"`
	Stuck        float64 `json:"stuck"`
	Unclassified float64 `json:"unclassified"`
}

// Stuck reports whether a failed episode made the same call (same tool,
// same canonical arguments) twice in a row.
func Stuck(e LoopEpisode) bool {
	if e.Completed {
		return false
	}
	for i := 1; i < len(e.Calls); i++ {
		if sameCall(e.Calls[i-1], e.Calls[i]) {
			return true
		}
	}
	return false
}

func sameCall(a, b toolenv.GoldCall) bool {
	if a.Name != b.Name {
		return false
	}
	ka, err1 := toolenv.CacheKey(a.Name, a.Args)
	kb, err2 := toolenv.CacheKey(b.Name, b.Args)
	return err1 == nil && err2 == nil && ka == kb
}

// Loops computes the loop statistics of episodes: the average number of
// loops, the fraction that ran out of budget (failed ones only), the
// fraction stuck (a failed episode that made the same call twice in a
// row) and the fraction of failures that are neither.
func Loops(eps []LoopEpisode) LoopStats {
	s := LoopStats{Episodes: len(eps)}
	if len(eps) == 0 {
		return s
	}
	var loops, oob, stuck, other int
	for _, e := range eps {
		loops += e.Loops
		o := e.OutOfBudget && !e.Completed
		st := Stuck(e)
		if o {
			oob++
		}
		if st {
			stuck++
		}
		if !e.Completed && !o && !st {
			other++
		}
	}
	n := float64(len(eps))
	s.AvgLoops = float64(loops) / n
	s.OutOfBudget = float64(oob) / n
	s.Stuck = float64(stuck) / n
	s.Unclassified = float64(other) / n
	return s
}
