package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval"
)

// HTMLOptions tune the page.
type HTMLOptions struct {
	// MaxEpisodes bounds the trajectories shown (0 means 2000); the
	// summary always covers every episode.
	MaxEpisodes int
	// MaxText bounds each thought, observation and raw output shown
	// (bytes; 0 means 2000).
	MaxText int
}

type badge struct{ Text, Class string }

type stepView struct {
	N           int
	Thought     string
	Call        string
	Status      string
	OK          bool
	Observation string
	Raw         string
}

type episodeView struct {
	Anchor   string
	Task     string
	Run      int
	Split    string
	Agent    string
	Model    string
	Query    string
	Badges   []badge
	Gold     string
	Steps    []stepView
	Answer   string
	Error    string
	Parse    string
	Verdicts []string
	Tree     int
}

type pageData struct {
	Banner     string
	RunLine    string
	Info       *eval.RunInfo
	InfoJSON   string
	Charts     []template.HTML
	Categories template.HTML
	Tables     []tableData
	Episodes   []episodeView
	Omitted    int
	Problems   []string
}

// HTML writes one self-contained page: run information, a chart per
// metric, the error categories, the tables and every episode's
// trajectory.
func HTML(w io.Writer, info *eval.RunInfo, s *eval.Summary, eps []*eval.Episode, problems []string, opt HTMLOptions) error {
	if opt.MaxEpisodes <= 0 {
		opt.MaxEpisodes = 2000
	}
	if opt.MaxText <= 0 {
		opt.MaxText = 2000
	}
	d := pageData{Info: info, Tables: tables(info, s), Categories: categoryChart(s.Groups), Problems: problems, Banner: Banner(s.Status)}
	if info != nil {
		d.RunLine = strings.ReplaceAll(runLine(info, s), "`", "")
		raw, _ := json.MarshalIndent(info, "", "  ")
		d.InfoJSON = string(raw)
	}
	for _, m := range chartMetrics {
		if c := barChart(m, s.Groups); c != "" {
			d.Charts = append(d.Charts, c)
		}
	}
	for i, e := range eps {
		if i >= opt.MaxEpisodes {
			d.Omitted = len(eps) - i
			break
		}
		d.Episodes = append(d.Episodes, view(i, e, opt.MaxText))
	}
	return page.Execute(w, d)
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

func callText(c *toolenv.GoldCall) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(c.Args)
	s := c.Name + "(" + strings.TrimSpace(b.String()) + ")"
	if c.Label != "" {
		s += " → " + c.Label
	}
	return s
}

func view(i int, e *eval.Episode, max int) episodeView {
	o := e.Outcome
	tr := o.Trajectory
	v := episodeView{Anchor: fmt.Sprintf("ep%d", i), Task: e.TaskID, Run: e.Run, Split: e.Split, Agent: e.Agent, Model: e.Model,
		Query: clip(e.Query, max), Answer: clip(tr.Answer, max), Error: tr.Error, Parse: o.ParseError, Tree: len(o.Tree)}
	switch {
	case e.Score.HasAnswer && e.Score.Completed:
		v.Badges = append(v.Badges, badge{"completed", "ok"})
	case e.Score.HasAnswer:
		v.Badges = append(v.Badges, badge{"not completed", "bad"})
	}
	if tr.Error != "" {
		v.Badges = append(v.Badges, badge{"error", "bad"})
	}
	if o.OutOfBudget {
		v.Badges = append(v.Badges, badge{"out of budget", "warn"})
	}
	if e.Score.Stuck {
		v.Badges = append(v.Badges, badge{"stuck", "warn"})
	}
	if c := e.Score.ErrorCategory; c != "" {
		v.Badges = append(v.Badges, badge{"Appendix G: " + c, "warn"})
	}
	if b := e.Score.BFCL; b != "" {
		class := "warn"
		if b == "valid" {
			class = "ok"
		}
		v.Badges = append(v.Badges, badge{"BFCL: " + b, class})
	}
	for k, vd := range e.SoPR {
		v.Badges = append(v.Badges, badge{"SoPR " + string(vd.Label), labelClass(string(vd.Label))})
		v.Verdicts = append(v.Verdicts, fmt.Sprintf("SoPR round %d: %s (%s) %s %s", k, vd.Label, vd.Stage, vd.Reason, vd.Error))
	}
	for k, vd := range e.FAC {
		v.Badges = append(v.Badges, badge{"FAC " + string(vd.Label), labelClass(string(vd.Label))})
		v.Verdicts = append(v.Verdicts, fmt.Sprintf("FAC round %d: %s %s %s", k, vd.Label, vd.Reason, vd.Error))
	}
	if len(e.Gold) > 0 {
		var g []string
		for k := range e.Gold {
			g = append(g, callText(&e.Gold[k]))
		}
		v.Gold = strings.Join(g, "\n")
	}
	for k, st := range tr.Steps {
		sv := stepView{N: k + 1, Thought: clip(st.Thought, max), Observation: clip(st.Observation, max), Raw: clip(st.Raw, max), Status: string(st.Status), OK: st.Status == "" || st.Status == toolenv.StatusOK}
		if st.Call != nil {
			sv.Call = clip(callText(st.Call), max)
		}
		if sv.Raw == sv.Thought {
			sv.Raw = ""
		}
		v.Steps = append(v.Steps, sv)
	}
	return v
}

