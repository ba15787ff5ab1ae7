package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/toolenv/toolenv/eval"
)

// Evaluation is one evaluation to compare: a name (its folder) and its
// summary.
type Evaluation struct {
	Name    string
	Info    *eval.RunInfo
	Summary *eval.Summary
}

// compareMetrics are the rows of a comparison.
var compareMetrics = append(append(append([]metric{mCompletion, mSoPR, mFAC}, positionalMetrics...), nestfulMetrics...), sequenceMetrics...)

// CompareMarkdown puts several evaluations side by side: one table per
// split, a row per metric, a column per evaluation and agent/model.
func CompareMarkdown(evs []Evaluation) string {
	var b strings.Builder
	b.WriteString("# toolenv evaluations compared\n\n")
	for _, ev := range evs {
		line := ""
		if ev.Info != nil {
			line = " — " + strings.ReplaceAll(runLine(ev.Info, ev.Summary), "`", "")
		}
		if w := Banner(ev.Summary.Status); w != "" {
			line += " **" + w + "**"
		}
		fmt.Fprintf(&b, "- `%s`%s\n", ev.Name, line)
	}
	for _, sp := range splits(evs) {
		cols, groups := columnsFor(evs, sp)
		fmt.Fprintf(&b, "\n## %s\n\n", sp)
		head := append([]string{"Metric"}, cols...)
		var rows [][]string
		for _, m := range compareMetrics {
			if !m.any(derefs(groups)) {
				continue
			}
			r := []string{m.title + " — " + scorerOf(m.key)}
			for _, g := range groups {
				r = append(r, m.cell(g))
			}
			rows = append(rows, r)
		}
		table(&b, head, rows)
	}
	return b.String()
}

// CompareHTML writes the comparison as a self-contained page with a chart
// per metric whose bars are the evaluations.
func CompareHTML(w io.Writer, evs []Evaluation) error {
	var charts []template.HTML
	var all []eval.Group
	for _, ev := range evs {
		for _, g := range ev.Summary.Groups {
			g.Model = ev.Name + ": " + g.Model
			all = append(all, g)
		}
	}
	for _, m := range chartMetrics {
		if c := barChart(m, all); c != "" {
			charts = append(charts, c)
		}
	}
	var md bytes.Buffer
	md.WriteString(CompareMarkdown(evs))
	return compareTmpl.Execute(w, map[string]any{"Charts": charts, "Markdown": md.String()})
}

var compareTmpl = template.Must(template.New("c").Parse(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>toolenv evaluations compared</title>
<style>body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px}svg{display:block;margin:10px 0 18px}
svg .ct{font-weight:600;font-size:13px}svg .bl{font-size:12px;text-anchor:end}svg .bv,svg .tick{font-size:11px;fill:#444}svg .tick{text-anchor:middle}svg .grid{stroke:#eee}svg .err{stroke:#222;stroke-width:1.5}pre{white-space:pre-wrap}</style>
</head><body><h1>toolenv evaluations compared</h1>{{range .Charts}}{{.}}{{end}}<h2>Tables (Markdown)</h2><pre>{{.Markdown}}</pre></body></html>
`))

func splits(evs []Evaluation) []string {
	seen := map[string]bool{}
	var out []string
	for _, ev := range evs {
		for _, g := range ev.Summary.Groups {
			if !seen[g.Split] {
				seen[g.Split] = true
				out = append(out, g.Split)
			}
		}
	}
	return out
}

func columnsFor(evs []Evaluation, split string) ([]string, []*eval.Group) {
	var cols []string
	var groups []*eval.Group
	for _, ev := range evs {
		for i := range ev.Summary.Groups {
			g := &ev.Summary.Groups[i]
			if g.Split != split {
				continue
			}
			cols = append(cols, fmt.Sprintf("%s: %s/%s", ev.Name, g.Agent, g.Model))
			groups = append(groups, g)
		}
	}
	return cols, groups
}

func derefs(gs []*eval.Group) []eval.Group {
	out := make([]eval.Group, len(gs))
	for i, g := range gs {
		out[i] = *g
	}
	return out
}

// scorerOf names the scorer behind a metric, so that every row of a
// comparison says which one it is (the NESTful scorer and the
// position-aware one both give intent and slot P/R/F1).
func scorerOf(key string) string {
	switch {
	case key == "completion":
		return "NL2SQL answer check"
	case key == "sopr":
		return "StableToolBench SoPR judge"
	case key == "fac":
		return "MirrorAPI FAC judge"
	case strings.HasPrefix(key, "nestful_") || key == "partial_match" || key == "full_match":
		return "NESTful scorer"
	case strings.HasPrefix(key, "intent_") || strings.HasPrefix(key, "slot_"):
		return "position-aware (Live API-Bench)"
	case strings.HasPrefix(key, "set_") || strings.HasPrefix(key, "order_"):
		return "API sequence (API mapping paper)"
	}
	return "toolenv"
}
