package eval

import (
	"math"
	"sort"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/eval/metrics"
)

// Summary is an evaluation's metrics, per agent, model and split.
type Summary struct {
	// Format is the summary format's version.
	Format   int `json:"format"`
	Episodes int `json:"episodes"`
	// Status says whether the episodes are the run that was planned
	// (set by report.Write when the run's information is known).
	Status *RunStatus `json:"status,omitempty"`
	Groups []Group    `json:"groups"`
	// Provenance is the toolenv and the configuration that made the run
	// (from its RunInfo, when known).
	Provenance *toolenv.Provenance `json:"provenance,omitempty"`
}

// RunStatus counts a run's episodes against the plan: every aggregate
// of an incomplete run is over fewer episodes than planned, and a report
// says so at its top.
type RunStatus struct {
	// Planned is TaskCount × Runs (this shard's share of it, for a
	// shard); Completed the episodes that ran to their end, Errored
	// those that measured nothing (Episode.Errored: the model, the
	// environment or a judge did not answer), Missing those that never
	// ran (Planned − Completed − Errored, at least 0).
	Planned   int `json:"planned"`
	Completed int `json:"completed"`
	Errored   int `json:"errored"`
	Missing   int `json:"missing"`
	// Interrupted and Stopped say why episodes are missing: the run was
	// interrupted, or stopped after episodes in a row measured nothing.
	Interrupted bool   `json:"interrupted,omitempty"`
	Stopped     string `json:"stopped,omitempty"`
	// Complete says every planned episode ran to its end.
	Complete bool `json:"complete"`
}

// StatusOf counts eps against the plan info records (nil when info is
// nil: the plan is unknown).
func StatusOf(info *RunInfo, eps []*Episode) *RunStatus {
	if info == nil {
		return nil
	}
	st := &RunStatus{Planned: info.Planned, Interrupted: info.Interrupted, Stopped: info.Stopped}
	if st.Planned == 0 {
		st.Planned = info.TaskCount * max(info.Runs, 1)
	}
	for _, e := range eps {
		if e.Errored() != "" {
			st.Errored++
		} else {
			st.Completed++
		}
	}
	st.Missing = max(st.Planned-st.Completed-st.Errored, 0)
	st.Complete = st.Missing == 0 && st.Errored == 0 && !st.Interrupted && st.Stopped == ""
	return st
}

// Stat is a metric measured once per run: the mean over runs and the
// population standard deviation (as StableToolBench reports SoPR).
type Stat struct {
	Mean   float64   `json:"mean"`
	Std    float64   `json:"std"`
	PerRun []float64 `json:"per_run"`
	// SampleStd is the sample standard deviation over runs (k-1 in the
	// denominator) and CI95 the 95 % confidence interval of the mean
	// (Student's t with k-1 degrees of freedom); both absent with one
	// run.
	SampleStd *float64    `json:"sample_std,omitempty"`
	CI95      *[2]float64 `json:"ci95,omitempty"`
}

// NewStat is the Stat of a metric's per-run values (nil for none).
func NewStat(xs []float64) *Stat {
	if len(xs) == 0 {
		return nil
	}
	m, s := metrics.MeanStd(xs)
	st := &Stat{Mean: m, Std: s, PerRun: xs}
	if _, ss, lo, hi, ok := metrics.Spread(xs); ok {
		st.SampleStd, st.CI95 = &ss, &[2]float64{lo, hi}
	}
	return st
}

// PassK is pass^k over a group's tasks: the share of tasks whose k runs
// all succeeded (τ-bench's estimator C(c, k)/C(n, k) when a task ran n
// > k times), success being the harness's per-episode success
// (Episode.Succeeded).
type PassK struct {
	K     int     `json:"k"`
	Value float64 `json:"value"`
	// Tasks is what it is over: the tasks run at least k times.
	Tasks int `json:"tasks"`
	// Successes counts the successful episodes, of Episodes.
	Successes int `json:"successes"`
	Episodes  int `json:"episodes"`
}

