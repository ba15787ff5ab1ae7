// Package dataset opens a MirrorAPI dataset (package mirror) from one
// Config: the store that holds it, the sources it mirrors with the call
// path to their real APIs, and the model of its model-facing stages with
// record and replay. It is what every "toolenv mirror" command does
// before it calls the engine, so that any Go program runs the mirror the
// way the CLI does:
//
//	cfg := dataset.Default()
//	cfg.Out, cfg.Collections = "out/mirror", []string{"out/bird/rest"}
//	d, err := dataset.Open(ctx, &cfg, dataset.Options{})
//	...
//	defer d.Close()
//	rep, err := d.Run(ctx, nil)
//
// Config's struct tags are the flags of "toolenv mirror" and the keys of
// its configuration file (internal/configfile binds them). The package
// is separate from mirror because the store it opens (mirror/sqlstore)
// imports mirror.
package dataset

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/mirror/sqlstore"
	"github.com/toolenv/toolenv/store"
)

// Options are what a dataset is opened with besides its configuration.
type Options struct {
	// Logger logs; nil discards.
	Logger *slog.Logger
	// Getenv reads the variables the *KeyEnv fields name; nil means
	// os.Getenv.
	Getenv func(string) string
	// Progress receives a progress bar per stage; nil shows none.
	Progress io.Writer
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
}

// Dataset is an opened MirrorAPI dataset: its Engine, ready to run.
type Dataset struct {
	// Engine runs the stages over the sources, the store and the model.
	Engine *mirror.Engine
	// Options are the stages' options (Config.RunOptions, with the
	// export folder and the dataset card filled in).
	Options mirror.RunOptions
	// Store holds the dataset and records every model request.
	Store *sqlstore.Store

	cfg     Config
	opts    Options
	sources *mirror.Sources
}

// usage is an invalid-arguments error: a mistake in the configuration.
func usage(format string, args ...any) error {
	return toolenv.Errorw(toolenv.StatusInvalidArguments, "", format, args...)
}

// replayURL stands for a model endpoint that replay never reaches.
const replayURL = "http://replay.invalid/v1"

// Open loads the sources cfg names, builds the call path to their real
// APIs, opens the store (Out/mirror.db unless cfg.Store names one) and
// the model. A configuration that cannot work is an invalid-arguments
// error naming the flag to give.
func Open(ctx context.Context, cfg *Config, opts Options) (*Dataset, error) {
	opts.defaults()
	m := cfg.Model
	if cfg.Out == "" {
		return nil, usage("--out is required: the dataset's folder")
	}
	if m.URL != "" && m.Name == "" || m.Replay && m.Name == "" {
		return nil, usage("--llm-url and --replay need --llm-model (the model name the endpoint serves)")
	}
	sc := cfg.Sources(opts.Getenv)
	sc.Logger = opts.Logger
	src, err := mirror.OpenSources(ctx, sc)
	if err != nil {
		return nil, err
	}
	path := cmp.Or(cfg.Store, filepath.Join(cfg.Out, "mirror.db"))
	st, err := sqlstore.Open(ctx, path, store.Options{Logger: opts.Logger})
	if err != nil {
		src.Close()
		return nil, err
	}
	d := &Dataset{Store: st, cfg: *cfg, opts: opts, sources: src, Options: cfg.RunOptions()}
	d.Engine = &mirror.Engine{
		Store: st, Dataset: cfg.Dataset, Tools: src.Tools, Tasks: src.Tasks, Collections: src.Collections, Invoker: src.Invoker,
		Logger: opts.Logger, Progress: opts.Progress,
	}
	if m.URL != "" || m.Replay {
		d.Engine.Model = d.Client(m.URL, m.APIKey, m.KeyEnv)
		d.Engine.ModelName, d.Engine.JudgeModel, d.Engine.ExplainModel = m.Name, m.JudgeModel, m.ExplainModel
	}
	d.Options.Export.Out = filepath.Join(cfg.Out, "data")
	d.Options.Export.Card = mirror.CardInfo{Name: cfg.Dataset, Sources: src.Described, Model: m.Name,
		Seeds:   map[string]int64{"seed (sampler, failures kept, split, rationale sample, export order)": cfg.Seed},
		Toolenv: buildinfo.Provenance(nil, cfg.record(d.Engine.Model != nil))}
	return d, nil
}

