package score

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolenv/toolenv/eval/metrics"
)

// Write writes the Markdown report as DIR/score.md and the report as
// DIR/score.json, creating DIR.
func Write(dir, markdown string, report any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	b, err := json.MarshalIndent(report, "", " ")
	if err != nil {
		return fmt.Errorf("encode the report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "score.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "score.md"), []byte(markdown), 0o644)
}

func f4(x float64) string {
	if math.IsNaN(x) {
		return "NaN"
	}
	return fmt.Sprintf("%.4f", x)
}

// NestfulMarkdown is the readable report of a NESTful scoring.
func NestfulMarkdown(r *NestfulReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# NESTful scores: %s\n\n", r.Input)
	fmt.Fprintf(&b, "NESTful's own `calculate_scores` (src/scorer.py, with the `%s` parser of src/output_parsers.py and scikit-learn 1.2.1's macro averaging), reproduced exactly by toolenv's `eval/metrics.Nestful`. Variant: **%s**", r.Options.ParserFunc(), r.Variant)
	if r.Variant == "reference" {
		b.WriteString(" (the reference as it is, quirks included).")
	} else {
		b.WriteString(" (corrections of the reference's quirks; docs/eval.md says what each changes).")
	}
	b.WriteString("\n\n")
	b.WriteString("| Set | Samples | Intent P | Intent R | Intent F1 | Slot P | Slot R | Slot F1 | Partial match | Full match | Parse errors |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	var notes []string
	for _, s := range r.Sets {
		if s.Result == nil {
			fmt.Fprintf(&b, "| %s | %d | — | — | — | — | — | — | — | — | — |\n", s.Name, s.Samples)
			notes = append(notes, fmt.Sprintf("%s: no score: %s", s.Name, s.Error))
			continue
		}
		x := s.Result
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", s.Name, s.Samples,
			f4(x.Intent.Precision), f4(x.Intent.Recall), f4(x.Intent.F1), f4(x.Slot.Precision), f4(x.Slot.Recall), f4(x.Slot.F1),
			f4(x.PartialMatch), f4(x.FullMatch), x.ParseErrors)
		if math.IsNaN(x.PartialMatch) {
			notes = append(notes, fmt.Sprintf("%s: the partial match is NaN, as the reference's is: a sample has no call on either side (scikit-learn's accuracy of two empty lists)", s.Name))
		}
	}
	undefined := 0
	for _, s := range r.Sets {
		for _, p := range s.PerSample {
			if p.Error != "" {
				undefined++
			}
		}
	}
	if undefined > 0 {
		notes = append(notes, fmt.Sprintf("%d sample(s) have no score alone (score.json says why: the reference stops on a sample whose gold calls name no API or have no argument)", undefined))
	}
	if a := r.Agreement; a != nil {
		fmt.Fprintf(&b, "\nEqual to NESTful's own output (%s) to 1e-9: %d of %d samples, %d of %d sets.\n", a.Reference, a.Samples.N, a.Samples.Total, a.Sets.N, a.Sets.Total)
		for _, u := range a.Unmatched {
			fmt.Fprintf(&b, "- differs: %s\n", u)
		}
	}
	if len(notes) > 0 {
		b.WriteString("\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	b.WriteString("\nIntent and slot are macro-averaged over the gold labels; partial match is the mean over samples of the share of aligned calls equal to the gold ones, full match the share of samples with every call equal. score.json holds the figures at full precision, each sample scored alone, and the three-place strings the reference prints.\n")
	return b.String()
}

// BFCLMarkdown is the readable report of a BFCL check.
func BFCLMarkdown(r *BFCLReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# BFCL AST checker: %s\n\n", r.Input)
	fmt.Fprintf(&b, "BFCL's own AST checker (berkeley-function-call-leaderboard, `ast_checker.py` with its eval runner's decoder checks), reproduced verdict for verdict by toolenv's `eval/metrics.BFCLCheck`, on %d case(s). ", r.Cases)
	fmt.Fprintf(&b, "Possible answers: BFCL's own for %d, the gold call's values only for %d", r.AnswersFromBFCL, r.Cases-r.AnswersFromBFCL)
	if r.Cases-r.AnswersFromBFCL > 0 {
		b.WriteString(" (BFCL may accept more: other listed values, optional parameters; give its possible answers with --answers to be exact)")
	}
	fmt.Fprintf(&b, "; types from BFCL's function descriptions for %d, read from the answers for %d.\n\n", r.TypesFromDocs, r.Cases-r.TypesFromDocs)
	if r.Decoded > 0 {
		fmt.Fprintf(&b, "The raw outputs of %d case(s) (BFCL's result files) were decoded as BFCL's model handlers decode them.\n\n", r.Decoded)
	}
	b.WriteString("| Mode | Valid | Scored | Accuracy |\n| --- | ---: | ---: | ---: |\n")
	fmt.Fprintf(&b, "| AST (leaderboard: any order for parallel categories) | %d | %d of %d | %s |\n", r.AST.Valid, r.AST.Scored, r.Cases, f4(r.AST.Accuracy))
	fmt.Fprintf(&b, "| Ordered (call by call, in output order) | %d | %d of %d | %s |\n", r.Ordered.Valid, r.Ordered.Scored, r.Cases, f4(r.Ordered.Accuracy))
	if len(r.Unscored) > 0 {
		fmt.Fprintf(&b, "\n## Not scored\n\nAccuracy is over the scored cases. These have no verdict (a mode named: only that mode):\n\n")
		for i, u := range r.Unscored {
			if i == 50 {
				fmt.Fprintf(&b, "- … %d more (score.json lists every one)\n", len(r.Unscored)-50)
				break
			}
			name := u.ID
			if name == "" {
				name = u.Where
			}
			if u.Mode != "" {
				name += " (" + u.Mode + ")"
			}
			fmt.Fprintf(&b, "- %s: %s\n", name, u.Reason)
		}
	}

	b.WriteString("\n## Accuracy by category\n\n| Category | AST | Ordered |\n| --- | ---: | ---: |\n")
	for _, c := range sortedKeys(r.AST.ByCategory) {
		a, o := r.AST.ByCategory[c], r.Ordered.ByCategory[c]
		fmt.Fprintf(&b, "| %s | %d / %d | %d / %d |\n", c, a.N, a.Total, o.N, o.Total)
	}

	b.WriteString("\n## Verdicts\n\n| Verdict | AST | Ordered |\n| --- | ---: | ---: |\n")
	seen := map[string]bool{}
	var order []string
	for _, v := range append(append([]string{}, metrics.BFCLVerdicts...), append(sortedKeys(r.AST.Verdicts), sortedKeys(r.Ordered.Verdicts)...)...) {
		if !seen[v] && (r.AST.Verdicts[v] > 0 || r.Ordered.Verdicts[v] > 0) {
			seen[v] = true
			order = append(order, v)
		}
	}
	for _, v := range order {
		fmt.Fprintf(&b, "| `%s` | %d | %d |\n", v, r.AST.Verdicts[v], r.Ordered.Verdicts[v])
	}

	if r.AST.Agreement != nil || r.Ordered.Agreement != nil {
		b.WriteString("\n## Agreement with the verdicts in the file\n\n")
		agree := func(a *Agreement) string {
			if a == nil {
				return "—"
			}
			return fmt.Sprintf("%d / %d", a.Equal, a.Total)
		}
		fmt.Fprintf(&b, "AST: %s; ordered: %s.\n", agree(r.AST.Agreement), agree(r.Ordered.Agreement))
		muts := map[string]bool{}
		for _, a := range []*Agreement{r.AST.Agreement, r.Ordered.Agreement} {
			if a != nil {
				for m := range a.ByMutation {
					muts[m] = true
				}
			}
		}
		if len(muts) > 0 {
			b.WriteString("\n| Mutation | AST | Ordered |\n| --- | ---: | ---: |\n")
			for _, m := range sortedKeys(muts) {
				cell := func(a *Agreement) string {
					if a == nil {
						return "—"
					}
					f := a.ByMutation[m]
					return fmt.Sprintf("%d / %d", f.N, f.Total)
				}
				fmt.Fprintf(&b, "| %s | %s | %s |\n", m, cell(r.AST.Agreement), cell(r.Ordered.Agreement))
			}
		}
		shown := 0
		for _, c := range r.PerCase {
			if (c.ExpectAST == "" || c.ExpectAST == c.AST) && (c.ExpectOrdered == "" || c.ExpectOrdered == c.Ordered) {
				continue
			}
			if shown == 0 {
				b.WriteString("\nFirst differences (toolenv / the file):\n\n")
			}
			if shown == 20 {
				b.WriteString("- … (score.json lists every case)\n")
				break
			}
			fmt.Fprintf(&b, "- %s: AST %s / %s; ordered %s / %s\n", c.ID, c.AST, c.ExpectAST, c.Ordered, c.ExpectOrdered)
			shown++
		}
	}
	b.WriteString("\nThese are BFCL's verdicts, not the Live API-Bench paper's Appendix G categories that toolenv's eval reports for failed direct attempts; docs/eval.md says how the two relate.\n")
	return b.String()
}

// Overview is the short summary printed with the reports of a BFCL check.
func (r *BFCLReport) Overview() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d cases: AST accuracy %.4f, ordered %.4f\n", r.Cases, r.AST.Accuracy, r.Ordered.Accuracy)
	if len(r.Unscored) > 0 {
		fmt.Fprintf(&b, "not scored: %d (score.md says why; accuracy is over the %d and %d scored)\n", len(r.Unscored), r.AST.Scored, r.Ordered.Scored)
	}
	if a, o := r.AST.Agreement, r.Ordered.Agreement; a != nil && o != nil {
		fmt.Fprintf(&b, "verdicts equal to the file's: AST %d of %d, ordered %d of %d\n", a.Equal, a.Total, o.Equal, o.Total)
	}
	return b.String()
}

// Overview is the short summary printed with the reports of a NESTful
// scoring.
func (r *NestfulReport) Overview() string {
	var b strings.Builder
	for _, s := range r.Sets {
		if s.Result == nil {
			fmt.Fprintf(&b, "%s: no score: %s\n", s.Name, s.Error)
			continue
		}
		x := s.Result
		fmt.Fprintf(&b, "%s: %d samples, intent F1 %.3f, slot F1 %.3f, partial %.3f, full %.3f\n", s.Name, s.Samples, x.Intent.F1, x.Slot.F1, x.PartialMatch, x.FullMatch)
	}
	if a := r.Agreement; a != nil {
		fmt.Fprintf(&b, "equal to NESTful's own output to 1e-9: %d of %d samples, %d of %d sets\n", a.Samples.N, a.Samples.Total, a.Sets.N, a.Sets.Total)
	}
	return b.String()
}

// Emit writes a scoring's reports: to dir as score.md and score.json,
// printing the overview and where they are to w; or, with dir "", the
// Markdown report to w.
func Emit(w io.Writer, dir, markdown string, report any, overview string) error {
	if dir == "" {
		_, err := fmt.Fprint(w, markdown)
		return err
	}
	if err := Write(dir, markdown, report); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s\nreports: %s, %s\n", overview, filepath.Join(dir, "score.md"), filepath.Join(dir, "score.json"))
	return err
}