// PRFStat is a precision/recall/F1 measured once per run.
type PRFStat struct {
	Precision Stat `json:"precision"`
	Recall    Stat `json:"recall"`
	F1        Stat `json:"f1"`
}

// Group is the metrics of one agent and model on one split.
type Group struct {
	Agent string `json:"agent"`
	Model string `json:"model"`
	Split string `json:"split"`
	Tasks int    `json:"tasks"`
	Runs  int    `json:"runs"`
	// Episodes counts the episodes; Errors those that could not run to
	// their end (model or environment unreachable); JudgeFailed those
	// whose judge did not answer (their verdict counts as not solved).
	Episodes    int `json:"episodes"`
	Errors      int `json:"errors"`
	JudgeFailed int `json:"judge_failed,omitempty"`
	// InfraFailed counts the episodes that ran to their end with a tool
	// call the environment failed (agent.Outcome.InfraFailures: an
	// upstream or model endpoint down, a timeout of toolenv's own, a
	// crashed MCP instance; an injected fault is the agent's), or whose
	// end-state check's call it failed, apart from the agent's failures:
	// InfraFailedFailed are those among them that count as failed.
	InfraFailed       int `json:"infra_failed,omitempty"`
	InfraFailedFailed int `json:"infra_failed_failed,omitempty"`
	// AnswerEpisodes counts the episodes whose task has a gold answer
	// (Completion's denominator, summed over runs); GoldEpisodes those
	// whose task has a gold call sequence (the sequence metrics').
	AnswerEpisodes int `json:"answer_episodes"`
	GoldEpisodes   int `json:"gold_episodes"`
	// StateEpisodes counts the episodes of stateful tasks (a gold end
	// state or end-state checks: State's denominator, summed over runs);
	// StateInfraFailed those among them whose state check's calls the
	// environment failed (an MCP instance crashed): they say nothing
	// about the agent (InfraFailed counts them too).
	StateEpisodes    int `json:"state_episodes,omitempty"`
	StateInfraFailed int `json:"state_infra_failed,omitempty"`
	// State is the rate of stateful tasks' episodes whose state check
	// succeeds (eval/endstate: end state, no collateral change, checks,
	// answer).
	State *Stat `json:"state,omitempty"`

	// Completion is the completion (win) rate over episodes whose task
	// has a gold answer.
	Completion *Stat `json:"completion,omitempty"`
	// StateDetail sums the parts of the state check of stateful tasks'
	// episodes (why those that failed did).
	StateDetail *StateStats `json:"state_detail,omitempty"`
	// NESTful scorer metrics (tasks with a gold sequence): NESTful's
	// calculate_scores exactly, in the variant NestfulVariant names;
	// NestfulNote says why a run has none (the reference gives no score).
	NestfulVariant string   `json:"nestful_variant,omitempty"`
	NestfulNote    string   `json:"nestful_note,omitempty"`
	NestfulIntent  *PRFStat `json:"nestful_intent,omitempty"`
	NestfulSlot    *PRFStat `json:"nestful_slot,omitempty"`
	PartialMatch   *Stat    `json:"partial_match,omitempty"`
	FullMatch      *Stat    `json:"full_match,omitempty"`
	// Position-aware intent and slot metrics (Live API-Bench).
	Intent *PRFStat `json:"intent,omitempty"`
	Slot   *PRFStat `json:"slot,omitempty"`
	// Set and order metrics of the API sequence (API mapping paper).
	SetMetrics   *PRFStat `json:"set,omitempty"`
	OrderMetrics *PRFStat `json:"order,omitempty"`
	// ErrorCategories counts the Live API-Bench Appendix G categories
	// of failed direct episodes, in check order.
	ErrorCategories []Count `json:"error_categories,omitempty"`
	// BFCLVerdicts counts BFCL's checker verdicts on direct episodes
	// (Score.BFCL), in metrics.BFCLVerdicts order.
	BFCLVerdicts []Count `json:"bfcl_verdicts,omitempty"`
	// Loops are the ReAct loop statistics.
	Loops *metrics.LoopStats `json:"loops,omitempty"`
	// SoPR and FAC are percentages; Unparseable counts verdicts that
	// could not be read.
	SoPR            *metrics.PassRateResult `json:"sopr,omitempty"`
	FAC             *metrics.PassRateResult `json:"fac,omitempty"`
	SoPRUnparseable int                     `json:"sopr_unparseable,omitempty"`
	FACUnparseable  int                     `json:"fac_unparseable,omitempty"`
	// SoPRVerdicts and FACVerdicts count the verdicts given (readable or
	// not), so that a rate over no readable verdict is not shown as one.
	SoPRVerdicts int `json:"sopr_verdicts,omitempty"`
	FACVerdicts  int `json:"fac_verdicts,omitempty"`
	// PassK is pass^k with k the runs, when there are two or more.
	PassK            *PassK `json:"pass_k,omitempty"`
	Cost             Cost   `json:"cost"`
	FinishedEpisodes int    `json:"finished"`
}

