package report

import (
	"fmt"
	"strings"

	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/metrics"
)

// metric is one number a group may have, as data: the tables, the charts
// and Compare all read this list.
type metric struct {
	key   string
	title string
	// percent marks values already in percent (SoPR, FAC).
	percent bool
	get     func(g *eval.Group) *eval.Stat
}

func prf(get func(g *eval.Group) *eval.PRFStat, part string) func(g *eval.Group) *eval.Stat {
	return func(g *eval.Group) *eval.Stat {
		p := get(g)
		if p == nil {
			return nil
		}
		switch part {
		case "P":
			return &p.Precision
		case "R":
			return &p.Recall
		}
		return &p.F1
	}
}

func passRate(get func(g *eval.Group) *metrics.PassRateResult) func(g *eval.Group) *eval.Stat {
	return func(g *eval.Group) *eval.Stat {
		r := get(g)
		if r == nil {
			return nil
		}
		per := make([]float64, len(r.PerRound))
		for i, x := range r.PerRound {
			per[i] = x * 100
		}
		st := eval.NewStat(per)
		st.Mean, st.Std = r.Mean, r.Std // eval_pass_rate.py's own arithmetic
		return st
	}
}

var (
	mCompletion = metric{"completion", "Completion", false, func(g *eval.Group) *eval.Stat { return g.Completion }}
	mState      = metric{"state", "End state", false, func(g *eval.Group) *eval.Stat { return g.State }}
	mSoPR       = metric{"sopr", "SoPR %", true, passRate(func(g *eval.Group) *metrics.PassRateResult { return g.SoPR })}
	mFAC        = metric{"fac", "FAC %", true, passRate(func(g *eval.Group) *metrics.PassRateResult { return g.FAC })}

	nestfulIntent = func(g *eval.Group) *eval.PRFStat { return g.NestfulIntent }
	nestfulSlot   = func(g *eval.Group) *eval.PRFStat { return g.NestfulSlot }
	posIntent     = func(g *eval.Group) *eval.PRFStat { return g.Intent }
	posSlot       = func(g *eval.Group) *eval.PRFStat { return g.Slot }
	setM          = func(g *eval.Group) *eval.PRFStat { return g.SetMetrics }
	orderM        = func(g *eval.Group) *eval.PRFStat { return g.OrderMetrics }

	nestfulMetrics = []metric{
		{"nestful_intent_p", "Intent P", false, prf(nestfulIntent, "P")},
		{"nestful_intent_r", "Intent R", false, prf(nestfulIntent, "R")},
		{"nestful_intent_f1", "Intent F1", false, prf(nestfulIntent, "F1")},
		{"nestful_slot_p", "Slot P", false, prf(nestfulSlot, "P")},
		{"nestful_slot_r", "Slot R", false, prf(nestfulSlot, "R")},
		{"nestful_slot_f1", "Slot F1", false, prf(nestfulSlot, "F1")},
		{"partial_match", "Partial match", false, func(g *eval.Group) *eval.Stat { return g.PartialMatch }},
		{"full_match", "Full match", false, func(g *eval.Group) *eval.Stat { return g.FullMatch }},
	}
	positionalMetrics = []metric{
		{"intent_p", "Intent P", false, prf(posIntent, "P")},
		{"intent_r", "Intent R", false, prf(posIntent, "R")},
		{"intent_f1", "Intent F1", false, prf(posIntent, "F1")},
		{"slot_p", "Slot P", false, prf(posSlot, "P")},
		{"slot_r", "Slot R", false, prf(posSlot, "R")},
		{"slot_f1", "Slot F1", false, prf(posSlot, "F1")},
	}
	sequenceMetrics = []metric{
		{"set_p", "Set P", false, prf(setM, "P")},
		{"set_r", "Set R", false, prf(setM, "R")},
		{"set_f1", "Set F1", false, prf(setM, "F1")},
		{"order_p", "Order P", false, prf(orderM, "P")},
		{"order_r", "Order R", false, prf(orderM, "R")},
		{"order_f1", "Order F1", false, prf(orderM, "F1")},
	}
	// chartMetrics get a chart each in the HTML page.
	chartMetrics = []metric{
		mCompletion, mState, mSoPR, mFAC,
		{"intent_f1", "Intent F1 (position-aware)", false, prf(posIntent, "F1")},
		{"slot_f1", "Slot F1 (position-aware)", false, prf(posSlot, "F1")},
		{"nestful_intent_f1", "Intent F1 (NESTful scorer)", false, prf(nestfulIntent, "F1")},
		{"nestful_slot_f1", "Slot F1 (NESTful scorer)", false, prf(nestfulSlot, "F1")},
		{"partial_match", "Partial sequence match", false, func(g *eval.Group) *eval.Stat { return g.PartialMatch }},
		{"full_match", "Full sequence match", false, func(g *eval.Group) *eval.Stat { return g.FullMatch }},
		{"set_f1", "Set F1 (API sequence)", false, prf(setM, "F1")},
		{"order_f1", "Order F1 (API sequence)", false, prf(orderM, "F1")},
	}
)

