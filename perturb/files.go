package perturb

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/store"
)

// Job is one run of Perturb over a task file, as toolenv perturb runs it:
// where the tasks are read from, where the perturbed tasks and the report
// go, and the perturbation's Options.
type Job struct {
	// Tasks is a JSONL task file or a collection folder (its tasks.jsonl).
	Tasks string
	// Out is the JSONL file the perturbed tasks are written to; empty
	// means Stdout.
	Out    string
	Stdout io.Writer
	// Report, when not empty, is the prefix of the report files:
	// Report.md (Markdown) and Report.json.
	Report string
	// Provenance is recorded in the report (how it was made).
	Provenance *toolenv.Provenance
	// Logger receives the task lines that do not parse (skipped). Nil
	// means slog.Default().
	Logger *slog.Logger
	Options
}

// Run reads the job's tasks, perturbs them (Perturb) and writes them and
// the report. The report is returned when the tasks were written.
func Run(ctx context.Context, job Job) (*Report, error) {
	log := job.Logger
	if log == nil {
		log = slog.Default()
	}
	path := job.Tasks
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, toolenv.TasksFile)
	}
	tasks, problems, err := toolenv.ReadTasks(path)
	if err != nil {
		return nil, err
	}
	for _, p := range problems {
		log.Warn("task skipped", "err", p)
	}
	start := time.Now()
	out, rep, err := Perturb(ctx, tasks, job.Options)
	if err != nil {
		return nil, err
	}
	if job.Out != "" {
		err = toolenv.WriteTasks(job.Out, out)
	} else if job.Stdout != nil {
		err = toolenv.EncodeTasks(job.Stdout, out)
	} else {
		err = fmt.Errorf("perturb: give a file to write the perturbed tasks to")
	}
	if err != nil {
		return nil, err
	}
	rep.Provenance = job.Provenance
	if job.Report != "" {
		if err := toolenv.WriteFileAtomic(job.Report+".md", rep.Markdown(job.Tasks, time.Since(start))); err != nil {
			return nil, err
		}
		if err := toolenv.WriteJSONFile(job.Report+".json", rep); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// ModelConfig is the endpoint paraphrases come from and where its
// exchanges are recorded.
type ModelConfig struct {
	// URL is the OpenAI-compatible endpoint; APIKey its key.
	URL, APIKey string
	// Records, when not empty, is an SQLite file (or any store location)
	// recording every exchange, reused when the same request comes again.
	Records string
	// Replay answers only from Records, with no network.
	Replay bool
	Logger *slog.Logger
}

// OpenModel returns the paraphrasing model cfg describes and what to
// close when done (the records store, or nothing). Replay without
// Records is an invalid_arguments error.
func OpenModel(ctx context.Context, cfg ModelConfig) (*llm.Client, io.Closer, error) {
	lo := llm.Options{APIKey: cfg.APIKey, Logger: cfg.Logger, Replay: cfg.Replay, Reuse: cfg.Records != ""}
	var closer io.Closer = io.NopCloser(nil)
	if cfg.Records != "" {
		st, err := store.Open(ctx, cfg.Records, store.Options{Logger: cfg.Logger})
		if err != nil {
			return nil, nil, err
		}
		lo.Recorder, closer = st, st
	} else if cfg.Replay {
		return nil, nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--replay needs --records")
	}
	return llm.New(cfg.URL, lo), closer, nil
}
