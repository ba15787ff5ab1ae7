package nl2api

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/nl2api/bird"
)

// Report is what a build did: coverage per flavor, every rejection by
// reason, the parser's coverage, the variants and timings.
type Report struct {
	Data      string `json:"data"`
	Out       string `json:"out"`
	Seed      int64  `json:"seed"`
	Questions int    `json:"questions"`
	// GoldRuns counts the questions whose gold SQL SQLite runs (within
	// the row cap): the ones a build can keep at all.
	GoldRuns  int              `json:"gold_runs"`
	Databases []DatabaseReport `json:"databases"`
	Flavors   []FlavorReport   `json:"flavors"`
	Parser    ParserReport     `json:"parser"`
	Variants  []VariantReport  `json:"variants,omitempty"`
	// Limits are the time limits the build ran under and what needed
	// the longer one.
	Limits  *Limits  `json:"limits,omitempty"`
	Timings []Timing `json:"timings"`
	Seconds float64  `json:"seconds"`
	// Provenance is the toolenv that made the build and its options.
	Provenance *toolenv.Provenance `json:"provenance,omitempty"`
	// Reused, when set, says the output was written from the build cache
	// (Options.BuildCache) rather than made: Timings, Limits and the
	// counts are those of the build that made the entry, Seconds this
	// build's.
	Reused *Reuse `json:"reused,omitempty"`
}

// ReusedLine is the line that says a build was reused, or "".
func (r *Report) ReusedLine() string {
	u := r.Reused
	if u == nil {
		return ""
	}
	key := u.Key
	if len(key) > 12 {
		key = key[:12]
	}
	return fmt.Sprintf("reused build %s from %s (built %s in %.1f s)", key, u.Cache, u.Built.UTC().Format(time.RFC3339), u.Seconds)
}

// DatabaseReport is one database of the build.
type DatabaseReport struct {
	Name      string            `json:"name"`
	Path      string            `json:"path"`
	Questions int               `json:"questions"`
	Error     string            `json:"error,omitempty"`
	Encodings map[string]string `json:"description_encodings,omitempty"`
	Notes     []string          `json:"notes,omitempty"`
}

// FlavorReport is one flavor's coverage.
type FlavorReport struct {
	Flavor     string  `json:"flavor"`
	Collection string  `json:"collection"`
	Dir        string  `json:"dir"`
	Questions  int     `json:"questions"`
	Kept       int     `json:"kept"`
	Percent    float64 `json:"kept_percent"`
	// PercentOfRunnable is Kept of the questions whose gold SQL runs.
	PercentOfRunnable float64        `json:"kept_percent_of_runnable"`
	KeptByDB          map[string]int `json:"kept_by_db"`
	Tools             int            `json:"tools"`
	GoldCalls         int            `json:"gold_calls"`
	Rejections        []ReasonGroup  `json:"rejections"`
	// Writes counts the write tasks (a build with writes), which Kept
	// and the counts above leave out.
	Writes *WriteReport `json:"writes,omitempty"`
}

// VariantReport is one written variant.
type VariantReport struct {
	Name  string `json:"name"`
	Dir   string `json:"dir"`
	Kind  string `json:"kind"` // "obfuscated" or "shrink"
	Tools int    `json:"tools"`
	Tasks int    `json:"tasks"`
	// Verified counts tasks whose gold sequence was replayed on the
	// variant and reproduced the answer.
	Verified int    `json:"verified"`
	Note     string `json:"note,omitempty"`
}

// Timing is how long a stage took.
type Timing struct {
	Stage   string  `json:"stage"`
	Seconds float64 `json:"seconds"`
}

// Flavor returns the report of a flavor, or nil.
func (r *Report) Flavor(name string) *FlavorReport {
	for i := range r.Flavors {
		if r.Flavors[i].Flavor == name {
			return &r.Flavors[i]
		}
	}
	return nil
}

