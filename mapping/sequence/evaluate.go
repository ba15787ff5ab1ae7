package sequence

import (
	"context"

	toolenv "github.com/toolenv/toolenv"
)

// EvalOptions configure Evaluate.
type EvalOptions struct {
	// Options configure the model's sequencer (K is also the baseline's
	// number of candidates; Model names the model in the report).
	Options
	// SearchMode is the retrieval mode, recorded in the report (empty
	// means "default").
	SearchMode string
	// Chat is the model; nil scores only the retrieval baseline.
	Chat Chat
	// Tool returns the documentation of a retrieved tool by name (the
	// prompt shows it).
	Tool func(name string) *toolenv.Tool
	// Progress, when not nil, is called after each task the model
	// sequenced.
	Progress func(done, total int)
}

// Evaluate scores the retrieval baseline on tasks and, with a model
// (opts.Chat), sequences every task with it (tasks are also the pool of
// solved examples) and scores that, as toolenv map sequence reports it.
// It returns the report (its Provenance left to the caller), the model's
// outcomes and the baseline's. A canceled ctx stops between tasks; the
// report then covers the tasks done.
func Evaluate(ctx context.Context, retr Retriever, tasks []*toolenv.Task, opts EvalOptions) (Report, []*Outcome, []*Outcome) {
	base := Baseline(ctx, retr, tasks, opts.K)
	rep := Report{Tasks: len(tasks), K: opts.K, Baseline: Summarise(base), Mode: opts.SearchMode}
	if rep.Mode == "" {
		rep.Mode = "default"
	}
	if opts.Chat == nil {
		return rep, nil, base
	}
	s := New(opts.Chat, retr, tasks, opts.Tool, opts.Options)
	var outs []*Outcome
	for i, t := range tasks {
		if ctx.Err() != nil {
			break
		}
		outs = append(outs, s.Run(ctx, t))
		if opts.Progress != nil {
			opts.Progress(i+1, len(tasks))
		}
	}
	sum := Summarise(outs)
	rep.Scores, rep.Style, rep.ModelName = &sum, opts.Style, opts.Model
	return rep, outs, base
}
