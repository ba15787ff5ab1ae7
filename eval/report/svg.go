package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"

	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/metrics"
)

// palette colours series in charts.
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

const (
	chartWidth  = 760
	labelWidth  = 300
	barHeight   = 18
	barGap      = 8
	chartMargin = 28
)

// barChart draws one horizontal bar per group with the metric's mean and,
// when measured over several runs, a whisker of ± one standard deviation.
// Groups without the metric are left out.
func barChart(m metric, gs []eval.Group) template.HTML {
	type bar struct {
		label string
		s     *eval.Stat
		color string
	}
	var bars []bar
	agents := map[string]int{}
	for i := range gs {
		s := m.get(&gs[i])
		if s == nil || m.unmeasured(&gs[i]) != "" {
			continue // no bar for a figure over no readable verdict
		}
		if _, ok := agents[gs[i].Agent]; !ok {
			agents[gs[i].Agent] = len(agents)
		}
		bars = append(bars, bar{label(&gs[i]), s, palette[agents[gs[i].Agent]%len(palette)]})
	}
	if len(bars) == 0 {
		return ""
	}
	scale := 1.0
	if m.percent {
		scale = 100
	}
	plotW := float64(chartWidth - labelWidth - 60)
	height := chartMargin + len(bars)*(barHeight+barGap) + 20
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="%s">`, chartWidth, height, html.EscapeString(m.title))
	fmt.Fprintf(&b, `<text x="0" y="16" class="ct">%s</text>`, html.EscapeString(m.title))
	for t := 0; t <= 4; t++ {
		x := float64(labelWidth) + plotW*float64(t)/4
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="grid"/>`, x, chartMargin-4, x, height-18)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="tick">%s</text>`, x, height-4, trimZeros(scale*float64(t)/4))
	}
	for i, br := range bars {
		y := chartMargin + i*(barHeight+barGap)
		v := math.Max(0, math.Min(br.s.Mean/scale, 1))
		w := plotW * v
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="bl">%s</text>`, labelWidth-8, y+barHeight-4, html.EscapeString(br.label))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %s</title></rect>`, labelWidth, y, w, barHeight, br.color, html.EscapeString(br.label), m.format(br.s))
		if len(br.s.PerRun) > 1 && br.s.Std > 0 {
			lo := float64(labelWidth) + plotW*math.Max(0, (br.s.Mean-br.s.Std)/scale)
			hi := float64(labelWidth) + plotW*math.Min(1, (br.s.Mean+br.s.Std)/scale)
			mid := float64(y) + barHeight/2
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="err"/>`, lo, mid, hi, mid)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="bv">%s</text>`, float64(labelWidth)+w+6, y+barHeight-4, m.format(br.s))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func trimZeros(f float64) string {
	s := fmt.Sprintf("%.2f", f)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// categoryChart draws, per group of direct attempts, one bar split into
// the Appendix G (BFCL-style) error categories of its failures.
func categoryChart(gs []eval.Group) template.HTML {
	var rows []*eval.Group
	for i := range gs {
		if len(gs[i].ErrorCategories) > 0 {
			rows = append(rows, &gs[i])
		}
	}
	if len(rows) == 0 {
		return ""
	}
	colour := map[string]string{}
	for i, c := range metrics.ErrorCategories {
		colour[c] = palette[i%len(palette)]
	}
	plotW := float64(chartWidth - labelWidth - 20)
	legendH := 18 * ((len(metrics.ErrorCategories) + 2) / 3)
	height := chartMargin + len(rows)*(barHeight+barGap) + legendH + 10
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="error categories">`, chartWidth, height)
	b.WriteString(`<text x="0" y="16" class="ct">Failed direct attempts by error category (Live API-Bench Appendix G)</text>`)
	for i, g := range rows {
		y := chartMargin + i*(barHeight+barGap)
		total := 0
		for _, c := range g.ErrorCategories {
			total += c.Count
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="bl">%s</text>`, labelWidth-8, y+barHeight-4, html.EscapeString(label(g)))
		x := float64(labelWidth)
		for _, c := range g.ErrorCategories {
			w := plotW * float64(c.Count) / float64(total)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %d</title></rect>`, x, y, w, barHeight, colour[c.Name], c.Name, c.Count)
			x += w
		}
	}
	ly := chartMargin + len(rows)*(barHeight+barGap) + 6
	for i, c := range metrics.ErrorCategories {
		x := (i % 3) * (chartWidth / 3)
		y := ly + (i/3)*18
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" class="lg">%s</text>`, x, y, colour[c], x+16, y+11, c)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
