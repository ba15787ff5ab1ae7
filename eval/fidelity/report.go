package fidelity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// Files are the report files Write produces.
var Files = []string{"summary.json", "report.md", "report.html", "pairs.jsonl"}

// Overview is the Markdown report's "Overall" section (what toolenv eval
// fidelity prints), without the per-tool tables; empty when the report
// has none.
func Overview(s *Summary) string {
	md := Markdown(s)
	i := strings.Index(md, "## Overall")
	if i < 0 {
		return ""
	}
	rest := md[i:]
	if j := strings.Index(rest, "## Per tool"); j >= 0 {
		rest = rest[:j]
	}
	return strings.TrimSpace(rest)
}

// Write writes summary.json, report.md, report.html and pairs.jsonl (one
// scored pair a line) into dir.
func Write(dir string, s *Summary, scored []*Scored) error {
	if err := toolenv.WriteJSONFile(filepath.Join(dir, "summary.json"), s); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	if err := toolenv.WriteFileAtomic(filepath.Join(dir, "report.md"), []byte(Markdown(s))); err != nil {
		return fmt.Errorf("write report.md: %w", err)
	}
	var b bytes.Buffer
	if err := HTML(&b, s, scored); err != nil {
		return fmt.Errorf("render report.html: %w", err)
	}
	if err := toolenv.WriteFileAtomic(filepath.Join(dir, "report.html"), b.Bytes()); err != nil {
		return fmt.Errorf("write report.html: %w", err)
	}
	b.Reset()
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, x := range scored {
		if err := enc.Encode(x); err != nil {
			return fmt.Errorf("write pairs.jsonl: %w", err)
		}
	}
	if err := toolenv.WriteFileAtomic(filepath.Join(dir, "pairs.jsonl"), b.Bytes()); err != nil {
		return fmt.Errorf("write pairs.jsonl: %w", err)
	}
	return nil
}

// stat is a mean and what it is over: "42.1 (n=17)".
func stat(s Stat, digits int) string {
	if s.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%.*f (n=%d)", digits, s.Mean, s.N)
}

// scoreHead are the overview's and the per-tool table's columns.
var scoreHead = []string{"Pairs", "BLEU", "Corpus BLEU", "Cosine", "Judge 1–10", "Doc following %", "Status agreement %", "Answered by"}

func scoreCells(sc *Scores) []string {
	corpus := "–"
	if n := sc.Pairs - sc.Failed; n > 0 {
		corpus = fmt.Sprintf("%.1f (n=%d)", sc.CorpusBLEU, n)
	}
	var by []string
	for _, k := range slices.Sorted(maps.Keys(sc.Sources)) {
		name := k
		if name == "" {
			name = "toolenv"
		}
		by = append(by, fmt.Sprintf("%s %d", name, sc.Sources[k]))
	}
	pairs := fmt.Sprint(sc.Pairs)
	if sc.Failed > 0 {
		pairs += fmt.Sprintf(" (%d not answered)", sc.Failed)
	}
	return []string{pairs, stat(sc.BLEU, 1), corpus, stat(sc.Cosine, 1), stat(sc.Rating, 2), stat(sc.DocFollowing, 1), stat(sc.StatusAgreement, 1), strings.Join(by, ", ")}
}

