package probe

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mapping/graph"
	"github.com/toolenv/toolenv/mapping/index"
	"github.com/toolenv/toolenv/store"
)

// ModelConfig is the chat model a mapping command talks to, and whether
// its exchanges are recorded or replayed: the model flags of "toolenv map
// probe" and "toolenv map sequence" (its tags; internal/configfile binds
// them).
type ModelConfig struct {
	URL    string `json:"url" flag:"llm-url" url:"http" help:"OpenAI-compatible chat endpoint, e.g. http://127.0.0.1:8000/v1 (required unless --replay)"`
	Model  string `json:"model" flag:"model" help:"model name (required)"`
	KeyEnv string `json:"key_env" flag:"llm-key-env" default:"OPENAI_API_KEY" help:"environment variable holding the endpoint's API key"`
	// APIKey is the key itself, for Go programs; it wins over KeyEnv.
	APIKey  string        `json:"api_key,omitempty" secret:"model.key_env" help:"the endpoint's API key itself"`
	Timeout time.Duration `json:"timeout" flag:"llm-timeout" default:"2m" help:"timeout of one model request"`
	// Store is where exchanges are recorded (Record) or replayed from
	// (Replay).
	Store       string  `json:"store" flag:"store" path:"file" help:"database the model's answers are recorded in (with --record or --replay)"`
	Record      bool    `json:"record" flag:"record" help:"record every model exchange in --store"`
	Replay      bool    `json:"replay" flag:"replay" help:"answer every model request from --store, with no network"`
	Temperature float64 `json:"temperature" flag:"temperature" help:"sampling temperature"`
	Seed        int64   `json:"seed" flag:"seed" help:"seed sent with every request"`
}

// Open returns the chat client and what to close when done (its
// records). A missing model name or endpoint is an invalid_arguments
// error naming the flag.
func (c *ModelConfig) Open(ctx context.Context, getenv func(string) string, log *slog.Logger) (*llm.Client, io.Closer, error) {
	if c.Model == "" {
		return nil, nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--model is required (the model name the endpoint serves)")
	}
	if c.URL == "" && !c.Replay {
		return nil, nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--llm-url is required (an OpenAI-compatible endpoint), or --replay to answer from recorded exchanges")
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	key := c.APIKey
	if key == "" && c.KeyEnv != "" {
		key = getenv(c.KeyEnv)
	}
	opts := llm.Options{APIKey: key, Timeout: c.Timeout, Logger: log, Replay: c.Replay}
	var closer io.Closer = io.NopCloser(nil)
	if c.Record || c.Replay {
		st, err := store.Open(ctx, c.Store, store.Options{Logger: log})
		if err != nil {
			return nil, nil, fmt.Errorf("%w (pass --store PATH)", err)
		}
		opts.Recorder, closer = st, st
	}
	url := c.URL
	if url == "" {
		url = "http://replay.invalid/v1"
	}
	client := llm.New(url, opts)
	// The model is asked once before any work (a replay checks nothing).
	if err := llm.Preflight(ctx, llm.Endpoint{Role: "--llm-url, --model", Client: client, Model: c.Model}); err != nil {
		closer.Close()
		return nil, nil, err
	}
	return client, closer, nil
}

// Config is a probe as "toolenv map probe" takes it. Its tags are the
// command's flags.
type Config struct {
	Model ModelConfig `json:"model" help:"the model that maps"`
	// Index is the tool index the candidates are retrieved from.
	Index   string `json:"index" flag:"index" path:"file" help:"the tool index (from toolenv map index)"`
	Queries string `json:"queries" flag:"queries" path:"file" help:"queries: tasks (.jsonl), a StableToolBench query file (.json) or one query per line"`
	// Out is the probe file written (what "toolenv map review" shows).
	Out          string `json:"out" flag:"out" path:"file" help:"write the probe file (results, candidates' documentation) here"`
	K            int    `json:"top" flag:"top" short:"k" default:"10" help:"tools retrieved per query"`
	Limit        int    `json:"limit" flag:"limit" help:"probe only the first N queries"`
	NoReflection bool   `json:"no_reflection" flag:"no-reflection" help:"skip the self-reflection pass"`
	Neighbours   int    `json:"neighbours" flag:"neighbours" help:"add up to N operation-graph neighbours of the retrieved tools to each prompt"`
}

// Env is what a configured probe runs with: the index's (a logger, the
// environment the model's KeyEnv is read from, a progress writer).
type Env = index.Env

// RunFile probes every query of cfg.Queries (the first Limit) against the
// index, writes the probe file to cfg.Out and returns its summary. Bad
// queries or flags are invalid_arguments errors, a missing index
// not_found. A canceled ctx ends the probe early and is no error: the
// file then holds the queries done.
func RunFile(ctx context.Context, cfg *Config, env Env) (Summary, error) {
	if env.Logger == nil {
		env.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Queries == "" || cfg.Out == "" {
		return Summary{}, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--queries and --out are required")
	}
	qs, err := LoadQueries(cfg.Queries)
	if err != nil {
		return Summary{}, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Err: err}
	}
	if cfg.Limit > 0 && len(qs) > cfg.Limit {
		qs = qs[:cfg.Limit]
	}
	ix, err := index.Open(ctx, cfg.Index, index.OpenOptions{Logger: env.Logger})
	if err != nil {
		return Summary{}, toolenv.Errorw(toolenv.StatusNotFound, "", "%v", err)
	}
	defer ix.Close()
	client, closer, err := cfg.Model.Open(ctx, env.Getenv, env.Logger)
	if err != nil {
		return Summary{}, err
	}
	defer closer.Close()
	set := ix.Mappings()
	m := cfg.Model
	opts := Options{Model: m.Model, K: cfg.K, NoReflection: cfg.NoReflection, Evidence: set, Temperature: m.Temperature, Seed: m.Seed, Logger: env.Logger}
	if cfg.Neighbours > 0 {
		opts.Neighbours, opts.MaxNeighbours, opts.Tool = graph.OfTools(ix.Tools()).Neighbours, cfg.Neighbours, ix.Tool
	}
	p := New(client, IndexRetriever{Index: ix}, opts)
	bar := progress.New(env.Progress, len(qs), "probe")
	results := p.RunAll(ctx, qs, func(done, total int) { bar.Add(1) })
	bar.Finish()
	if err := WriteFile(cfg.Out, NewFile(m.Model, results, ix.Tool, set)); err != nil {
		return Summary{}, err
	}
	return Summarise(results), nil
}