// Count is a named count.
type Count struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// Cost is the average cost of an episode.
type Cost struct {
	LLMCalls         float64 `json:"llm_calls"`
	PromptTokens     float64 `json:"prompt_tokens"`
	CompletionTokens float64 `json:"completion_tokens"`
	ToolCalls        float64 `json:"tool_calls"`
}

// Summarize computes the metrics of episodes, grouped by agent, model
// and split.
func Summarize(eps []*Episode) *Summary {
	s := &Summary{Format: 1, Episodes: len(eps)}
	type key struct{ agent, model, split string }
	byKey := map[key][]*Episode{}
	var keys []key
	for _, e := range eps {
		k := key{e.Agent, e.Model, e.Split}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], e)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.split != b.split {
			return a.split < b.split
		}
		if a.agent != b.agent {
			return a.agent < b.agent
		}
		return a.model < b.model
	})
	for _, k := range keys {
		s.Groups = append(s.Groups, summarizeGroup(k.agent, k.model, k.split, byKey[k]))
	}
	return s
}

func summarizeGroup(agentName, model, split string, eps []*Episode) Group {
	g := Group{Agent: agentName, Model: model, Split: split, Episodes: len(eps)}
	tasks := map[string]int{}
	runs := map[int][]*Episode{}
	var runIDs []int
	for _, e := range eps {
		if _, ok := tasks[e.TaskID]; !ok {
			tasks[e.TaskID] = len(tasks)
		}
		if _, ok := runs[e.Run]; !ok {
			runIDs = append(runIDs, e.Run)
		}
		runs[e.Run] = append(runs[e.Run], e)
		tr := e.Outcome.Trajectory
		if tr.Error != "" {
			g.Errors++
		} else if e.Errored() != "" {
			g.JudgeFailed++
		} else if e.Outcome.InfraFailures > 0 || e.Score.State != nil && e.Score.State.InfraFailure != "" {
			g.InfraFailed++
			if e.Failed() {
				g.InfraFailedFailed++
			}
		}
		if e.Score.HasAnswer {
			g.AnswerEpisodes++
		}
		if e.Score.HasGold {
			g.GoldEpisodes++
		}
		if st := e.Score.State; st != nil {
			g.StateEpisodes++
			if st.InfraFailure != "" {
				g.StateInfraFailed++
			}
		}
		if tr.Finished {
			g.FinishedEpisodes++
		}
		g.Cost.LLMCalls += float64(tr.Counts.LLMCalls)
		g.Cost.PromptTokens += float64(tr.Counts.PromptTokens)
		g.Cost.CompletionTokens += float64(tr.Counts.CompletionTokens)
		g.Cost.ToolCalls += float64(tr.Counts.ToolCalls)
	}
	sort.Ints(runIDs)
	g.Tasks, g.Runs = len(tasks), len(runIDs)
	g.StateDetail = stateStats(eps)
	if n := float64(len(eps)); n > 0 {
		g.Cost.LLMCalls /= n
		g.Cost.PromptTokens /= n
		g.Cost.CompletionTokens /= n
		g.Cost.ToolCalls /= n
	}

	// Per-run metrics, then mean and std over runs.
	var completion, partial, full, state []float64
	var nIntent, nSlot, pIntent, pSlot, set, order []metrics.PRF
	for _, r := range runIDs {
		re := runs[r]
		var comp, held []bool
		var gold, pred [][]toolenv.GoldCall
		var pi, ps, st, or []metrics.PRF
		for _, e := range re {
			if e.Score.HasAnswer {
				comp = append(comp, e.Score.Completed)
			}
			if st := e.Score.State; st != nil {
				held = append(held, st.Success == 1)
			}
			if !e.Score.HasGold {
				continue
			}
			gold = append(gold, e.Gold)
			pred = append(pred, e.Outcome.Predicted)
			if p := e.Score.Positional; p != nil {
				pi = append(pi, p.Intent)
				if p.SlotDefined {
					ps = append(ps, p.Slot)
				}
			}
			if e.Score.Set != nil {
				st = append(st, *e.Score.Set)
				or = append(or, *e.Score.Order)
			}
		}
		if len(comp) > 0 {
			completion = append(completion, metrics.Rate(comp))
		}
		if len(held) > 0 {
			state = append(state, metrics.Rate(held))
		}
		if len(gold) > 0 {
			// NESTful's calculate_scores exactly (the reference variant).
			if n, err := metrics.NestfulScores(gold, pred, metrics.NestfulOptions{}); err != nil {
				g.NestfulNote = err.Error()
			} else {
				g.NestfulVariant = metrics.NestfulOptions{}.Variant()
				nIntent = append(nIntent, n.Intent)
				nSlot = append(nSlot, n.Slot)
				if math.IsNaN(n.PartialMatch) {
					g.NestfulNote = "partial match undefined: a sample has no call on either side (the reference's accuracy of two empty lists is NaN)"
				} else {
					partial = append(partial, n.PartialMatch)
				}
				full = append(full, n.FullMatch)
			}
			pIntent = append(pIntent, metrics.MeanPRF(pi))
			pSlot = append(pSlot, metrics.MeanPRF(ps))
			set = append(set, metrics.MeanPRF(st))
			order = append(order, metrics.MeanPRF(or))
		}
	}
	g.Completion = stat(completion)
	g.State = stat(state)
	g.PartialMatch, g.FullMatch = stat(partial), stat(full)
	g.NestfulIntent, g.NestfulSlot = prfStat(nIntent), prfStat(nSlot)
	g.Intent, g.Slot = prfStat(pIntent), prfStat(pSlot)
	g.SetMetrics, g.OrderMetrics = prfStat(set), prfStat(order)

	if agentName == "direct" {
		g.ErrorCategories = countBy(eps, metrics.ErrorCategories, func(e *Episode) string { return e.Score.ErrorCategory })
		g.BFCLVerdicts = countBy(eps, metrics.BFCLVerdicts, func(e *Episode) string { return e.Score.BFCL })
	}
	if agentName == "react" {
		var le []metrics.LoopEpisode
		for _, e := range eps {
			le = append(le, metrics.LoopEpisode{Loops: e.Outcome.Loops, OutOfBudget: e.Outcome.OutOfBudget, Completed: !e.Failed(), Calls: e.Outcome.Predicted})
		}
		l := metrics.Loops(le)
		g.Loops = &l
	}
	g.SoPR, g.SoPRUnparseable, g.SoPRVerdicts = passRate(eps, tasks, func(e *Episode) []metrics.Label { return labelsOf(e.SoPR) })
	g.FAC, g.FACUnparseable, g.FACVerdicts = passRate(eps, tasks, func(e *Episode) []metrics.Label { return labelsOf(e.FAC) })
	if g.Runs >= 2 {
		succ := make([]int, len(tasks))
		n := make([]int, len(tasks))
		pk := &PassK{K: g.Runs, Episodes: len(eps)}
		for _, e := range eps {
			i := tasks[e.TaskID]
			n[i]++
			if e.Succeeded() {
				succ[i]++
				pk.Successes++
			}
		}
		pk.Value, pk.Tasks = metrics.PassHatK(succ, n, g.Runs)
		g.PassK = pk
	}
	return g
}