// settingsLines describe the measurement in prose.
func settingsLines(s *Summary) []string {
	st := s.Settings
	lines := []string{
		fmt.Sprintf("Simulator `%s`; %d pair(s) of %d tool(s) from %s.", st.Simulator, s.Overall.Pairs, len(s.Tools), strings.Join(st.Sources, ", ")),
		fmt.Sprintf("BLEU-4 exactly as NLTK computes it, over %s with %s smoothing, × 100: the mean of the pairs' sentence BLEU (the paper's figure) and the corpus BLEU.", tokensName(st.BLEUTokens), st.BLEUSmoothing),
	}
	switch {
	case st.Embedder == "":
		lines = append(lines, "Cosine: not measured.")
	case st.EmbedderOffline:
		lines = append(lines, fmt.Sprintf("Cosine × 100 of embeddings from `%s`, toolenv's offline lexical embedder (no embeddings endpoint was given): a lexical similarity, not comparable with the paper's text-embedding-3-small figures.", st.Embedder))
	default:
		lines = append(lines, fmt.Sprintf("Cosine × 100 of embeddings from `%s`.", st.Embedder))
	}
	if st.Judge != "" {
		lines = append(lines, fmt.Sprintf("Judge `%s` with the paper's prompts: the LLM-as-a-judge rating (1–10) and documentation following (overall_eval, %% of pairs).", st.Judge))
	} else {
		lines = append(lines, "Judges: not asked (no --judge-url/--judge-model).")
	}
	if st.Sample > 0 {
		lines = append(lines, fmt.Sprintf("At most %d pair(s) per tool, sampled with seed %d.", st.Sample, st.Seed))
	}
	return lines
}

func tokensName(t string) string {
	if t == "words" {
		return "whitespace-separated words"
	}
	return "characters (Python's list(text))"
}