// any reports whether some group has the metric.
func (m metric) any(gs []eval.Group) bool {
	for i := range gs {
		if m.get(&gs[i]) != nil {
			return true
		}
	}
	return false
}

func present(ms []metric, gs []eval.Group) []metric {
	var out []metric
	for _, m := range ms {
		if m.any(gs) {
			out = append(out, m)
		}
	}
	return out
}

// denominator names what a group's value of m is over ("n=120"), or ""
// when unknown.
func (m metric) denominator(g *eval.Group) string {
	switch {
	case m.key == "completion":
		return fmt.Sprintf("n=%d", g.AnswerEpisodes)
	case m.key == "state" && g.InfraFailures > 0:
		return fmt.Sprintf("n=%d, %d failed by the environment", g.StateEpisodes, g.InfraFailures)
	case m.key == "state":
		return fmt.Sprintf("n=%d", g.StateEpisodes)
	case m.key == "sopr" && g.SoPR != nil:
		return fmt.Sprintf("n=%d tasks", g.SoPR.Tasks)
	case m.key == "fac" && g.FAC != nil:
		return fmt.Sprintf("n=%d tasks", g.FAC.Tasks)
	case m.get(g) != nil:
		return fmt.Sprintf("n=%d", g.GoldEpisodes)
	}
	return ""
}

// cell is a table's cell for a group's value of m: the value and what it
// is over.
func (m metric) cell(g *eval.Group) string {
	if g == nil {
		return m.format(nil)
	}
	s := m.get(g)
	if s == nil {
		return m.format(nil)
	}
	if why := m.unmeasured(g); why != "" {
		return why
	}
	d := m.denominator(g)
	if u := m.unreadable(g); u > 0 {
		d += fmt.Sprintf("; %d verdict(s) unreadable, counted 0", u)
	}
	if d != "" {
		return m.format(s) + " (" + d + ")"
	}
	return m.format(s)
}

// unreadable counts the group's verdicts of m that could not be read.
func (m metric) unreadable(g *eval.Group) int {
	switch m.key {
	case "sopr":
		return g.SoPRUnparseable
	case "fac":
		return g.FACUnparseable
	}
	return 0
}

// unmeasured says why a group's value of m measures nothing although it
// is a number — every verdict under it unreadable — or "".
func (m metric) unmeasured(g *eval.Group) string {
	var n, bad int
	switch m.key {
	case "sopr":
		n, bad = g.SoPRVerdicts, g.SoPRUnparseable
	case "fac":
		n, bad = g.FACVerdicts, g.FACUnparseable
	default:
		return ""
	}
	if n > 0 && bad == n {
		return fmt.Sprintf("not measured: none of the %d judge verdict(s) could be read", n)
	}
	return ""
}

// format writes a stat: "0.47" or "0.47 ± 0.02" when measured over more
// than one run; "–" when absent.
func (m metric) format(s *eval.Stat) string {
	if s == nil {
		return "–"
	}
	f := "%.2f"
	if m.percent {
		f = "%.1f"
	}
	out := fmt.Sprintf(f, s.Mean)
	if len(s.PerRun) > 1 {
		out += " ± " + fmt.Sprintf(f, s.Std)
	}
	return out
}

// label names a group in charts and tables.
func label(g *eval.Group) string {
	parts := []string{g.Split, g.Agent}
	if g.Model != "" { // the oracle has no model
		parts = append(parts, g.Model)
	}
	return strings.Join(parts, " · ")
}