func labelsOf(vs []judge.Verdict) []metrics.Label {
	out := make([]metrics.Label, len(vs))
	for i, v := range vs {
		out[i] = v.Label
	}
	return out
}

// passRate computes a pass rate whose rounds are (run, judging round)
// pairs, over the group's tasks.
// countBy counts the episodes by the name key gives them, in the order
// of names, leaving out the names no episode has.
func countBy(eps []*Episode, names []string, key func(*Episode) string) []Count {
	counts := map[string]int{}
	for _, e := range eps {
		if k := key(e); k != "" {
			counts[k]++
		}
	}
	var out []Count
	for _, n := range names {
		if counts[n] > 0 {
			out = append(out, Count{n, counts[n]})
		}
	}
	return out
}

func passRate(eps []*Episode, tasks map[string]int, get func(*Episode) []metrics.Label) (*metrics.PassRateResult, int, int) {
	labels := make([]map[int]metrics.Label, len(tasks))
	for i := range labels {
		labels[i] = map[int]metrics.Label{}
	}
	maxRun, rounds, any, unparseable := 0, 0, false, 0
	for _, e := range eps {
		ls := get(e)
		if len(ls) > rounds {
			rounds = len(ls)
		}
		if e.Run > maxRun {
			maxRun = e.Run
		}
	}
	if rounds == 0 {
		return nil, 0, 0
	}
	verdicts := 0
	for _, e := range eps {
		for k, l := range get(e) {
			labels[tasks[e.TaskID]][e.Run*rounds+k] = l
			any = true
			verdicts++
			if l == metrics.Unparseable {
				unparseable++
			}
		}
	}
	if !any {
		return nil, 0, 0
	}
	r := metrics.PassRate(labels, (maxRun+1)*rounds)
	return &r, unparseable, verdicts
}

