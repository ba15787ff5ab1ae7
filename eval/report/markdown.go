package report

import (
	"fmt"
	"strings"

	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/metrics"
)

// tableData is one table of the report.
type tableData struct {
	Title string
	Note  string
	Head  []string
	Rows  [][]string
}

// tables builds the report's tables: an overview, the intent/slot
// metrics (position-aware and NESTful scorer), the API sequence metrics,
// the error categories of direct attempts and the ReAct loop statistics.
// Tables with nothing to show are left out.
func tables(info *eval.RunInfo, s *eval.Summary) []tableData {
	gs := s.Groups
	if len(gs) == 0 {
		return nil
	}
	var out []tableData
	over := present([]metric{mCompletion, mState, mSoPR, mFAC}, gs)
	t := tableData{Title: "Overview", Head: []string{"Split", "Agent", "Model", "Tasks", "Runs", "Episodes"},
		Note: "n is what each figure is over: episodes whose task has a gold answer (completion), episodes whose task has a gold call sequence (sequence metrics), tasks (SoPR, FAC). Episodes that ended with an error count as failures."}
	if mState.any(gs) {
		t.Note += " End state: the rate of episodes whose every end-state check holds in the world the episode left, over episodes whose task has checks; those the environment failed (an MCP instance crashed) are counted apart."
	}
	for _, m := range over {
		t.Head = append(t.Head, m.title)
	}
	t.Head = append(t.Head, "Finished", "Errors")
	infra := false
	for i := range gs {
		infra = infra || gs[i].InfraFailed > 0
	}
	if infra {
		t.Head = append(t.Head, "Infra failed (failed)")
		t.Note += " Infra failed counts the episodes with a tool call the environment failed (an upstream or model endpoint down, a timeout of toolenv's own; not an injected fault), and in brackets those of them that count as failed: those failures may not be the agent's."
	}
	t.Head = append(t.Head, "LLM calls/ep", "Tokens/ep", "Tool calls/ep")
	for i := range gs {
		g := &gs[i]
		r := []string{g.Split, g.Agent, g.Model, fmt.Sprint(g.Tasks), fmt.Sprint(g.Runs), fmt.Sprint(g.Episodes)}
		for _, m := range over {
			r = append(r, m.cell(g))
		}
		r = append(r, fmt.Sprint(g.FinishedEpisodes), fmt.Sprint(g.Errors))
		if infra {
			r = append(r, fmt.Sprintf("%d (%d)", g.InfraFailed, g.InfraFailedFailed))
		}
		r = append(r, fmt.Sprintf("%.1f", g.Cost.LLMCalls), fmt.Sprintf("%.0f", g.Cost.PromptTokens+g.Cost.CompletionTokens), fmt.Sprintf("%.1f", g.Cost.ToolCalls))
		t.Rows = append(t.Rows, r)
	}
	out = append(out, t)

	section := func(title, note string, ms []metric) {
		ms = present(ms, gs)
		if len(ms) == 0 {
			return
		}
		t := tableData{Title: title, Note: note, Head: []string{"Split", "Agent", "Model"}}
		for _, m := range ms {
			t.Head = append(t.Head, m.title)
		}
		for i := range gs {
			g := &gs[i]
			r := []string{g.Split, g.Agent, g.Model}
			for _, m := range ms {
				r = append(r, m.cell(g))
			}
			t.Rows = append(t.Rows, r)
		}
		out = append(out, t)
	}
	section("Intent and slot: position-aware (Live API-Bench)", "Calls aligned on the gold sequence, repeated calls counted; slots scored on correctly predicted intents only.", positionalMetrics)
	section("Intent and slot: NESTful scorer", "NESTful's own calculate_scores, exactly (reference variant: grounding on, scikit-learn 1.2.1's arithmetic; arguments as toolenv holds them, object keys sorted): per-sample label sets, macro-averaged over the gold labels; partial and full sequence match.", nestfulMetrics)
	section("API sequence: set and order (API mapping paper)", "Set: distinct APIs; order: longest common subsequence with the gold sequence.", sequenceMetrics)

	if t, ok := spreadTable(gs); ok {
		out = append(out, t)
	}

	cats := tableData{Title: "Error categories of failed direct attempts (Live API-Bench Appendix G, first match)", Note: "The paper's BFCL-style categories, not BFCL's own checker verdicts (toolenv eval score bfcl gives those).", Head: []string{"Split", "Model"}}
	cats.Head = append(cats.Head, metrics.ErrorCategories...)
	for i := range gs {
		g := &gs[i]
		if len(g.ErrorCategories) == 0 {
			continue
		}
		counts := map[string]int{}
		for _, c := range g.ErrorCategories {
			counts[c.Name] = c.Count
		}
		r := []string{g.Split, g.Model}
		for _, c := range metrics.ErrorCategories {
			r = append(r, fmt.Sprint(counts[c]))
		}
		cats.Rows = append(cats.Rows, r)
	}
	if len(cats.Rows) > 0 {
		out = append(out, cats)
	}
	if t, ok := bfclTable(gs); ok {
		out = append(out, t)
	}
	loops := tableData{Title: "ReAct loops (Live API-Bench, Table 4)", Note: "Fractions of all episodes; out-of-budget and stuck may overlap.",
		Head: []string{"Split", "Model", "Avg. loops", "OOB", "Stuck", "Unclassified"}}
	for i := range gs {
		if l := gs[i].Loops; l != nil {
			loops.Rows = append(loops.Rows, []string{gs[i].Split, gs[i].Model, fmt.Sprintf("%.2f", l.AvgLoops), fmt.Sprintf("%.2f", l.OutOfBudget), fmt.Sprintf("%.2f", l.Stuck), fmt.Sprintf("%.2f", l.Unclassified)})
		}
	}
	if len(loops.Rows) > 0 {
		out = append(out, loops)
	}
	state := tableData{Title: "State (stateful tasks)", Note: "Stateful tasks are judged on the state they leave (docs/worlds.md): an episode succeeds when its end state is the gold end state, nothing else changed, its end-state checks hold and its answer (if asked) is right; completion counts that. F1 is the mean F1 of the rows changed as the gold changes them.",
		Head: []string{"Split", "Agent", "Model", "Episodes", "Succeeded", "F1", "Wrong state", "Collateral", "Checks failed", "Unreadable"}}
	for _, g := range s.Groups {
		if st := g.StateDetail; st != nil {
			state.Rows = append(state.Rows, []string{g.Split, g.Agent, g.Model, fmt.Sprint(g.StateEpisodes), fmt.Sprint(st.Succeeded), fmt.Sprintf("%.2f", st.F1),
				fmt.Sprint(st.WrongState), fmt.Sprint(st.Collateral), fmt.Sprint(st.ChecksFailed), fmt.Sprint(st.Unreadable)})
		}
	}
	if len(state.Rows) > 0 {
		out = append(out, state)
	}
	if info != nil && len(info.Prompts) > 0 {
		pt := tableData{Title: "Prompts", Head: []string{"Prompt", "Version", "SHA-256 (first 16)"}}
		for _, p := range info.Prompts {
			pt.Rows = append(pt.Rows, []string{p.Name, p.Version, p.SHA256})
		}
		out = append(out, pt)
	}
	return out
}

