package drift

import (
	"context"
	"log/slog"
	"os"

	toolenv "github.com/toolenv/toolenv"
)

// Job is one run of toolenv drift: the source, optionally other tasks to
// translate and a folder of rules, the drift's Options and the folder
// the next version is written into.
type Job struct {
	Source
	// Tasks, when not empty, is a JSONL task file translated instead of
	// the source's own tasks.
	Tasks string
	// Rules, when not empty, is a folder of drift rules replacing the
	// built-in ones (ReadRules); it overrides Options.Rules.
	Rules string
	// Out is the folder the new version is written into (required);
	// Force replaces whatever it holds.
	Out   string
	Force bool
	Options
	// Logger receives the task lines that do not parse (skipped). Nil
	// means slog.Default().
	Logger *slog.Logger
}

// Run loads the job's source (and tasks), drifts it (Drift) and writes
// the new version into Out (Write). Mistakes in what the job asks —
// no Out, unreadable rules, options Drift refuses, an Out that holds
// something else — are invalid_arguments errors; a source that cannot
// be read keeps its own error.
func Run(ctx context.Context, job Job) (*Drifted, error) {
	invalid := func(err error) error { return &toolenv.Error{Status: toolenv.StatusInvalidArguments, Err: err} }
	if job.Out == "" {
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--out is required")
	}
	log := job.Logger
	if log == nil {
		log = slog.Default()
	}
	opts := job.Options
	if job.Rules != "" {
		rules, err := ReadRules(os.DirFS(job.Rules))
		if err != nil {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--rules %s: %v", job.Rules, err)
		}
		opts.Rules = rules
	}
	lin, tasks, baseDir, err := job.Source.Load(ctx)
	if err != nil {
		return nil, err
	}
	if job.Tasks != "" {
		ts, problems, err := toolenv.ReadTasks(job.Tasks)
		if err != nil {
			return nil, err
		}
		for _, p := range problems {
			log.Warn("task skipped", "err", p)
		}
		tasks = ts
	}
	opts.Tasks = tasks
	d, err := Drift(lin, opts)
	if err != nil {
		return nil, invalid(err)
	}
	if err := Write(job.Out, d, WriteOptions{BaseDir: baseDir, Force: job.Force}); err != nil {
		return nil, invalid(err)
	}
	return d, nil
}
