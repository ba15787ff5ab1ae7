package mirror

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"io"
	"path/filepath"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// Report is what "toolenv mirror" writes at the end of a run: the
// dataset's counts, and what each stage of this run did and how long it
// took.
type Report struct {
	Summary *Summary `json:"summary"`
	// Stages holds each stage's stats of this run, by stage name, in the
	// order they ran.
	Stages []StageReport `json:"stages"`
	// Settings are the options of the run (flags), for the record.
	Settings map[string]any `json:"settings,omitempty"`
}

// StageReport is one stage of a run.
type StageReport struct {
	Stage   string `json:"stage"`
	Elapsed string `json:"elapsed"`
	Stats   any    `json:"stats"`
	Error   string `json:"error,omitempty"`
}

// ReportFiles are the files WriteReport writes.
var ReportFiles = []string{"report.json", "report.md", "report.html"}

// WriteReport writes report.json, report.md and report.html into dir.
func WriteReport(dir string, r *Report) error {
	if err := toolenv.WriteJSONFile(filepath.Join(dir, "report.json"), r); err != nil {
		return fmt.Errorf("write report.json: %w", err)
	}
	if err := toolenv.WriteFileAtomic(filepath.Join(dir, "report.md"), []byte(r.Markdown())); err != nil {
		return fmt.Errorf("write report.md: %w", err)
	}
	var b bytes.Buffer
	if err := r.HTML(&b); err != nil {
		return fmt.Errorf("render report.html: %w", err)
	}
	if err := toolenv.WriteFileAtomic(filepath.Join(dir, "report.html"), b.Bytes()); err != nil {
		return fmt.Errorf("write report.html: %w", err)
	}
	return nil
}

// Markdown renders the report.
func (r *Report) Markdown() string {
	var b strings.Builder
	s := r.Summary
	fmt.Fprintf(&b, "# toolenv mirror: %s\n\n", s.Dataset)
	b.WriteString("## Funnel\n\n")
	b.WriteString(FunnelText(s))
	b.WriteString("\n")
	if len(r.Stages) > 0 {
		b.WriteString("## This run\n\n")
		rows := [][]string{}
		for _, st := range r.Stages {
			rows = append(rows, []string{st.Stage, st.Elapsed, stageLine(st)})
		}
		mdTable(&b, []string{"Stage", "Elapsed", "What it did"}, rows)
		b.WriteString("\n")
	}
	s.markdownBody(&b)
	return b.String()
}

// FunnelText is the funnel as a Markdown table with a bar of block
// characters per step.
func FunnelText(s *Summary) string {
	var b strings.Builder
	top := 1
	for _, f := range s.Funnel {
		top = max(top, f.Count)
	}
	rows := [][]string{}
	for _, f := range s.Funnel {
		n := f.Count * 30 / top
		if f.Count > 0 && n == 0 {
			n = 1
		}
		rows = append(rows, []string{f.Step, thousands(f.Count), "`" + strings.Repeat("█", n) + strings.Repeat(" ", 30-n) + "`", f.What})
	}
	mdTable(&b, []string{"Step", "Count", "", "What is counted"}, rows)
	return b.String()
}