// Markdown renders the summary's tables as Markdown.
func Markdown(info *eval.RunInfo, s *eval.Summary) string {
	var b strings.Builder
	b.WriteString("# toolenv evaluation\n\n")
	if w := Banner(s.Status); w != "" {
		b.WriteString("> **" + w + "**\n\n")
	}
	if info != nil {
		b.WriteString(runLine(info, s) + "\n\n")
	}
	ts := tables(info, s)
	if len(ts) == 0 {
		b.WriteString("No episodes.\n")
		return b.String()
	}
	b.WriteString("Values are means over runs; ± is the standard deviation over runs (population, as StableToolBench reports it).\n")
	for _, t := range ts {
		fmt.Fprintf(&b, "\n## %s\n\n", t.Title)
		if t.Note != "" {
			b.WriteString(t.Note + "\n\n")
		}
		table(&b, t.Head, t.Rows)
	}
	return b.String()
}

// Banner says, for a run whose episodes are not the run that was
// planned, how many of them ran and why the others are missing or
// measured nothing; "" for a complete run (or an unknown plan). Reports
// put it at their top.
func Banner(st *eval.RunStatus) string {
	if st == nil || st.Complete {
		return ""
	}
	ran := st.Completed + st.Errored
	s := fmt.Sprintf("Incomplete run: %d of %d planned episodes ran (%d completed, %d errored)", ran, st.Planned, st.Completed, st.Errored)
	if st.Missing > 0 {
		s += fmt.Sprintf("; %d never ran", st.Missing)
		switch {
		case st.Stopped != "":
			s += " because the run stopped: " + st.Stopped
		case st.Interrupted:
			s += " because the run was interrupted"
		}
	}
	s += "."
	if st.Errored > 0 {
		s += " Errored episodes measured nothing (the model, the environment or a judge did not answer) and count as failures."
	}
	if ran == 0 {
		return s + " Nothing was measured: the figures below are not scores."
	}
	return s + " Every figure below is over the episodes that ran, as its n says."
}

// runLine says what was run in one sentence.
func runLine(info *eval.RunInfo, sum *eval.Summary) string {
	model := "model `" + info.Model + "`"
	if info.Model == "" {
		model = "no model"
	}
	plan := fmt.Sprintf("%d task(s) × %d run(s)", info.TaskCount, info.Runs)
	if st := sum.Status; st != nil && !st.Complete {
		plan = fmt.Sprintf("%d task(s) × %d run(s) planned (%d episodes; %d in this report)", info.TaskCount, info.Runs, st.Planned, st.Completed+st.Errored)
	}
	s := fmt.Sprintf("Agent `%s`, %s, %s, seed %d, %s environment", info.Agent, model, plan, info.Seed, info.Env)
	if info.Judge != nil {
		s += fmt.Sprintf(", judge `%s` (%d round(s))", info.Judge.Model, info.Judge.Rounds)
	}
	if info.Replay {
		s += ", replayed from records"
	}
	if info.Version != "" {
		s += fmt.Sprintf(", toolenv `%s`", info.Version)
	}
	return s + "."
}

