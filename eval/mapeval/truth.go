package mapeval

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/structural"
	"github.com/toolenv/toolenv/mapping/truth"
	"github.com/toolenv/toolenv/nl2api"
)

// DriftResult is the result of mapping one drifted collection's base
// version onto its current version.
type DriftResult struct {
	Collection string        `json:"collection"`
	From       string        `json:"from"`
	To         string        `json:"to"`
	Tools      int           `json:"tools"`
	Scores     *truth.Scores `json:"scores"`
	Elapsed    time.Duration `json:"elapsed_ns"`
	// Mappings are the mappings scored.
	Mappings []*mapping.Mapping `json:"-"`
}

// Drift maps the base version of each drifted collection folder onto its
// current version with the structural mapper alone and scores the result
// against the drift manifest. A folder that is not drifted is an
// invalid-arguments error.
func Drift(ctx context.Context, dirs []string, opts structural.Options, log *slog.Logger) ([]*DriftResult, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var results []*DriftResult
	for _, dir := range dirs {
		c, err := toolenv.ReadCollection(dir)
		if err != nil {
			return nil, err
		}
		if !drift.IsDrifted(c) {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "%s is not a drifted collection (its backend is %q); make one with toolenv drift --in %s --out DIR --seed N", dir, c.Backend.Type, dir)
		}
		lin, err := drift.Open(c)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		oldName := c.Name + "@" + lin.Manifest.BaseVersion
		newName := c.Name + "@" + lin.Manifest.Version
		old := truth.Rename(lin.Base.Tools, oldName)
		cur := truth.Rename(lin.Current.Tools, newName)
		ms, err := truth.MapVersions(ctx, old, cur, opts)
		if err != nil {
			return nil, err
		}
		gold, err := truth.FromDrift(lin.Manifest, old, cur, oldName, newName)
		if err != nil {
			return nil, err
		}
		r := &DriftResult{Collection: c.Name, From: lin.Manifest.BaseVersion, To: lin.Manifest.Version, Tools: len(gold.Tools),
			Scores: truth.Score(gold, ms), Elapsed: time.Since(start), Mappings: ms}
		results = append(results, r)
		log.Info("scored drift mapping", "collection", c.Name, "tools", r.Tools, "tool_f1", r.Scores.Tools.F1, "field_f1", r.Scores.Fields.F1, "elapsed", r.Elapsed.Round(time.Millisecond))
	}
	return results, nil
}

// DriftReport is drift-eval.json: the results and how they were made.
type DriftReport struct {
	Provenance *toolenv.Provenance `json:"provenance"`
	Results    []*DriftResult      `json:"results"`
}

