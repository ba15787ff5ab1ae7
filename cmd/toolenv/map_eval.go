package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/structural"
	"github.com/toolenv/toolenv/mapping/truth"
	"github.com/toolenv/toolenv/nl2api"
)

func newMapEvalCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure mappings against exact ground truth, and what they are worth at work",
	}
	cmd.AddCommand(newMapEvalDriftCmd(e), newMapEvalSELCmd(e), newMapEvalObfuscationCmd(e), newMapEvalRepairCmd(e), newMapEvalFailoverCmd(e))
	return cmd
}

// driftEval is the result of mapping one drifted collection's versions.
type driftEval struct {
	Collection string             `json:"collection"`
	From       string             `json:"from"`
	To         string             `json:"to"`
	Tools      int                `json:"tools"`
	Scores     *truth.Scores      `json:"scores"`
	Elapsed    time.Duration      `json:"elapsed_ns"`
	Mappings   []*mapping.Mapping `json:"-"`
}

func newMapEvalDriftCmd(e *env) *cobra.Command {
	var (
		dirs   []string
		out    string
		opts   structural.Options
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "drift",
		Short: "Map each drifted collection's base version onto its current one and score it against the drift manifest",
		Long: `For each drifted collection folder (written by toolenv drift), map the tools of its
base version onto those of its current version with the structural mapper alone
(no model), and score the result against the manifest: precision, recall and F1
of the tool pairs and of the field alignments (arguments and response fields),
over everything and over what the drift changed.`,
		Example: `  toolenv drift --in out/bird/rest --out out/drift/rest-v2 --seed 1
  toolenv map eval drift --collection out/drift/rest-v2 --collection out/drift/stb-v2 --out out/map-eval`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if len(dirs) == 0 {
				return usagef("give at least one drifted collection folder with --collection")
			}
			var results []*driftEval
			for _, dir := range dirs {
				c, err := toolenv.ReadCollection(dir)
				if err != nil {
					return err
				}
				if !drift.IsDrifted(c) {
					return usagef("%s is not a drifted collection (its backend is %q); make one with toolenv drift --in %s --out DIR --seed N", dir, c.Backend.Type, dir)
				}
				lin, err := drift.Open(c)
				if err != nil {
					return err
				}
				start := time.Now()
				oldName := c.Name + "@" + lin.Manifest.BaseVersion
				newName := c.Name + "@" + lin.Manifest.Version
				old := truth.Rename(lin.Base.Tools, oldName)
				cur := truth.Rename(lin.Current.Tools, newName)
				ms, err := truth.MapVersions(ctx, old, cur, opts)
				if err != nil {
					return err
				}
				gold, err := truth.FromDrift(lin.Manifest, old, cur, oldName, newName)
				if err != nil {
					return err
				}
				r := &driftEval{Collection: c.Name, From: lin.Manifest.BaseVersion, To: lin.Manifest.Version, Tools: len(gold.Tools),
					Scores: truth.Score(gold, ms), Elapsed: time.Since(start), Mappings: ms}
				results = append(results, r)
				e.logger().Info("scored drift mapping", "collection", c.Name, "tools", r.Tools, "tool_f1", r.Scores.Tools.F1, "field_f1", r.Scores.Fields.F1, "elapsed", r.Elapsed.Round(time.Millisecond))
			}
			if out != "" {
				if err := os.MkdirAll(out, 0o755); err != nil {
					return err
				}
				for _, r := range results {
					set := &mapping.Set{Version: mapping.SetVersion, Collections: []string{r.Collection + "@" + r.From, r.Collection + "@" + r.To}, Mappings: r.Mappings}
					if err := mapping.WriteSet(filepath.Join(out, "mappings-"+r.Collection+"-"+r.From+"-"+r.To+".json"), set); err != nil {
						return err
					}
				}
				if err := toolenv.WriteJSONFile(filepath.Join(out, "drift-eval.json"), results); err != nil {
					return err
				}
				var b strings.Builder
				writeDriftEval(&b, results)
				if err := toolenv.WriteFileAtomic(filepath.Join(out, "drift-eval.md"), []byte(b.String())); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(e.stdout, results)
			}
			writeDriftEval(e.stdout, results)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&dirs, "collection", nil, "a drifted collection folder (repeatable)")
	cmd.Flags().StringVar(&out, "out", "", "write drift-eval.md, drift-eval.json and the mappings into this folder")
	cmd.Flags().Float64Var(&opts.MinScore, "min-score", 0.55, "lowest tool-pair score kept")
	cmd.Flags().Float64Var(&opts.MinField, "min-field", 0.35, "lowest field-pair score kept")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

func prf(p metrics.PRF) string {
	return fmt.Sprintf("%.3f / %.3f / **%.3f**", p.Precision, p.Recall, p.F1)
}

func writeDriftEval(w io.Writer, rs []*driftEval) {
	fmt.Fprintf(w, "# Structural mapping against drift ground truth\n\n")
	fmt.Fprintf(w, "Precision / recall / F1; the structural mapper alone (no model).\n\n")
	fmt.Fprintf(w, "| collection | versions | tools | tool pairs | renamed tools | field alignments | arguments | response fields | renamed fields |\n")
	fmt.Fprintf(w, "| --- | --- | ---: | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rs {
		s := r.Scores
		fmt.Fprintf(w, "| %s | %s→%s | %d | %s | %s | %s | %s | %s | %s |\n", r.Collection, r.From, r.To, r.Tools,
			prf(s.Tools), prf(s.ToolsChanged), prf(s.Fields), prf(s.Inputs), prf(s.Outputs), prf(s.FieldsChanged))
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
		for i, m := range r.Scores.Misses {
			if i == 10 {
				break
			}
			fmt.Fprintf(w, "- %s\n", m)
		}
	}
}

func newMapEvalSELCmd(e *env) *cobra.Command {
	var (
		selDir, slotDir string
		opts            structural.Options
		asJSON          bool
	)
	cmd := &cobra.Command{
		Use:   "sel",
		Short: "Map an NL2SQL build's SEL tools onto its SLOT tools and score them against the SEL tools' own metadata",
		Long: `Every SEL tool of an NL2SQL build names the SLOT operation it specialises and the
arguments it fixes (select_data_equal_to is filter_data with condition equal_to).
This maps SEL onto SLOT with the structural mapper and scores the tool pairs, the
argument alignments and the fixed arguments against that exact truth.`,
		Example: `  toolenv map eval sel --sel out/bird/sel --slot out/bird/slot`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if selDir == "" || slotDir == "" {
				return usagef("--sel and --slot are required (folders of one NL2SQL build)")
			}
			sel, err := toolenv.ReadCollection(selDir)
			if err != nil {
				return err
			}
			slot, err := toolenv.ReadCollection(slotDir)
			if err != nil {
				return err
			}
			gold, err := truth.FromSELMeta(sel, slot)
			if err != nil {
				return err
			}
			ms, err := truth.MapOnto(ctx, sel.Tools, slot.Tools, opts)
			if err != nil {
				return err
			}
			s := truth.Score(gold, ms)
			if asJSON {
				return writeJSON(e.stdout, s)
			}
			fmt.Fprintf(e.stdout, "# SEL → SLOT against the SEL tools' metadata\n\n")
			fmt.Fprintf(e.stdout, "| tool pairs | argument alignments | fixed arguments exact |\n| --- | --- | ---: |\n")
			fixed := "n/a"
			if s.Fixed != nil {
				fixed = fmt.Sprintf("%.3f", *s.Fixed)
			}
			fmt.Fprintf(e.stdout, "| %s | %s | %s |\n\n", prf(s.Tools), prf(s.Inputs), fixed)
			fmt.Fprintf(e.stdout, "%d SEL tools specialise a SLOT operation; %d mapped.\n", s.Counts["gold_tools"], s.Counts["pred_tools"])
			for i, m := range s.Misses {
				if i == 10 {
					break
				}
				fmt.Fprintf(e.stdout, "- %s\n", m)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&selDir, "sel", "", "the SEL collection folder of an NL2SQL build")
	cmd.Flags().StringVar(&slotDir, "slot", "", "the SLOT collection folder of the same build")
	cmd.Flags().Float64Var(&opts.MinScore, "min-score", 0.55, "lowest tool-pair score kept")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the scores as JSON")
	return cmd
}

func newMapEvalObfuscationCmd(e *env) *cobra.Command {
	var (
		origDir, obfDir string
		opts            structural.Options
		asJSON          bool
	)
	cmd := &cobra.Command{
		Use:   "obfuscation",
		Short: "Map an NL2SQL collection onto its obfuscated variant (FUNC_n, ARG_n) and score it against its mapping file",
		Long: `toolenv build bird --obfuscate writes variants whose endpoints are named FUNC_n and
whose arguments are named ARG_n, descriptions kept, with the mapping in
its mapping file (<folder>.mapping.json beside the folder). Names carry nothing there: the structural mapper has only
descriptions, types and response structure to go on.`,
		Example: `  toolenv map eval obfuscation --original out/bird/rest --obfuscated out/bird/rest-obfuscated`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if origDir == "" || obfDir == "" {
				return usagef("--original and --obfuscated are required")
			}
			orig, err := toolenv.ReadCollection(origDir)
			if err != nil {
				return err
			}
			obf, err := toolenv.ReadCollection(obfDir)
			if err != nil {
				return err
			}
			gold, err := truth.FromObfuscation(nl2api.MappingFile(obfDir), orig, obf)
			if err != nil {
				return err
			}
			ms, err := truth.MapVersions(ctx, orig.Tools, obf.Tools, opts)
			if err != nil {
				return err
			}
			s := truth.Score(gold, ms)
			if asJSON {
				return writeJSON(e.stdout, s)
			}
			fmt.Fprintf(e.stdout, "# %s → %s against its mapping file\n\n", orig.Name, obf.Name)
			fmt.Fprintf(e.stdout, "| tool pairs | field alignments | arguments | response fields |\n| --- | --- | --- | --- |\n")
			fmt.Fprintf(e.stdout, "| %s | %s | %s | %s |\n\n", prf(s.Tools), prf(s.Fields), prf(s.Inputs), prf(s.Outputs))
			for i, m := range s.Misses {
				if i == 10 {
					break
				}
				fmt.Fprintf(e.stdout, "- %s\n", m)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&origDir, "original", "", "the original collection folder")
	cmd.Flags().StringVar(&obfDir, "obfuscated", "", "its obfuscated variant's folder (the mapping file <folder>.mapping.json beside it)")
	cmd.Flags().Float64Var(&opts.MinScore, "min-score", 0.55, "lowest tool-pair score kept")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the scores as JSON")
	return cmd
}