// Markdown renders the summary as Markdown tables.
func Markdown(s *Summary) string {
	var b strings.Builder
	b.WriteString("# toolenv simulator fidelity\n\n")
	if w := Banner(s.Status); w != "" {
		b.WriteString("> **" + w + "**\n\n")
	}
	for _, l := range settingsLines(s) {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n## Overall\n\n")
	mdTable(&b, scoreHead, [][]string{scoreCells(&s.Overall)})
	if o := s.Overall; o.RatingUnparseable+o.RatingFailed+o.DocUnparseable+o.DocFailed+o.EmbedFailed > 0 {
		fmt.Fprintf(&b, "Not scored: judge rating %d unparseable, %d failed; documentation following %d unparseable, %d failed; embeddings %d failed.\n\n",
			o.RatingUnparseable, o.RatingFailed, o.DocUnparseable, o.DocFailed, o.EmbedFailed)
	}
	b.WriteString("## Per tool\n\n")
	var rows [][]string
	for i := range s.Tools {
		rows = append(rows, append([]string{s.Tools[i].Tool}, scoreCells(&s.Tools[i].Scores)...))
	}
	mdTable(&b, append([]string{"Tool"}, scoreHead...), rows)
	if len(s.Settings.Prompts) > 0 {
		b.WriteString("## Judge prompts\n\n")
		var pr [][]string
		for _, p := range s.Settings.Prompts {
			pr = append(pr, []string{p.Name, p.Version, p.SHA256})
		}
		mdTable(&b, []string{"Prompt", "Version", "SHA-256 (first 16)"}, pr)
	}
	if len(s.Skipped) > 0 {
		b.WriteString("## Skipped inputs\n\n")
		for _, sk := range s.Skipped {
			b.WriteString("- " + sk + "\n")
		}
	}
	return b.String()
}

func mdTable(b *strings.Builder, head []string, rows [][]string) {
	esc := strings.NewReplacer("|", `\|`, "\n", " ")
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for range head {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = esc.Replace(c)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n")
}

// palette matches eval/report's charts.
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759"}

// barChart draws one row per tool with a bar per metric on 0–100.
func barChart(title string, s *Summary) template.HTML {
	type metric struct {
		name string
		get  func(*Scores) (float64, bool)
	}
	ms := []metric{
		{"BLEU", func(sc *Scores) (float64, bool) { return sc.BLEU.Mean, sc.BLEU.N > 0 }},
		{"Cosine", func(sc *Scores) (float64, bool) { return sc.Cosine.Mean, sc.Cosine.N > 0 }},
		{"Judge ×10", func(sc *Scores) (float64, bool) { return sc.Rating.Mean * 10, sc.Rating.N > 0 }},
		{"Doc following %", func(sc *Scores) (float64, bool) { return sc.DocFollowing.Mean, sc.DocFollowing.N > 0 }},
	}
	var shown []metric
	for _, m := range ms {
		if _, ok := m.get(&s.Overall); ok {
			shown = append(shown, m)
		}
	}
	rows := append([]ToolScores{{Tool: "overall", Scores: s.Overall}}, s.Tools...)
	const width, labelW, barH, gap, top = 760, 300, 12, 10, 44
	plotW := float64(width - labelW - 60)
	rowH := len(shown)*barH + gap
	height := top + len(rows)*rowH + 20
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="%s">`, width, height, html.EscapeString(title))
	fmt.Fprintf(&b, `<text x="0" y="16" class="ct">%s</text>`, html.EscapeString(title))
	for i, m := range shown {
		x := labelW + i*110
		fmt.Fprintf(&b, `<rect x="%d" y="24" width="10" height="10" fill="%s"/><text x="%d" y="33" class="lg">%s</text>`, x, palette[i%len(palette)], x+14, html.EscapeString(m.name))
	}
	for t := 0; t <= 4; t++ {
		x := float64(labelW) + plotW*float64(t)/4
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="grid"/><text x="%.1f" y="%d" class="tick">%d</text>`, x, top-4, x, height-18, x, height-4, 25*t)
	}
	for r, row := range rows {
		y := top + r*rowH
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="bl">%s</text>`, labelW-8, y+len(shown)*barH/2+4, html.EscapeString(clip(row.Tool, 48)))
		for i, m := range shown {
			v, ok := m.get(&row.Scores)
			if !ok {
				continue
			}
			w := plotW * max(0, min(v, 100)) / 100
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s %s: %.1f</title></rect>`, labelW, y+i*barH, w, barH-2, palette[i%len(palette)], html.EscapeString(row.Tool), m.name, v)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="bv">%.1f</text>`, float64(labelW)+w+4, y+i*barH+barH-3, v)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" … (%d more bytes)", len(s)-cut)
}

type pairView struct {
	Tool, Args, Origin, Real, Simulated, Status, Source, BLEU, Cosine, Rating, Doc, Verdicts string
}

type pageData struct {
	Lines    []string
	Chart    template.HTML
	Head     []string
	Overall  []string
	Tools    [][]string
	Pairs    []pairView
	Omitted  int
	Skipped  []string
	Settings string
	Banner   string
}

// maxPairsShown bounds the pairs the page shows; pairs.jsonl has all.
const maxPairsShown = 2000

// HTML writes one self-contained page in the look of eval's reports: the
// settings, a chart per tool, the tables and every pair (up to 2,000)
// with the real and the simulated response side by side.
func HTML(w io.Writer, s *Summary, scored []*Scored) error {
	var lines []string
	for _, l := range settingsLines(s) {
		lines = append(lines, strings.ReplaceAll(l, "`", ""))
	}
	d := pageData{Lines: lines, Chart: barChart("Fidelity per tool (0–100)", s), Head: scoreHead, Overall: scoreCells(&s.Overall), Skipped: s.Skipped, Banner: Banner(s.Status)}
	for i := range s.Tools {
		d.Tools = append(d.Tools, append([]string{s.Tools[i].Tool}, scoreCells(&s.Tools[i].Scores)...))
	}
	raw, _ := json.MarshalIndent(s.Settings, "", "  ")
	d.Settings = string(raw)
	for i, x := range scored {
		if i >= maxPairsShown {
			d.Omitted = len(scored) - i
			break
		}
		v := pairView{Tool: x.Tool, Args: clip(string(x.Args), 500), Origin: x.Origin, Real: clip(x.Real, 4000), Simulated: clip(x.Simulated, 4000),
			Status: fmt.Sprintf("real %s, simulated %s", x.RealStatus, x.SimStatus), Source: string(x.Source), BLEU: fmt.Sprintf("%.1f", 100*x.BLEU)}
		if x.Cosine != nil {
			v.Cosine = fmt.Sprintf("%.1f", 100**x.Cosine)
		}
		var verdicts []string
		if r := x.Rating; r != nil {
			if r.Parsed {
				v.Rating = fmt.Sprintf("%g", r.Score)
			} else {
				v.Rating = "unparseable"
			}
			verdicts = append(verdicts, "Judge: "+clip(r.Raw+r.Error, 2000))
		}
		if dv := x.Doc; dv != nil {
			switch {
			case dv.Parsed && dv.Follows:
				v.Doc = "follows"
			case dv.Parsed:
				v.Doc = "does not follow"
			default:
				v.Doc = "unparseable"
			}
			verdicts = append(verdicts, "Documentation following: "+clip(dv.Raw+dv.Error, 2000))
		}
		if x.SimError != "" {
			verdicts = append(verdicts, "Simulator error: "+clip(x.SimError, 500))
		}
		if x.Failed != "" {
			verdicts = append(verdicts, "Not scored: "+clip(x.Failed, 500))
		}
		v.Verdicts = strings.Join(verdicts, "\n\n")
		d.Pairs = append(d.Pairs, v)
	}
	return page.Execute(w, d)
}

