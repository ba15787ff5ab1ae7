package dataset

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/internal/configfile"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/mirror/sqlstore"
	"github.com/toolenv/toolenv/store"
)

// CacheSetConfig configures the cache-model data (MirrorAPI-Cache,
// §4.4): the flags of "toolenv mirror cache-set".
type CacheSetConfig struct {
	// From is the toolenv store whose cache holds the real answers.
	From        string   `json:"from" flag:"from" path:"file" help:"the toolenv store whose cache to use"`
	Out         string   `json:"out" flag:"out" path:"file" help:"the folder to write"`
	Collections []string `json:"collections" flag:"collection" path:"named" help:"a collection folder whose tools the entries are of; NAME=DIR renames it (repeatable)"`
	ToolBench   []string `json:"toolbench" flag:"toolbench" path:"file" help:"ToolBench docs whose APIs the entries are of (repeatable)"`
	OpenAPI     []string `json:"openapi" flag:"openapi" path:"named" help:"an OpenAPI document whose operations the entries are of (repeatable)"`
	Test        int      `json:"test" flag:"test" default:"200" help:"entries held out as the test set (the paper's 200)"`
	Seed        int64    `json:"seed" flag:"seed" default:"1" help:"seed of the held-out choice"`
}

// DefaultCacheSet returns the cache set's defaults: the paper's 200
// held out.
func DefaultCacheSet() CacheSetConfig {
	return configfile.Default[CacheSetConfig]()
}

// CacheSet loads the documentation of the sources, opens the store and
// writes the cache set (mirror.CacheSet) into Out.
func CacheSet(ctx context.Context, cfg *CacheSetConfig, opts Options) (*mirror.CacheSetStats, error) {
	opts.defaults()
	if cfg.From == "" || cfg.Out == "" {
		return nil, usage("--from (a toolenv store) and --out are required")
	}
	if _, err := os.Stat(cfg.From); err != nil {
		return nil, usage("--from %s: %v", cfg.From, err)
	}
	src, err := mirror.OpenSources(ctx, mirror.SourceConfig{Collections: cfg.Collections, ToolBench: cfg.ToolBench, OpenAPI: cfg.OpenAPI, DocsOnly: true, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	st, err := store.Open(ctx, cfg.From, store.Options{Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return mirror.CacheSet(ctx, st, src.Tools, mirror.CacheSetOptions{Out: cfg.Out, Test: cfg.Test, Seed: cfg.Seed, Progress: opts.Progress})
}

// FACConfig configures the FAC annotation files (MirrorAPI §4.2): the
// flags of "toolenv mirror fac".
type FACConfig struct {
	Runs   []string `json:"runs" flag:"runs" path:"file" help:"an eval output folder (its episodes*.jsonl; repeatable)"`
	Out    string   `json:"out" flag:"out" path:"file" help:"the folder to write"`
	URL    string   `json:"llm_url" flag:"llm-url" url:"http" help:"OpenAI-compatible endpoint of a model to annotate with"`
	Model  string   `json:"llm_model" flag:"llm-model" help:"the annotating model (the paper used gpt-4o, gpt-4o-mini and gpt-4-turbo)"`
	KeyEnv string   `json:"llm_key_env" flag:"llm-key-env" default:"OPENAI_API_KEY" help:"environment variable holding the model's API key"`
	Replay bool     `json:"replay" flag:"replay" help:"annotate from the records, with no network"`
	// Records is where the model's requests are recorded; "" means
	// Out/records.db.
	Records string `json:"records" flag:"records" path:"file" help:"where the model's requests are recorded (default OUT/records.db)"`
}

// DefaultFAC returns the FAC files' defaults.
func DefaultFAC() FACConfig {
	return configfile.Default[FACConfig]()
}

// FAC reads the episodes of the eval runs and writes the FAC files
// (mirror.FACFiles) into Out; with a model (or Replay), the model
// annotates every episode, its requests recorded in Records.
func FAC(ctx context.Context, cfg *FACConfig, opts Options) (*mirror.FACStats, error) {
	opts.defaults()
	if len(cfg.Runs) == 0 || cfg.Out == "" {
		return nil, usage("--runs (an eval output folder, repeatable) and --out are required")
	}
	var eps []*eval.Episode
	for _, dir := range cfg.Runs {
		es, problems, err := eval.ReadJournals(dir)
		if err != nil {
			return nil, fmt.Errorf("--runs %s: %w", dir, err)
		}
		for _, p := range problems {
			opts.Logger.Warn("episode skipped", "err", p)
		}
		if len(es) == 0 {
			return nil, usage("--runs %s holds no episodes (episodes*.jsonl)", dir)
		}
		eps = append(eps, es...)
	}
	fo := mirror.FACOptions{Out: cfg.Out, Progress: opts.Progress}
	if cfg.URL != "" || cfg.Replay {
		if cfg.Model == "" {
			return nil, usage("--llm-url and --replay need --llm-model")
		}
		rec, err := sqlstore.OpenSQLite(ctx, cmp.Or(cfg.Records, filepath.Join(cfg.Out, "records.db")), store.Options{Logger: opts.Logger})
		if err != nil {
			return nil, err
		}
		defer rec.Close()
		client := llm.New(cmp.Or(cfg.URL, replayURL), llm.Options{APIKey: opts.Getenv(cfg.KeyEnv), Recorder: rec, Reuse: true, Replay: cfg.Replay, Logger: opts.Logger})
		fo.Judge = &judge.Judge{Model: client, ModelName: cfg.Model}
		if err := llm.Preflight(ctx, llm.Endpoint{Role: "--llm-url, --llm-model", Client: client, Model: cfg.Model}); err != nil {
			return nil, err
		}
	}
	return mirror.FACFiles(ctx, eps, fo)
}