// markdownBody is the part of the report the dataset card shares.
func (s *Summary) markdownBody(b *strings.Builder) {
	b.WriteString("## Requests\n\n")
	fmt.Fprintf(b, "%s requests (%s still waiting for their call).\n\n", thousands(s.Requests), thousands(s.Pending))
	mdTable(b, []string{"Origin", "Requests"}, countRows(s.RequestsByOrigin))
	b.WriteString("\n")
	mdTable(b, []string{"Kind", "Requests"}, countRows(s.RequestsByKind))
	b.WriteString("\n## Real answers by Appendix D class\n\n")
	mdTable(b, []string{"Class", "Pairs"}, countRows(s.RealByClass))
	b.WriteString("\n## Filter\n\n")
	fmt.Fprintf(b, "Kept %s of %s real pairs (%s of them parameter-related failures, kept so a simulator learns to refuse bad calls).", thousands(s.Kept), thousands(s.Real), thousands(s.KeptFailures))
	if s.Unfiltered > 0 {
		fmt.Fprintf(b, " %s are not filtered yet.", thousands(s.Unfiltered))
	}
	b.WriteString("\n\n")
	if len(s.Dropped) > 0 {
		mdTable(b, []string{"Dropped because", "Pairs"}, countRows(s.Dropped))
		b.WriteString("\n")
		mdTable(b, []string{"Dropped because, by classifier rule", "Pairs"}, countRows(s.DroppedByRule))
		b.WriteString("\n")
	}
	if d := s.Doc; d.Follows+d.Not+d.Unparsed > 0 {
		fmt.Fprintf(b, "Documentation check (Table 8): %s follow, %s do not, %s unreadable verdicts.\n\n", thousands(d.Follows), thousands(d.Not), thousands(d.Unparsed))
	}
	if len(s.Rejected) > 0 {
		b.WriteString("## Dropped model output\n\n")
		mdTable(b, []string{"Stage/reason", "Count"}, countRows(s.Rejected))
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "## Synthesis and rationales\n\n%s synthesized pairs kept; %s rationales kept", thousands(s.Synthesized), thousands(s.Rationales))
	if len(s.RationalesDropped) > 0 {
		parts := []string{}
		for _, k := range sortedKeys(s.RationalesDropped) {
			parts = append(parts, fmt.Sprintf("%s %s", thousands(s.RationalesDropped[k]), k))
		}
		fmt.Fprintf(b, " (dropped: %s)", strings.Join(parts, ", "))
	}
	b.WriteString(".\n\n## Splits (MirrorAPI-Bench)\n\n")
	rows := [][]string{}
	for _, sp := range s.Splits {
		rows = append(rows, []string{sp.Split, thousands(sp.Samples), thousands(sp.APIs), thousands(sp.Categories)})
	}
	mdTable(b, []string{"Split", "Samples", "APIs", "Categories"}, rows)
	if si := s.SplitInfo; si != nil {
		fmt.Fprintf(b, "\n%d APIs held out (OOD); ID terciles by examples per API: high ≥ %d, medium ≥ %d; %d training pairs dropped as near-duplicates of test requests.\n",
			len(si.HeldOutAPIs), si.HighFrom, si.MediumFrom, si.NearDuplicates)
	}
	b.WriteString("\n## Per category\n\n")
	rows = rows[:0]
	for _, c := range s.Categories {
		rows = append(rows, []string{c.Category, thousands(c.APIs), thousands(c.Requests), thousands(c.Real), thousands(c.RealOK), thousands(c.Kept), thousands(c.Synth), thousands(c.Train), thousands(c.Test), thousands(c.Rationales)})
	}
	mdTable(b, []string{"Category", "APIs", "Requests", "Real", "Real OK", "Kept", "Synthesized", "Train", "Test", "Rationales"}, rows)
	b.WriteString("\n## Prompts\n\n")
	rows = rows[:0]
	for _, p := range s.Prompts {
		rows = append(rows, []string{p.Name, p.Version, p.SHA256, p.Source})
	}
	mdTable(b, []string{"Prompt", "Version", "SHA-256 (16)", "Source"}, rows)
}

func stageLine(st StageReport) string {
	if st.Error != "" {
		return "error: " + st.Error
	}
	b, err := toolenv.MarshalJSONNoHTML(st.Stats)
	if err != nil {
		return ""
	}
	return "`" + strings.ReplaceAll(string(b), "|", "\\|") + "`"
}

func countRows(m map[string]int) [][]string {
	rows := [][]string{}
	for _, k := range sortedKeys(m) {
		name := k
		if name == "" {
			name = "(none)"
		}
		rows = append(rows, []string{name, thousands(m[k])})
	}
	return rows
}