func table(b *strings.Builder, head []string, rows [][]string) {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	b.WriteString("|")
	for _, h := range head {
		b.WriteString(" " + esc(h) + " |")
	}
	b.WriteString("\n|")
	for range head {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + esc(c) + " |")
		}
		b.WriteString("\n")
	}
}

// bfclTable counts BFCL's checker verdicts on the direct attempts of each
// group, one column per verdict that occurs.
func bfclTable(gs []eval.Group) (tableData, bool) {
	t := tableData{Title: "BFCL's checker on direct attempts (call by call, the gold sequence's values the only accepted)",
		Note: "BFCL's own AST checker, verdict for verdict (eval/metrics.BFCLCheck, ordered mode); types from the tools' schemas. BFCL's data may accept more values than toolenv's one gold answer.",
		Head: []string{"Split", "Model", "Valid %"}}
	present := map[string]bool{}
	for _, g := range gs {
		for _, c := range g.BFCLVerdicts {
			present[c.Name] = true
		}
	}
	var cols []string
	for _, v := range metrics.BFCLVerdicts {
		if present[v] {
			cols = append(cols, v)
		}
	}
	t.Head = append(t.Head, cols...)
	for i := range gs {
		g := &gs[i]
		if len(g.BFCLVerdicts) == 0 {
			continue
		}
		counts, total := map[string]int{}, 0
		for _, c := range g.BFCLVerdicts {
			counts[c.Name] = c.Count
			total += c.Count
		}
		r := []string{g.Split, g.Model, fmt.Sprintf("%.1f", 100*float64(counts[metrics.BFCLValid])/float64(total))}
		for _, v := range cols {
			r = append(r, fmt.Sprint(counts[v]))
		}
		t.Rows = append(t.Rows, r)
	}
	return t, len(t.Rows) > 0
}

// spreadMetrics are the metrics the run-to-run spread table shows.
var spreadMetrics = []metric{mCompletion, mSoPR, mFAC,
	{"intent_f1", "Intent F1 (position-aware)", false, prf(posIntent, "F1")},
	{"nestful_intent_f1", "Intent F1 (NESTful)", false, prf(nestfulIntent, "F1")},
	{"full_match", "Full match", false, func(g *eval.Group) *eval.Stat { return g.FullMatch }},
}

// spreadTable is the run-to-run spread of groups run more than once:
// each metric's per-run values, population and sample standard
// deviation and 95 % interval of the mean, and pass^k.
func spreadTable(gs []eval.Group) (tableData, bool) {
	t := tableData{Title: "Run-to-run spread",
		Note: "For groups run k ≥ 2 times: each metric's value in every run, the population standard deviation (the ± above), the sample standard deviation and the 95 % interval of the mean (Student's t, k−1 degrees of freedom); pass^k is the share of tasks whose k runs all succeeded.",
		Head: []string{"Split", "Agent", "Model", "Metric", "Mean", "Std (pop.)", "Std (sample)", "95 % interval", "Per run"}}
	f := func(m metric, x float64) string {
		if m.percent {
			return fmt.Sprintf("%.1f", x)
		}
		return fmt.Sprintf("%.2f", x)
	}
	for i := range gs {
		g := &gs[i]
		if g.Runs < 2 {
			continue
		}
		for _, m := range spreadMetrics {
			s := m.get(g)
			if s == nil || m.unmeasured(g) != "" || s.CI95 == nil || s.SampleStd == nil {
				continue
			}
			per := make([]string, len(s.PerRun))
			for k, x := range s.PerRun {
				per[k] = f(m, x)
			}
			t.Rows = append(t.Rows, []string{g.Split, g.Agent, g.Model, m.title, f(m, s.Mean), f(m, s.Std), f(m, *s.SampleStd),
				"[" + f(m, s.CI95[0]) + ", " + f(m, s.CI95[1]) + "]", strings.Join(per, ", ")})
		}
		if pk := g.PassK; pk != nil {
			v := "–"
			if pk.Tasks > 0 {
				v = fmt.Sprintf("%.2f", pk.Value)
			}
			t.Rows = append(t.Rows, []string{g.Split, g.Agent, g.Model, fmt.Sprintf("pass^%d", pk.K), v + fmt.Sprintf(" (n=%d tasks)", pk.Tasks), "", "", "", fmt.Sprintf("%d of %d episodes succeeded", pk.Successes, pk.Episodes)})
		}
	}
	return t, len(t.Rows) > 0
}