func labelClass(l string) string {
	switch l {
	case "Solved":
		return "ok"
	case "Unsure":
		return "warn"
	}
	return "bad"
}

var page = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>toolenv evaluation</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#222}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}th,td{border:1px solid #ddd;padding:3px 8px;text-align:left}th{background:#f5f5f5}
td{font-variant-numeric:tabular-nums}
svg{display:block;margin:10px 0 18px}svg .ct{font-weight:600;font-size:13px}svg .bl{font-size:12px;text-anchor:end}
svg .bv,svg .tick,svg .lg{font-size:11px;fill:#444}svg .tick{text-anchor:middle}svg .grid{stroke:#eee}svg .err{stroke:#222;stroke-width:1.5}
details{border:1px solid #ddd;border-radius:4px;margin:6px 0;padding:4px 8px}summary{cursor:pointer}
.b{display:inline-block;border-radius:3px;padding:0 6px;margin-left:6px;font-size:12px;color:#fff}.ok{background:#59a14f}.bad{background:#e15759}.warn{background:#f28e2b}
pre{white-space:pre-wrap;word-break:break-word;background:#f8f8f8;padding:6px;margin:4px 0;font-size:12px;max-height:360px;overflow:auto}
.banner{background:#fdecea;border:2px solid #e15759;border-radius:4px;padding:8px 12px;font-weight:600;margin:12px 0}
.step{border-left:3px solid #4e79a7;padding-left:8px;margin:8px 0}.step.fail{border-color:#e15759}.muted{color:#777}
</style></head><body>
<h1>toolenv evaluation</h1>
{{if .Banner}}<div class="banner" role="alert">{{.Banner}}</div>{{end}}
<p>{{.RunLine}}</p>
{{if .Problems}}<details><summary>{{len .Problems}} problem(s) while reading the inputs</summary><ul>{{range .Problems}}<li>{{.}}</li>{{end}}</ul></details>{{end}}
{{if .InfoJSON}}<details><summary>Run details (run.json)</summary><pre>{{.InfoJSON}}</pre></details>{{end}}
<h2>Metrics</h2>
<p class="muted">Means over runs; whiskers span ± one standard deviation over runs.</p>
{{range .Charts}}{{.}}{{end}}
{{if .Categories}}<h2>Error categories</h2>{{.Categories}}{{end}}
<h2>Tables</h2>
{{range .Tables}}<h3>{{.Title}}</h3>{{if .Note}}<p class="muted">{{.Note}}</p>{{end}}
<table><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>{{end}}
<h2>Trajectories</h2>
{{if .Omitted}}<p class="muted">{{.Omitted}} more episode(s) are in episodes.jsonl.</p>{{end}}
{{range .Episodes}}<details id="{{.Anchor}}"><summary><b>{{.Task}}</b> run {{.Run}} <span class="muted">{{.Split}} · {{.Agent}} · {{.Model}}</span>{{range .Badges}}<span class="b {{.Class}}">{{.Text}}</span>{{end}}</summary>
<p><b>Query:</b> {{.Query}}</p>
{{if .Gold}}<p><b>Gold sequence</b></p><pre>{{.Gold}}</pre>{{end}}
{{if .Parse}}<p><b>Not parsed:</b> {{.Parse}}</p>{{end}}
{{range .Steps}}<div class="step{{if not .OK}} fail{{end}}"><div class="muted">step {{.N}}{{if .Status}} · {{.Status}}{{end}}</div>
{{if .Thought}}<div><b>Thought:</b> {{.Thought}}</div>{{end}}
{{if .Call}}<div><b>Call:</b> <code>{{.Call}}</code></div>{{end}}
{{if .Observation}}<div><b>Observation</b></div><pre>{{.Observation}}</pre>{{end}}
{{if .Raw}}<details><summary class="muted">model output as received</summary><pre>{{.Raw}}</pre></details>{{end}}</div>{{end}}
{{if .Tree}}<p class="muted">DFSDT searched {{.Tree}} tree nodes; the path shown is the one that ended the search.</p>{{end}}
{{if .Answer}}<p><b>Final answer:</b></p><pre>{{.Answer}}</pre>{{end}}
{{if .Error}}<p><b>Error:</b> {{.Error}}</p>{{end}}
{{range .Verdicts}}<div class="muted">{{.}}</div>{{end}}
</details>{{end}}
</body></html>
`))