// WriteDrift writes into out the mappings of every result
// (mappings-<collection>-<from>-<to>.json), drift-eval.json (the results
// with the provenance of prov, nil for this program with no command or
// configuration) and drift-eval.md.
func WriteDrift(out string, rs []*DriftResult, prov *toolenv.Provenance) error {
	if prov == nil {
		prov = buildinfo.Provenance(nil, nil)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, r := range rs {
		set := &mapping.Set{Version: mapping.SetVersion, Collections: []string{r.Collection + "@" + r.From, r.Collection + "@" + r.To}, Mappings: r.Mappings}
		if err := mapping.WriteSet(filepath.Join(out, "mappings-"+r.Collection+"-"+r.From+"-"+r.To+".json"), set); err != nil {
			return err
		}
	}
	if err := toolenv.WriteJSONFile(filepath.Join(out, "drift-eval.json"), &DriftReport{Provenance: prov, Results: rs}); err != nil {
		return err
	}
	var b strings.Builder
	DriftMarkdown(&b, rs)
	fmt.Fprintf(&b, "\nMade by toolenv %s.\n", prov.Version)
	return toolenv.WriteFileAtomic(filepath.Join(out, "drift-eval.md"), []byte(b.String()))
}

// PRF formats precision / recall / F1 for a Markdown table, F1 in bold.
func PRF(p metrics.PRF) string {
	return fmt.Sprintf("%.3f / %.3f / **%.3f**", p.Precision, p.Recall, p.F1)
}

// DriftMarkdown writes the results as a Markdown table, with the counts
// and examples of misses.
func DriftMarkdown(w io.Writer, rs []*DriftResult) {
	fmt.Fprintf(w, "# Structural mapping against drift ground truth\n\n")
	fmt.Fprintf(w, "Precision / recall / F1; the structural mapper alone (no model).\n\n")
	fmt.Fprintf(w, "| collection | versions | tools | tool pairs | renamed tools | field alignments | arguments | response fields | renamed fields |\n")
	fmt.Fprintf(w, "| --- | --- | ---: | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rs {
		s := r.Scores
		fmt.Fprintf(w, "| %s | %s→%s | %d | %s | %s | %s | %s | %s | %s |\n", r.Collection, r.From, r.To, r.Tools,
			PRF(s.Tools), PRF(s.ToolsChanged), PRF(s.Fields), PRF(s.Inputs), PRF(s.Outputs), PRF(s.FieldsChanged))
	}
	fmt.Fprintln(w)
	for _, r := range rs {
		c := r.Scores.Counts
		fmt.Fprintf(w, "- %s: %d tools (%d renamed), %d argument and %d response field pairs (%d renamed or moved); mapped in %s\n",
			r.Collection, c["gold_tools"], c["gold_tools_changed"], c["gold_inputs"], c["gold_outputs"], c["gold_fields_changed"], r.Elapsed.Round(time.Millisecond))
	}
	for _, r := range rs {
		if len(r.Scores.Misses) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nExamples of misses (%s):\n\n", r.Collection)
		writeMisses(w, r.Scores.Misses)
	}
}

// writeMisses lists the first ten misses.
func writeMisses(w io.Writer, misses []string) {
	for i, m := range misses {
		if i == 10 {
			break
		}
		fmt.Fprintf(w, "- %s\n", m)
	}
}

// SEL maps the SEL tools of an NL2SQL build (folder selDir) onto its SLOT
// tools (slotDir) and scores the tool pairs, argument alignments and
// fixed arguments against the SEL tools' own metadata.
func SEL(ctx context.Context, selDir, slotDir string, opts structural.Options) (*truth.Scores, error) {
	sel, err := toolenv.ReadCollection(selDir)
	if err != nil {
		return nil, err
	}
	slot, err := toolenv.ReadCollection(slotDir)
	if err != nil {
		return nil, err
	}
	gold, err := truth.FromSELMeta(sel, slot)
	if err != nil {
		return nil, err
	}
	ms, err := truth.MapOnto(ctx, sel.Tools, slot.Tools, opts)
	if err != nil {
		return nil, err
	}
	return truth.Score(gold, ms), nil
}

// SELMarkdown writes SEL's scores as Markdown.
func SELMarkdown(w io.Writer, s *truth.Scores) {
	fmt.Fprintf(w, "# SEL → SLOT against the SEL tools' metadata\n\n")
	fmt.Fprintf(w, "| tool pairs | argument alignments | fixed arguments exact |\n| --- | --- | ---: |\n")
	fixed := "n/a"
	if s.Fixed != nil {
		fixed = fmt.Sprintf("%.3f", *s.Fixed)
	}
	fmt.Fprintf(w, "| %s | %s | %s |\n\n", PRF(s.Tools), PRF(s.Inputs), fixed)
	fmt.Fprintf(w, "%d SEL tools specialise a SLOT operation; %d mapped.\n", s.Counts["gold_tools"], s.Counts["pred_tools"])
	writeMisses(w, s.Misses)
}

// Obfuscation maps a collection (folder origDir) onto its obfuscated
// variant (obfDir, its mapping file beside it) and scores the result
// against the mapping file. It returns the two collections' names too.
func Obfuscation(ctx context.Context, origDir, obfDir string, opts structural.Options) (s *truth.Scores, orig, obf string, err error) {
	oc, err := toolenv.ReadCollection(origDir)
	if err != nil {
		return nil, "", "", err
	}
	bc, err := toolenv.ReadCollection(obfDir)
	if err != nil {
		return nil, "", "", err
	}
	gold, err := truth.FromObfuscation(nl2api.MappingFile(obfDir), oc, bc)
	if err != nil {
		return nil, "", "", err
	}
	ms, err := truth.MapVersions(ctx, oc.Tools, bc.Tools, opts)
	if err != nil {
		return nil, "", "", err
	}
	return truth.Score(gold, ms), oc.Name, bc.Name, nil
}

// ObfuscationMarkdown writes Obfuscation's scores as Markdown.
func ObfuscationMarkdown(w io.Writer, orig, obf string, s *truth.Scores) {
	fmt.Fprintf(w, "# %s → %s against its mapping file\n\n", orig, obf)
	fmt.Fprintf(w, "| tool pairs | field alignments | arguments | response fields |\n| --- | --- | --- | --- |\n")
	fmt.Fprintf(w, "| %s | %s | %s | %s |\n\n", PRF(s.Tools), PRF(s.Fields), PRF(s.Inputs), PRF(s.Outputs))
	writeMisses(w, s.Misses)
}