func stat(xs []float64) *Stat { return NewStat(xs) }

func prfStat(xs []metrics.PRF) *PRFStat {
	if len(xs) == 0 {
		return nil
	}
	var p, r, f []float64
	for _, x := range xs {
		p, r, f = append(p, x.Precision), append(r, x.Recall), append(f, x.F1)
	}
	return &PRFStat{Precision: *stat(p), Recall: *stat(r), F1: *stat(f)}
}

// StateStats sums the state checks (eval/endstate) of the episodes of
// stateful tasks (Group.StateEpisodes of them): how many succeeded, and
// why the others did not (an episode may fail several parts).
type StateStats struct {
	// Succeeded are the episodes whose every state check held.
	Succeeded int `json:"succeeded"`
	// F1 is the mean of the row changes' F1 (endstate.Result.F1).
	F1 float64 `json:"f1"`
	// WrongState counts the end states that are not the gold end state,
	// Collateral those that changed rows the task leaves alone,
	// ChecksFailed those failing an end-state check, Unreadable those
	// whose world could not be read.
	WrongState   int `json:"wrong_state"`
	Collateral   int `json:"collateral"`
	ChecksFailed int `json:"checks_failed"`
	Unreadable   int `json:"unreadable"`
}

func stateStats(eps []*Episode) *StateStats {
	var st StateStats
	n := 0
	for _, e := range eps {
		r := e.Score.State
		if r == nil {
			continue
		}
		n++
		st.F1 += r.F1
		if r.Success == 1 {
			st.Succeeded++
		}
		switch {
		case r.Error != "":
			st.Unreadable++
		default:
			if r.State != nil && !*r.State {
				st.WrongState++
			}
			if r.NoCollateral != nil && !*r.NoCollateral {
				st.Collateral++
			}
			if !r.ChecksHold() {
				st.ChecksFailed++
			}
		}
	}
	if n == 0 {
		return nil
	}
	st.F1 /= float64(n)
	return &st
}
