package mapeval

import (
	"context"
	"log/slog"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/mapping/structural"
	"github.com/toolenv/toolenv/mapping/truth"
	"github.com/toolenv/toolenv/mapping/verify"
)

// The measurements as the "toolenv map eval" commands take them: each
// Config's tags are its command's flags (internal/configfile binds them),
// and its Run checks what is required and measures.

// invalid is an invalid_arguments error: a flag missing or wrong.
func invalid(format string, args ...any) error {
	return toolenv.Errorw(toolenv.StatusInvalidArguments, "", format, args...)
}

// DriftConfig configures "toolenv map eval drift" (Drift).
type DriftConfig struct {
	Collections []string `json:"collections" flag:"collection" path:"file" help:"a drifted collection folder (repeatable)"`
	// Out, when set, receives WriteDrift's files.
	Out      string  `json:"out" flag:"out" path:"file" help:"write drift-eval.md, drift-eval.json and the mappings into this folder"`
	MinScore float64 `json:"min_score" flag:"min-score" default:"0.55" help:"lowest tool-pair score kept"`
	MinField float64 `json:"min_field" flag:"min-field" default:"0.35" help:"lowest field-pair score kept"`
}

// Run scores every collection (Drift) and writes the results into Out,
// recording command in their provenance.
func (c *DriftConfig) Run(ctx context.Context, log *slog.Logger, command []string) ([]*DriftResult, error) {
	if len(c.Collections) == 0 {
		return nil, invalid("give at least one drifted collection folder with --collection")
	}
	results, err := Drift(ctx, c.Collections, structural.Options{MinScore: c.MinScore, MinField: c.MinField}, log)
	if err != nil || c.Out == "" {
		return results, err
	}
	prov := buildinfo.Provenance(command, map[string]any{"collections": c.Collections, "min_score": c.MinScore, "min_field": c.MinField})
	return results, WriteDrift(c.Out, results, prov)
}

// SELConfig configures "toolenv map eval sel" (SEL).
type SELConfig struct {
	SEL      string  `json:"sel" flag:"sel" path:"file" help:"the SEL collection folder of an NL2SQL build"`
	SLOT     string  `json:"slot" flag:"slot" path:"file" help:"the SLOT collection folder of the same build"`
	MinScore float64 `json:"min_score" flag:"min-score" default:"0.55" help:"lowest tool-pair score kept"`
}

// Run maps SEL onto SLOT and scores it (SEL).
func (c *SELConfig) Run(ctx context.Context) (*truth.Scores, error) {
	if c.SEL == "" || c.SLOT == "" {
		return nil, invalid("--sel and --slot are required (folders of one NL2SQL build)")
	}
	return SEL(ctx, c.SEL, c.SLOT, structural.Options{MinScore: c.MinScore})
}

// ObfuscationConfig configures "toolenv map eval obfuscation"
// (Obfuscation).
type ObfuscationConfig struct {
	Original   string  `json:"original" flag:"original" path:"file" help:"the original collection folder"`
	Obfuscated string  `json:"obfuscated" flag:"obfuscated" path:"file" help:"its obfuscated variant's folder (the mapping file <folder>.mapping.json beside it)"`
	MinScore   float64 `json:"min_score" flag:"min-score" default:"0.55" help:"lowest tool-pair score kept"`
}

// Run maps the original onto its obfuscated variant and scores it
// (Obfuscation).
func (c *ObfuscationConfig) Run(ctx context.Context) (s *truth.Scores, orig, obf string, err error) {
	if c.Original == "" || c.Obfuscated == "" {
		return nil, "", "", invalid("--original and --obfuscated are required")
	}
	return Obfuscation(ctx, c.Original, c.Obfuscated, structural.Options{MinScore: c.MinScore})
}

// RepairConfig configures "toolenv map eval repair" (Repair).
type RepairConfig struct {
	Collection string   `json:"collection" flag:"collection" path:"file" help:"the drifted collection folder"`
	Tasks      string   `json:"tasks" flag:"tasks" path:"file" help:"tasks of the old version (tasks.jsonl with gold calls); default: one call per documented API"`
	Limit      int      `json:"limit" flag:"limit" help:"run only the first N tasks"`
	Agents     []string `json:"agents" flag:"agent,comma" default:"oracle,direct-replay" help:"agents: oracle, direct-replay"`
	Parallel   int      `json:"parallel" flag:"parallel" help:"episodes run at once (default: one per core; the figures do not depend on it)"`
}

// Run measures the repair adapter (Repair); w gives the logging, the
// environment and the progress (its Tasks and Limit are cfg's).
func (c *RepairConfig) Run(ctx context.Context, w WorkOptions) (*Report, error) {
	if c.Collection == "" {
		return nil, invalid("--collection DRIFTED_DIR is required (a folder written by toolenv drift)")
	}
	w.Tasks, w.Limit, w.Parallel = c.Tasks, c.Limit, c.Parallel
	return Repair(ctx, RepairOptions{WorkOptions: w, Collection: c.Collection, Agents: c.Agents})
}

// FailoverConfig configures "toolenv map eval failover" (Failover).
type FailoverConfig struct {
	Primary     string `json:"primary" flag:"primary" path:"file" help:"the primary collection folder (its tasks are run)"`
	Alternative string `json:"alternative" flag:"alternative" path:"file" help:"the alternative provider's collection folder"`
	Tasks       string `json:"tasks" flag:"tasks" path:"file" help:"tasks to run (default: the primary's tasks.jsonl)"`
	Limit       int    `json:"limit" flag:"limit" help:"run only the first N tasks"`
	NoProbe     bool   `json:"no_probe" flag:"no-probe" help:"map from the documentation alone: do not probe endpoints it cannot tell apart"`
	Samples     int    `json:"probe_samples" flag:"probe-samples" default:"5" help:"argument sets each probed endpoint is called with"`
	Parallel    int    `json:"parallel" flag:"parallel" help:"episodes run at once (default: one per core; the figures do not depend on it)"`
}

// Run measures failover (Failover); w as for RepairConfig.Run.
func (c *FailoverConfig) Run(ctx context.Context, w WorkOptions) (*Report, error) {
	if c.Primary == "" || c.Alternative == "" {
		return nil, invalid("--primary and --alternative are required (collection folders)")
	}
	if c.Samples < 0 {
		return nil, invalid("--probe-samples %d: give a positive number of argument sets (or --no-probe)", c.Samples)
	}
	w.Tasks, w.Limit, w.Parallel = c.Tasks, c.Limit, c.Parallel
	return Failover(ctx, FailoverOptions{WorkOptions: w, Primary: c.Primary, Alternative: c.Alternative, NoProbe: c.NoProbe,
		Probe: verify.Options{Samples: c.Samples}})
}