func (r *Report) fill(qs []bird.Question, dbs []*database, cands []*candidate, built []*Built, variants []VariantReport, opt *Options) {
	r.Questions = len(qs)
	for _, c := range cands {
		if c.gold != nil {
			r.GoldRuns++
		}
	}
	count := map[string]int{}
	for _, q := range qs {
		count[q.DB]++
	}
	for _, d := range dbs {
		dr := DatabaseReport{Name: d.name, Path: d.path, Questions: count[d.name], Notes: d.notes}
		if d.err != nil {
			dr.Error = d.err.Error()
		}
		if d.desc != nil {
			dr.Encodings = map[string]string{}
			for f, e := range d.desc.Encodings {
				dr.Encodings[f] = string(e)
			}
		}
		r.Databases = append(r.Databases, dr)
	}
	for _, b := range built {
		fr := FlavorReport{Flavor: b.Flavor, Collection: b.Collection.Name, Dir: b.Dir, Questions: len(qs),
			KeptByDB: map[string]int{}, Tools: len(b.Collection.Tools), Writes: b.Writes}
		if b.Writes != nil {
			fr.Tools -= b.Writes.Tools
		}
		for _, t := range b.Tasks {
			if _, w := t.Meta[MetaWrite]; w {
				continue
			}
			fr.Kept++
			fr.KeptByDB[t.Group]++
			fr.GoldCalls += len(t.Gold)
		}
		if len(qs) > 0 {
			fr.Percent = 100 * float64(fr.Kept) / float64(len(qs))
		}
		if r.GoldRuns > 0 {
			fr.PercentOfRunnable = 100 * float64(fr.Kept) / float64(r.GoldRuns)
		}
		groups := map[[2]string]*ReasonGroup{}
		for _, c := range cands {
			rj := c.rejects[b.Flavor]
			if rj == nil {
				continue
			}
			k := [2]string{rj.Stage, rj.Reason}
			g := groups[k]
			if g == nil {
				g = &ReasonGroup{Stage: rj.Stage, Reason: rj.Reason}
				groups[k] = g
			}
			g.Count++
			g.Questions = append(g.Questions, Rejected{ID: c.q.ID, DB: c.q.DB, Detail: rj.Detail})
		}
		fr.Rejections = sortGroups(groups)
		r.Flavors = append(r.Flavors, fr)
	}
	r.Variants = variants
}

func (r *Report) write(out string, opt *Options) error {
	r.Provenance = buildinfo.Provenance(opt.Command, map[string]any{"data": opt.Data, "out": opt.Out, "dbs": opt.DBs, "flavors": opt.Flavors,
		"obfuscate": opt.Obfuscate, "seed": opt.Seed, "shrink": opt.Shrink, "workers": opt.Workers, "call_timeout": opt.CallTimeout.String(),
		"max_call_timeout": opt.MaxCallTimeout.String()})
	if err := toolenv.WriteJSONFile(filepath.Join(out, "report.json"), r); err != nil {
		return err
	}
	return toolenv.WriteFileAtomic(filepath.Join(out, "report.md"), []byte(r.Markdown()))
}

// Summary is the table printed at the end of a build.
func (r *Report) Summary() [][]string {
	rows := [][]string{{"flavor", "kept", "of", "%", fmt.Sprintf("%% of %d runnable", r.GoldRuns), "tools", "rejected", "top rejection reasons"}}
	for _, f := range r.Flavors {
		var top []string
		for i, g := range f.Rejections {
			if i == 3 {
				break
			}
			top = append(top, fmt.Sprintf("%s (%d)", g.Reason, g.Count))
		}
		rows = append(rows, []string{f.Flavor, fmt.Sprint(f.Kept), fmt.Sprint(f.Questions), fmt.Sprintf("%.1f", f.Percent), fmt.Sprintf("%.1f", f.PercentOfRunnable),
			fmt.Sprint(f.Tools), fmt.Sprint(f.Questions - f.Kept), strings.Join(top, "; ")})
	}
	return rows
}