// Client returns a chat client of the endpoint at url ("" under replay),
// its key apiKey or else the variable keyEnv names, recording every
// exchange in the dataset's store and, under Replay, answering from it
// alone.
func (d *Dataset) Client(url, apiKey, keyEnv string) *llm.Client {
	return llm.New(cmp.Or(url, replayURL), llm.Options{APIKey: cmp.Or(apiKey, d.opts.Getenv(keyEnv)), Timeout: d.cfg.Model.Timeout,
		Logger: d.opts.Logger, Recorder: d.Store, Reuse: true, Replay: d.cfg.Model.Replay})
}

// modelStages are the stages that ask the model, when there is one.
var modelStages = []string{mirror.StageGenerate, mirror.StageFilter, mirror.StageSynthesize, mirror.StageExplain}

// checkModel asks the model once under each name the stages only names
// will ask for (the model, the documentation check's judge, the
// rationales'), before any stage runs: a dead or wrong endpoint fails in
// seconds. Without a model, or under replay, it checks nothing.
func (d *Dataset) checkModel(ctx context.Context, only []string) error {
	c, ok := d.Engine.Model.(*llm.Client)
	if !ok || c == nil {
		return nil
	}
	if only != nil && !slices.ContainsFunc(only, func(s string) bool { return slices.Contains(modelStages, s) }) {
		return nil
	}
	m := d.cfg.Model
	eps := []llm.Endpoint{{Role: "--llm-url, --llm-model", Client: c, Model: m.Name}}
	if m.JudgeModel != "" {
		eps = append(eps, llm.Endpoint{Role: "--judge-model", Client: c, Model: m.JudgeModel})
	}
	if m.ExplainModel != "" {
		eps = append(eps, llm.Endpoint{Role: "--explain-model", Client: c, Model: m.ExplainModel})
	}
	return llm.Preflight(ctx, eps...)
}

// Close releases the store and the sources' backends.
func (d *Dataset) Close() error {
	return errors.Join(d.Store.Close(), d.sources.Close())
}

// Collections are the mirrored collections.
func (d *Dataset) Collections() []*toolenv.Collection { return d.sources.Collections }

// Run runs the stages only names (nil: every stage; empty: none, the
// report alone) and writes the dataset's report into Out (report.md,
// report.json, report.html). Export files are written only when the
// export stage runs. An interrupt returns a canceled error wrapping
// mirror.ErrInterrupted, with the report so far.
func (d *Dataset) Run(ctx context.Context, only []string) (*mirror.Report, error) {
	o := d.Options
	o.Only = only
	if only != nil && !slices.Contains(only, mirror.StageExport) {
		o.Export.Out = ""
	}
	if err := d.checkModel(ctx, only); err != nil {
		return nil, err
	}
	start := time.Now()
	rep, err := d.Engine.Run(ctx, o)
	if rep != nil && rep.Summary != nil {
		rep.Settings = map[string]any{"per_api": d.cfg.Stages.PerAPI, "seed": d.cfg.Seed, "workers": d.cfg.Stages.Workers,
			"keep_failures": d.cfg.Stages.KeepFailures, "model": d.cfg.Model.Name, "replay": d.cfg.Model.Replay, "elapsed": time.Since(start).Round(time.Millisecond).String()}
		if werr := mirror.WriteReport(d.cfg.Out, rep); werr != nil && err == nil {
			err = werr
		}
	}
	if errors.Is(err, mirror.ErrInterrupted) {
		err = &toolenv.Error{Status: toolenv.StatusCanceled, Message: "mirror", Err: err}
	}
	return rep, err
}
