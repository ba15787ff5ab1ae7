package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/toolbench"
)

type driftFlags struct {
	in         string
	toolbench  []string
	openapi    string
	demo       bool
	tasks      string
	out        string
	seed       uint64
	ops        []string
	rates      string
	version    string
	validation string
	mode       string
	feedback   string
	rules      string
	force      bool
}

func newDriftCmd(e *env) *cobra.Command {
	var f driftFlags
	cmd := &cobra.Command{
		Use:   "drift",
		Short: "Write the next version of a collection: seeded, semantics-preserving schema drift with a manifest, changelog and breaking-change report",
		Long: `Drift reads a collection (a folder, possibly itself drifted, or ToolBench docs, an
OpenAPI document, or the demo) and writes its next version into --out: the new
collection.json, tools.json and tasks.jsonl, manifest.json (every change, exact and
invertible), CHANGELOG.md, breaking.md/breaking.json (oasdiff), openapi.json and base/
(the original collection, whose backend keeps executing every call). Serve the result
with "toolenv serve --collection OUT". The same input, seed and options give
byte-identical output; chains work (drift a drifted folder again for v3).

Operators (--ops, in the order they run): ` + strings.Join(drift.OperatorNames(), ", ") + `.`,
		Example: `  toolenv drift --demo --out out/demo-v2 --seed 7
  toolenv drift --in out/demo-v2 --out out/demo-v3 --seed 8
  toolenv drift --in out/bird/slot --out out/bird/slot-v2 --seed 1 --ops rename,type,nest --rate rename=0.5
  toolenv drift --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction --out out/stb-v2 --seed 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("seed") {
				return usagef("--seed is required: the same seed gives the same drift")
			}
			return runDrift(cmd.Context(), e, &f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.in, "in", "", "collection folder to drift (a built collection, or a drifted one for the next version)")
	fs.StringArrayVar(&f.toolbench, "toolbench", nil, "drift ToolBench docs instead: a StableToolBench query file or folder (repeatable)")
	fs.StringVar(&f.openapi, "openapi", "", "drift an OpenAPI 3 document instead")
	fs.BoolVar(&f.demo, "demo", false, "drift the embedded demo collection")
	fs.StringVar(&f.tasks, "tasks", "", "tasks (JSONL) to translate to the new version (default: the source's own tasks)")
	fs.StringVar(&f.out, "out", "", "folder to write the new version into (required)")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of every random choice (required)")
	fs.StringSliceVar(&f.ops, "ops", nil, "operators to run, comma separated (default: all)")
	fs.StringVar(&f.rates, "rate", "", "per-operator rates, e.g. rename=0.5,type=0.2 (probability each eligible tool/parameter/field is changed)")
	fs.StringVar(&f.version, "version", "", "name of the new version (default: the next, v1 → v2)")
	fs.StringVar(&f.validation, "validation", "", "validation policy of the new version: strict (default) or lenient")
	fs.StringVar(&f.mode, "mode", "", "mode of the new version: strict (default; old calls are rejected) or compat (old calls are translated with a warning)")
	fs.StringVar(&f.feedback, "feedback", "", "feedback level of the new version: none, terse or helpful (default: the source's)")
	fs.StringVar(&f.rules, "rules", "", "folder of drift rules replacing the built-in ones (synonyms.tsv, abbreviations.tsv, actions.tsv, default_flips.tsv, nest_groups.json, error_styles.json, paths.json)")
	fs.BoolVar(&f.force, "force", false, "replace --out whatever it holds")
	return cmd
}

func runDrift(ctx context.Context, e *env, f *driftFlags) error {
	if f.out == "" {
		return usagef("--out is required")
	}
	n := 0
	for _, set := range []bool{f.in != "", len(f.toolbench) > 0, f.openapi != "", f.demo} {
		if set {
			n++
		}
	}
	if n != 1 {
		return usagef("give exactly one source: --in DIR, --toolbench PATH, --openapi FILE or --demo")
	}
	rates, err := parseRates(f.rates)
	if err != nil {
		return err
	}
	opts := drift.Options{Seed: f.seed, Operators: f.ops, Rates: rates, Version: f.version, Validation: f.validation, Mode: f.mode, Feedback: f.feedback}
	if f.rules != "" {
		if opts.Rules, err = drift.ReadRules(os.DirFS(f.rules)); err != nil {
			return usagef("--rules %s: %v", f.rules, err)
		}
	}
	lin, tasks, baseDir, err := driftSource(ctx, f)
	if err != nil {
		return err
	}
	if f.tasks != "" {
		ts, problems, err := toolenv.ReadTasks(f.tasks)
		if err != nil {
			return err
		}
		for _, p := range problems {
			e.logger().Warn("task skipped", "err", p)
		}
		tasks = ts
	}
	opts.Tasks = tasks
	d, err := drift.Drift(lin, opts)
	if err != nil {
		return usageError{err}
	}
	if err := drift.Write(f.out, d, drift.WriteOptions{BaseDir: baseDir, Force: f.force}); err != nil {
		return usageError{err}
	}
	printDriftSummary(e, f.out, d)
	return nil
}

// driftSource loads the collection to drift, its tasks and the folder its
// base came from.
func driftSource(ctx context.Context, f *driftFlags) (*drift.Lineage, []*toolenv.Task, string, error) {
	switch {
	case f.in != "":
		c, err := toolenv.ReadCollection(f.in)
		if err != nil {
			return nil, nil, "", err
		}
		l, err := drift.Open(c)
		if err != nil {
			return nil, nil, "", err
		}
		tasks, _, err := toolenv.ReadTasks(filepath.Join(f.in, toolenv.TasksFile))
		if err != nil && !os.IsNotExist(unwrapAll(err)) {
			return nil, nil, "", err
		}
		baseDir := f.in
		if drift.IsDrifted(c) {
			baseDir = l.Base.Dir
		}
		return l, tasks, baseDir, nil
	case len(f.toolbench) > 0:
		src, err := toolbench.Load(f.toolbench...)
		if err != nil {
			return nil, nil, "", err
		}
		c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
		c.Version = "v1"
		return drift.NewLineage(c), src.Tasks(c), "", nil
	case f.openapi != "":
		c, err := environment.LoadOpenAPI(ctx, f.openapi)
		if err != nil {
			return nil, nil, "", err
		}
		return drift.NewLineage(c), nil, "", nil
	}
	c, err := demo.Collection()
	if err != nil {
		return nil, nil, "", err
	}
	tasks, err := demo.Tasks()
	if err != nil {
		return nil, nil, "", err
	}
	return drift.NewLineage(c), tasks, "", nil
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		next := u.Unwrap()
		if next == nil {
			return err
		}
		err = next
	}
}

// parseRates reads "op=p,op=p".
func parseRates(s string) (map[string]float64, error) {
	out := map[string]float64{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || k == "" {
			return nil, usagef("--rate %q: want op=probability pairs, e.g. rename=0.5,type=0.2", s)
		}
		p, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, usagef("--rate %s: %q is not a number", k, v)
		}
		out[k] = p
	}
	return out, nil
}

func printDriftSummary(e *env, out string, d *drift.Drifted) {
	c := d.Lineage.Current
	counts := map[string]int{}
	for _, tc := range d.Step.Tools {
		for _, ch := range tc.Changes {
			counts[ch.Op]++
		}
	}
	var parts []string
	for _, op := range []string{drift.OpRenameTool, drift.OpEndpoint, drift.OpRenameParam, drift.OpRetype, drift.OpEnumCase, drift.OpMakeOptional,
		drift.OpMakeRequired, drift.OpFlipDefault, drift.OpNest, drift.OpRenameField, drift.OpErrorFormat, drift.OpDeprecate} {
		if counts[op] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", op, counts[op]))
		}
	}
	apis := 0
	for _, t := range d.From.Tools {
		if !t.Hidden() && t.Meta[drift.MetaStub] != "true" {
			apis++
		}
	}
	fmt.Fprintf(e.stdout, "%s %s → %s (seed %d): %d of %d tools changed; %s\n", c.Name, d.Step.From, d.Step.To, d.Step.Seed, len(d.Step.Tools), apis, strings.Join(parts, ", "))
	fmt.Fprintf(e.stdout, "tasks translated: %d\n", len(d.Tasks))
	fmt.Fprintf(e.stdout, "wrote %s (manifest.json, CHANGELOG.md, breaking.md, tools.json); serve it with: toolenv serve --collection %s\n", out, out)
}