// Markdown renders the report for people.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# BIRD → SLOT / SEL / REST build report\n\n")
	fmt.Fprintf(&b, "Data: `%s` · output: `%s` · %d questions, %d whose gold SQL runs · %.1f s", r.Data, r.Out, r.Questions, r.GoldRuns, r.Seconds)
	if r.Provenance != nil {
		fmt.Fprintf(&b, " · toolenv `%s`", r.Provenance.Version)
	}
	b.WriteString("\n\n")
	if line := r.ReusedLine(); line != "" {
		fmt.Fprintf(&b, "**This build was reused**: %s; its timings are that build's.\n\n", line)
	}
	if l := r.Limits; l != nil {
		fmt.Fprintf(&b, "Time limits: %s per gold query or verification, %s for one that ran out of it (none ran out of both: such a build fails)", l.CallTimeout, l.MaxCallTimeout)
		if n := len(l.Retried); n > 0 {
			fmt.Fprintf(&b, "; %d needed the longer one", n)
		}
		b.WriteString(". No task depends on the machine's speed.\n\n")
	}
	b.WriteString("## Kept tasks (verified against the gold SQL)\n\n")
	b.WriteString("| flavor | collection | kept | of | % | % of runnable | by database | tools | gold calls |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, f := range r.Flavors {
		var dbs []string
		for db, n := range f.KeptByDB {
			dbs = append(dbs, fmt.Sprintf("%s %d", db, n))
		}
		sort.Strings(dbs)
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %.1f | %.1f | %s | %d | %d |\n", f.Flavor, f.Collection, f.Kept, f.Questions, f.Percent, f.PercentOfRunnable, strings.Join(dbs, ", "), f.Tools, f.GoldCalls)
	}
	writeSection(&b, r)
	b.WriteString("\n## Databases\n\n| database | questions | status | description encodings |\n| --- | --- | --- | --- |\n")
	for _, d := range r.Databases {
		status := "ok"
		if d.Error != "" {
			status = "FAILED: " + d.Error
		}
		var enc []string
		for f, e := range d.Encodings {
			if e != "utf-8" {
				enc = append(enc, f+": "+e)
			}
		}
		sort.Strings(enc)
		fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", d.Name, d.Questions, status, strings.Join(enc, ", "))
	}
	for _, f := range r.Flavors {
		fmt.Fprintf(&b, "\n## Rejected for %s (%d)\n\n", f.Flavor, f.Questions-f.Kept)
		if len(f.Rejections) == 0 {
			b.WriteString("None.\n")
		}
		for _, g := range f.Rejections {
			fmt.Fprintf(&b, "### %s: %s (%d)\n\n", g.Stage, g.Reason, g.Count)
			for _, q := range g.Questions {
				fmt.Fprintf(&b, "- %d (%s): %s\n", q.ID, q.DB, mdEscape(q.Detail))
			}
			b.WriteString("\n")
		}
	}
	p := r.Parser
	fmt.Fprintf(&b, "\n## Parser coverage (%s)\n\n", strings.Join(p.Files, " + "))
	fmt.Fprintf(&b, "Parser: %s\n\n", p.Parser)
	if p.TablesError != "" {
		fmt.Fprintf(&b, "**%s was not used**: %s\n\n", bird.TablesFile, mdEscape(p.TablesError))
	}
	fmt.Fprintf(&b, "| queries | parsed | planned | SLOT decomposed | SEL decomposed |\n| --- | --- | --- | --- | --- |\n")
	fmt.Fprintf(&b, "| %d | %d (%.1f%%) | %d (%.1f%%) | %d (%.1f%%) | %d (%.1f%%) |\n\n", p.Queries, p.Parsed, pct(p.Parsed, p.Queries), p.Planned, pct(p.Planned, p.Queries),
		p.SlotDecomposed, pct(p.SlotDecomposed, p.Queries), p.SelDecomposed, pct(p.SelDecomposed, p.Queries))
	b.WriteString("Decomposition of corpus queries is not executed (their databases are not present), so these counts are an upper bound of what verification would keep.\n\n")
	for _, g := range p.Failures {
		var ids []string
		for i, q := range g.Questions {
			if i == 12 {
				ids = append(ids, "…")
				break
			}
			ids = append(ids, fmt.Sprint(q.ID))
		}
		fmt.Fprintf(&b, "- %s: %s — %d (%s)\n", g.Stage, g.Reason, g.Count, strings.Join(ids, ", "))
	}
	if len(r.Variants) > 0 {
		b.WriteString("\n## Variants\n\n| variant | kind | tools | tasks | verified | note |\n| --- | --- | --- | --- | --- | --- |\n")
		for _, v := range r.Variants {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %s |\n", v.Name, v.Kind, v.Tools, v.Tasks, v.Verified, v.Note)
		}
	}
	b.WriteString("\n## Timings\n\n| stage | seconds |\n| --- | --- |\n")
	for _, t := range r.Timings {
		fmt.Fprintf(&b, "| %s | %.2f |\n", t.Stage, t.Seconds)
	}
	return b.String()
}

func pct(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return 100 * float64(n) / float64(d)
}

func mdEscape(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strings.NewReplacer("|", "\\|", "<", "&lt;", ">", "&gt;").Replace(s)
}

// writeSection renders the write tasks of a build with writes.
func writeSection(b *strings.Builder, r *Report) {
	has := false
	for _, f := range r.Flavors {
		has = has || f.Writes != nil
	}
	if !has {
		return
	}
	b.WriteString("\n## Write tasks (verified: their gold calls leave exactly the gold end state)\n\n")
	b.WriteString("| flavor | candidates | kept | by database | by kind | dropped | dropped by database | write tools |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	counts := func(m map[string]int) string {
		var parts []string
		for k, n := range m {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(parts)
		return strings.Join(parts, ", ")
	}
	for _, f := range r.Flavors {
		w := f.Writes
		if w == nil {
			continue
		}
		fmt.Fprintf(b, "| %s | %d | %d | %s | %s | %d | %s | %d |\n", f.Flavor, w.Candidates, w.Kept, counts(w.KeptByDB), counts(w.ByKind), w.Dropped, counts(w.DroppedByDB), w.Tools)
	}
	for _, f := range r.Flavors {
		w := f.Writes
		if w == nil || len(w.Rejections) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n### Write tasks dropped for %s (%d)\n\n", f.Flavor, w.Dropped)
		for _, g := range w.Rejections {
			fmt.Fprintf(b, "- %s: %s (%d): ", g.Stage, g.Reason, g.Count)
			var ids []string
			for i, t := range g.Tasks {
				if i == 8 {
					ids = append(ids, "…")
					break
				}
				ids = append(ids, fmt.Sprintf("%s (%s)", t.ID, mdEscape(t.Detail)))
			}
			b.WriteString(strings.Join(ids, "; ") + "\n")
		}
	}
}
