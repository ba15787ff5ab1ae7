package perturb

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"os"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/configfile"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/internal/redact"
	"github.com/toolenv/toolenv/llm"
)

// Config is a perturbation as "toolenv perturb" takes it, each field a
// flag (its tags; internal/configfile binds them). Job turns it into the
// Job Run runs.
type Config struct {
	Tasks  string `json:"tasks" flag:"tasks" path:"file" help:"tasks to perturb: a JSONL file or a collection folder (its tasks.jsonl)"`
	Mode   string `json:"mode" flag:"mode" enum:"distractor,case_mix,punctuation,paraphrase" help:"perturbation: distractor, case_mix, punctuation, paraphrase"`
	Seed   uint64 `json:"seed" flag:"seed" help:"seed of every random choice (required)"`
	Out    string `json:"out" flag:"out" path:"file" help:"write the perturbed tasks here (default: stdout)"`
	Report string `json:"report" flag:"report" path:"file" help:"write the report to PREFIX.md and PREFIX.json"`
	// URL, Model and KeyEnv are the paraphrasing model's.
	URL     string `json:"llm_url" flag:"llm-url" url:"http" help:"OpenAI-compatible endpoint for paraphrases"`
	Model   string `json:"llm_model" flag:"llm-model" help:"model name for paraphrases"`
	KeyEnv  string `json:"llm_key_env" flag:"llm-key-env" default:"OPENAI_API_KEY" help:"environment variable holding the LLM's API key"`
	Records string `json:"records" flag:"records" path:"file" help:"SQLite file recording every LLM exchange (reused when the same request comes again)"`
	Replay  bool   `json:"replay" flag:"replay" help:"answer LLM requests only from --records (no network)"`
	// Attempts are the paraphrases asked per query before keeping it.
	Attempts int `json:"attempts" flag:"attempts" default:"3" help:"paraphrases asked per query before keeping the original"`
}

// Env is what a configured job runs with.
type Env struct {
	// Logger logs; nil discards.
	Logger *slog.Logger
	// Getenv reads the variable KeyEnv names; nil means os.Getenv.
	Getenv func(string) string
	// Stdout receives the tasks when Out is empty.
	Stdout io.Writer
	// Progress receives a progress bar; nil shows none.
	Progress io.Writer
	// Command is recorded in the report's provenance.
	Command []string
}

// Job returns the job the configuration describes, with the paraphrasing
// model opened (its records too) and a progress bar, and what to call
// when the job is done. A configuration that cannot run is an
// invalid_arguments error naming the flag to give.
func (c *Config) Job(ctx context.Context, env Env) (Job, func(), error) {
	if c.Tasks == "" || c.Mode == "" {
		return Job{}, nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--tasks and --mode are required")
	}
	log := cmp.Or(env.Logger, slog.New(slog.DiscardHandler))
	opts := Options{Mode: c.Mode, Seed: c.Seed, Attempts: c.Attempts}
	var closer io.Closer = io.NopCloser(nil)
	if c.Mode == Paraphrase {
		if c.URL == "" || c.Model == "" {
			return Job{}, nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--mode paraphrase needs --llm-url and --llm-model")
		}
		getenv := env.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		m, cl, err := OpenModel(ctx, ModelConfig{URL: c.URL, APIKey: getenv(c.KeyEnv), Records: c.Records, Replay: c.Replay, Logger: log})
		if err != nil {
			return Job{}, nil, err
		}
		// The model is asked once before the first task (a replay checks
		// nothing).
		if err := llm.Preflight(ctx, llm.Endpoint{Role: "--llm-url, --llm-model", Client: m, Model: c.Model}); err != nil {
			cl.Close()
			return Job{}, nil, err
		}
		opts.Model, opts.ModelName, closer = m, c.Model, cl
	}
	var bar *progress.Bar
	last := 0
	opts.Progress = func(done, total int) {
		if bar == nil {
			bar = progress.New(env.Progress, total, "perturb "+c.Mode)
		}
		bar.Add(done - last)
		last = done
	}
	done := func() {
		if bar != nil {
			bar.Finish()
		}
		closer.Close()
	}
	return Job{Tasks: c.Tasks, Out: c.Out, Stdout: env.Stdout, Report: c.Report, Logger: log, Options: opts,
		Provenance: buildinfo.Provenance(env.Command, map[string]any{"tasks": c.Tasks, "mode": c.Mode, "seed": c.Seed, "attempts": c.Attempts,
			"llm_url": redact.URL(c.URL), "llm_model": c.Model, "records": c.Records, "replay": c.Replay})}, done, nil
}

// Default returns the configuration the CLI starts from (three attempts
// per paraphrase, the usual key variable).
func Default() Config {
	return configfile.Default[Config]()
}