var page = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>toolenv simulator fidelity</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#222}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}th,td{border:1px solid #ddd;padding:3px 8px;text-align:left}th{background:#f5f5f5}
td{font-variant-numeric:tabular-nums}
svg{display:block;margin:10px 0 18px}svg .ct{font-weight:600;font-size:13px}svg .bl{font-size:12px;text-anchor:end}
svg .bv,svg .tick,svg .lg{font-size:11px;fill:#444}svg .tick{text-anchor:middle}svg .grid{stroke:#eee}
details{border:1px solid #ddd;border-radius:4px;margin:6px 0;padding:4px 8px}summary{cursor:pointer}
pre{white-space:pre-wrap;word-break:break-word;background:#f8f8f8;padding:6px;margin:4px 0;font-size:12px;max-height:360px;overflow:auto}
.banner{background:#fdecea;border:2px solid #e15759;border-radius:4px;padding:8px 12px;font-weight:600;margin:12px 0}
.side{display:grid;grid-template-columns:1fr 1fr;gap:8px}.muted{color:#777}
</style></head><body>
<h1>toolenv simulator fidelity</h1>
{{if .Banner}}<div class="banner" role="alert">{{.Banner}}</div>{{end}}
{{range .Lines}}<p>{{.}}</p>{{end}}
<details><summary>Settings (summary.json)</summary><pre>{{.Settings}}</pre></details>
{{if .Skipped}}<details><summary>{{len .Skipped}} input(s) skipped</summary><ul>{{range .Skipped}}<li>{{.}}</li>{{end}}</ul></details>{{end}}
<h2>Scores</h2>
{{.Chart}}
<h3>Overall</h3>
<table><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr><tr>{{range .Overall}}<td>{{.}}</td>{{end}}</tr></table>
<h3>Per tool</h3>
<table><tr><th>Tool</th>{{range .Head}}<th>{{.}}</th>{{end}}</tr>{{range .Tools}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>
<h2>Pairs</h2>
{{if .Omitted}}<p class="muted">{{.Omitted}} more pair(s) are in pairs.jsonl.</p>{{end}}
{{range .Pairs}}<details><summary><b>{{.Tool}}</b> <span class="muted">{{.Origin}} · {{.Source}}</span> BLEU {{.BLEU}}{{if .Cosine}} · cosine {{.Cosine}}{{end}}{{if .Rating}} · judge {{.Rating}}{{end}}{{if .Doc}} · {{.Doc}}{{end}}</summary>
<p><b>Arguments:</b> <code>{{.Args}}</code> <span class="muted">{{.Status}}</span></p>
<div class="side"><div><b>Real</b><pre>{{.Real}}</pre></div><div><b>Simulated</b><pre>{{.Simulated}}</pre></div></div>
{{if .Verdicts}}<pre class="muted">{{.Verdicts}}</pre>{{end}}
</details>{{end}}
</body></html>
`))