func mdTable(b *strings.Builder, head []string, rows [][]string) {
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for range head {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = strings.ReplaceAll(c, "|", "\\|")
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
}

// thousands writes n with thousands separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// FunnelSVG draws the funnel as horizontal bars.
func FunnelSVG(s *Summary) template.HTML {
	const width, labelW, barH, gap, top = 760, 110, 26, 8, 30
	plotW := float64(width - labelW - 90)
	topN := 1
	for _, f := range s.Funnel {
		topN = max(topN, f.Count)
	}
	height := top + len(s.Funnel)*(barH+gap) + 10
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="funnel">`, width, height)
	b.WriteString(`<text x="0" y="16" class="ct">generated → called → kept → synthesized → explained → exported</text>`)
	colors := []string{"#4e79a7", "#59a14f", "#76b7b2", "#f28e2b", "#edc948", "#e15759"}
	for i, f := range s.Funnel {
		y := top + i*(barH+gap)
		w := plotW * float64(f.Count) / float64(topN)
		x := float64(labelW) + (plotW-w)/2
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="bl">%s</text>`, labelW-8, y+barH/2+4, html.EscapeString(f.Step))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %d (%s)</title></rect>`, x, y, w, barH, colors[i%len(colors)], html.EscapeString(f.Step), f.Count, html.EscapeString(f.What))
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="bv">%s</text>`, float64(labelW)+plotW+6, y+barH/2+4, thousands(f.Count))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// HTML renders the report as one self-contained page.
func (r *Report) HTML(w io.Writer) error {
	var body strings.Builder
	r.Summary.markdownBody(&body)
	var stages strings.Builder
	for _, st := range r.Stages {
		fmt.Fprintf(&stages, "<tr><td>%s</td><td>%s</td><td><code>%s</code></td></tr>", html.EscapeString(st.Stage), html.EscapeString(st.Elapsed), html.EscapeString(strings.Trim(stageLine(st), "`")))
	}
	return reportPage.Execute(w, map[string]any{
		"Title":  "toolenv mirror: " + r.Summary.Dataset,
		"Funnel": FunnelSVG(r.Summary),
		"Stages": template.HTML(stages.String()),
		"Body":   template.HTML(markdownTablesToHTML(body.String())),
	})
}

// markdownTablesToHTML turns the report body's Markdown (headings,
// paragraphs and pipe tables) into HTML.
func markdownTablesToHTML(md string) string {
	var b strings.Builder
	lines := strings.Split(md, "\n")
	inTable := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "|"):
			cells := strings.Split(strings.Trim(l, "|"), " | ")
			if !inTable {
				b.WriteString("<table><tr>")
				for _, c := range cells {
					fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(strings.TrimSpace(c)))
				}
				b.WriteString("</tr>")
				inTable = true
				i++ // the separator line
				continue
			}
			b.WriteString("<tr>")
			for _, c := range cells {
				fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(strings.ReplaceAll(strings.TrimSpace(c), `\|`, "|")))
			}
			b.WriteString("</tr>")
		default:
			if inTable {
				b.WriteString("</table>\n")
				inTable = false
			}
			switch {
			case strings.HasPrefix(l, "## "):
				fmt.Fprintf(&b, "<h2>%s</h2>\n", html.EscapeString(l[3:]))
			case strings.TrimSpace(l) != "":
				fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(l))
			}
		}
	}
	if inTable {
		b.WriteString("</table>\n")
	}
	return b.String()
}

var reportPage = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
table{border-collapse:collapse;margin:.5em 0 1.2em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px}
th{background:#f3f3f3}code{font-size:12px;word-break:break-all}
.ct{font:600 14px system-ui,sans-serif}.bl{font:12px system-ui,sans-serif;text-anchor:end}.bv{font:12px system-ui,sans-serif}
</style></head><body>
<h1>{{.Title}}</h1>
{{.Funnel}}
{{if .Stages}}<h2>This run</h2><table><tr><th>Stage</th><th>Elapsed</th><th>What it did</th></tr>{{.Stages}}</table>{{end}}
{{.Body}}
</body></html>
`))
