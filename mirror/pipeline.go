package mirror

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The stages, in the order Run runs them.
const (
	StageGenerate   = "generate"
	StageCollect    = "collect"
	StageFilter     = "filter"
	StageSynthesize = "synthesize"
	StageSplit      = "split"
	StageExplain    = "explain"
	StageExport     = "export"
)

// Stages lists the stages in order.
var Stages = []string{StageGenerate, StageCollect, StageFilter, StageSynthesize, StageSplit, StageExplain, StageExport}

// StageSummary says in one line what a stage does ("" for a name that is
// no stage): the short help of the command that runs it alone.
func StageSummary(stage string) string {
	switch stage {
	case StageGenerate:
		return "Write requests for every API (the model's two stages, or the schema-driven sampler)"
	case StageCollect:
		return "Call the real API for every request that has no answer yet"
	case StageFilter:
		return "Keep the answers Appendix D's rules and the documentation check accept"
	case StageSynthesize:
		return "Ask the model for more pairs of long-tail APIs"
	case StageSplit:
		return "Split off MirrorAPI-Bench: OOD success/failure and ID high/medium/low"
	case StageExplain:
		return "Ask the model for rationales of a sample of training pairs (Table 9)"
	case StageExport:
		return "Write SFT and CoT training data, the benchmark files and the dataset card"
	}
	return ""
}

// RunOptions configure a whole run.
type RunOptions struct {
	Generate GenerateOptions
	Collect  CollectOptions
	Filter   FilterOptions
	Synth    SynthOptions
	Split    SplitOptions
	Explain  ExplainOptions
	Export   ExportOptions
	// HarvestRound, with the sampler, generates and collects a second
	// round whose requests use the values the first round's responses
	// held (Generate.Harvest), topping each API up to PerAPI.
	HarvestRound bool
	// Only runs these stages (nil: all).
	Only []string
}

// Config returns the effective settings of every stage, defaults
// applied, as the dataset card records them: no output folder, no clock,
// nothing secret.
func (o RunOptions) Config() map[string]any {
	g, c, f, s, sp, x := o.Generate, o.Collect, o.Filter, o.Synth, o.Split, o.Explain
	g.defaults()
	c.defaults()
	f.defaults()
	s.defaults()
	sp.defaults()
	x.defaults()
	return map[string]any{
		StageGenerate: g, StageCollect: c, StageFilter: f, StageSynthesize: s, StageSplit: sp, StageExplain: x,
		StageExport: map[string]any{"Seed": o.Export.Seed, "NoCoT": o.Export.NoCoT}, "run": map[string]any{"HarvestRound": o.HarvestRound},
	}
}

// ErrInterrupted is returned by Run when its context ended: what was
// done is stored, and running again continues from there.
var ErrInterrupted = errors.New("interrupted: what was done is stored; run the same command again to continue")

// Run runs the stages in order and returns what each did. It stops at
// the first error (or an interrupt), returning the report so far.
func (e *Engine) Run(ctx context.Context, opts RunOptions) (*Report, error) {
	rep := &Report{}
	want := func(stage string) bool { return opts.Only == nil || slices.Contains(opts.Only, stage) }
	step := func(stage string, fn func() (any, error)) error {
		key, _, _ := strings.Cut(stage, " ")
		if !want(key) {
			return nil
		}
		start := time.Now()
		stats, err := fn()
		sr := StageReport{Stage: stage, Elapsed: time.Since(start).Round(time.Millisecond).String(), Stats: stats}
		if err != nil {
			sr.Error = err.Error()
		}
		rep.Stages = append(rep.Stages, sr)
		if err == nil && ctx.Err() != nil {
			err = ErrInterrupted
		}
		if err != nil && ctx.Err() != nil {
			return fmt.Errorf("%s: %w", stage, ErrInterrupted)
		}
		return err
	}
	sampler := e.Model == nil || opts.Generate.Sampler
	// With the sampler, a run that generates and collects makes two
	// rounds: the documented, known and boundary values first, then the
	// rest of each API's requests with the values those answers held. A
	// lone generate learns from whatever answers the dataset holds.
	twoRounds := sampler && opts.HarvestRound && want(StageGenerate) && want(StageCollect)
	first := opts.Generate
	if twoRounds {
		first.NoRandom = true
	} else if sampler && opts.HarvestRound {
		first.Harvest = true
	}
	collect := func(stage string) error {
		return step(stage, func() (any, error) {
			st, err := e.Collect(ctx, opts.Collect)
			if err == nil && st.Interrupted {
				err = ErrInterrupted
			}
			return st, err
		})
	}
	err := step(StageGenerate, func() (any, error) { return e.Generate(ctx, first) })
	if err == nil {
		err = collect(StageCollect)
	}
	if err == nil && twoRounds {
		g := opts.Generate
		g.Harvest = true
		err = step(StageGenerate+" (harvest)", func() (any, error) { return e.Generate(ctx, g) })
		if err == nil {
			err = collect(StageCollect + " (harvest)")
		}
	}
	if err == nil {
		err = step(StageFilter, func() (any, error) { return e.Filter(ctx, opts.Filter) })
	}
	if err == nil {
		err = step(StageSynthesize, func() (any, error) { return e.Synthesize(ctx, opts.Synth) })
	}
	if err == nil {
		err = step(StageSplit, func() (any, error) { return e.Split(ctx, opts.Split) })
	}
	if err == nil {
		err = step(StageExplain, func() (any, error) { return e.Explain(ctx, opts.Explain) })
	}
	if err == nil && opts.Export.Out != "" {
		err = step(StageExport, func() (any, error) { return e.Export(ctx, opts.Export) })
	}
	sum, serr := e.Summary(context.WithoutCancel(ctx))
	if serr != nil && err == nil {
		err = serr
	}
	rep.Summary = sum
	return rep, err
}
