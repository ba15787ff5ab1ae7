package dataset

import (
	"cmp"
	"time"

	"github.com/toolenv/toolenv/internal/configfile"
	"github.com/toolenv/toolenv/internal/redact"
	"github.com/toolenv/toolenv/mirror"
)

// Config is a MirrorAPI dataset's setup: where it lives, which APIs it
// mirrors, how they are reached, the model behind the model-facing
// stages and every stage's settings. The same fields are the flags of
// every "toolenv mirror" command and the keys of its configuration file
// (--config); the struct tags are the one place that says so.
//
// Default returns the values the CLI starts from; a zero field of a
// stage's settings means that stage's own default.
type Config struct {
	// Out is the dataset's folder: its store (mirror.db unless Store
	// says otherwise), report and exported files (data/). Required.
	Out string `json:"out" flag:"out" path:"file" help:"the dataset's folder: its store (mirror.db), report and exported files (data/)"`
	// Store is an SQLite file or a postgres:// URL; "" means
	// Out/mirror.db.
	Store string `json:"store" flag:"store" path:"file" help:"the store: an SQLite file or a postgres:// URL (a toolenv store; the mirror adds its tables); default OUT/mirror.db"`
	// Dataset names the dataset within the store.
	Dataset string `json:"dataset" flag:"dataset" default:"mirror" help:"the dataset's name within the store"`
	// Collections, ToolBench and OpenAPI name the APIs to mirror (see
	// mirror.SourceConfig).
	Collections []string `json:"collections" flag:"collection" path:"named" help:"a collection folder to mirror, e.g. a built NL2SQL REST flavor; NAME=DIR renames it (repeatable)"`
	ToolBench   []string `json:"toolbench" flag:"toolbench" path:"file" help:"ToolBench docs to mirror (a StableToolBench query file, a folder of them, or a tools tree; repeatable)"`
	OpenAPI     []string `json:"openapi" flag:"openapi" path:"named" help:"an OpenAPI document to mirror; NAME=FILE names the collection (repeatable)"`
	// Upstream reaches the documented (virtual) APIs.
	Upstream UpstreamConfig `json:"upstream" help:"how documented (virtual) APIs are reached: never a simulator, only the real API"`
	// Model answers the model-facing stages; without a URL (and without
	// Replay) the sampler writes the requests and those stages are
	// skipped.
	Model ModelConfig `json:"model" help:"the model that writes requests, checks documentation, synthesizes and explains"`
	// Seed seeds every seeded choice of every stage.
	Seed int64 `json:"seed" flag:"seed" default:"1" help:"seed of every seeded choice (sampler, failures kept, split, rationale sample, export order)"`
	// Stages are every stage's settings.
	Stages StageConfig `json:"stages" help:"the stages' settings"`
}

// UpstreamConfig says how the documented APIs are reached.
type UpstreamConfig struct {
	URL    string `json:"url" flag:"upstream-url" url:"http" help:"StableToolBench/RapidAPI proxy URL that answers documented (virtual) APIs"`
	KeyEnv string `json:"key_env" flag:"upstream-key-env" default:"TOOLBENCH_KEY" help:"environment variable holding the proxy's toolbench_key"`
	// ToolbenchKey is the key itself, for Go programs; it wins over
	// KeyEnv.
	ToolbenchKey string        `json:"toolbench_key,omitempty" secret:"upstream.key_env" help:"the proxy's toolbench_key itself"`
	Direct       bool          `json:"direct" flag:"upstream-direct" help:"call each documented API at its own URL (its binding's base URL)"`
	Timeout      time.Duration `json:"timeout" flag:"upstream-timeout" default:"15s" help:"timeout of one upstream request"`
	// BaseURL calls every documented API at this base URL (implies
	// Direct).
	BaseURL        string `json:"base_url" flag:"base-url" url:"http" help:"call every documented API at this base URL instead (e.g. a running \"toolenv serve\"); implies --upstream-direct"`
	MaxResultBytes int    `json:"max_result_bytes" flag:"max-result-bytes" default:"4194304" help:"answers larger than this are recorded as too large"`
}

// ModelConfig is the model of the model-facing stages.
type ModelConfig struct {
	URL    string `json:"url" flag:"llm-url" url:"http" help:"OpenAI-compatible endpoint of the model that writes requests, checks documentation, synthesizes and explains; empty: the schema-driven sampler, and no model stages"`
	Name   string `json:"name" flag:"llm-model" help:"model name at --llm-url"`
	KeyEnv string `json:"key_env" flag:"llm-key-env" default:"OPENAI_API_KEY" help:"environment variable holding the model's API key"`
	// APIKey is the key itself, for Go programs; it wins over KeyEnv.
	APIKey       string        `json:"api_key,omitempty" secret:"model.key_env" help:"the model's API key itself"`
	Timeout      time.Duration `json:"timeout" flag:"llm-timeout" default:"2m" help:"timeout of one model request"`
	JudgeModel   string        `json:"judge_model" flag:"judge-model" help:"model name for the documentation check (default --llm-model; the paper used gpt-4o)"`
	ExplainModel string        `json:"explain_model" flag:"explain-model" help:"model name for rationales (default --llm-model; the paper used o1-preview)"`
	// Replay answers every model request from the store's records.
	Replay bool `json:"replay" flag:"replay" help:"answer every model request from the store's records, with no network (a request never made before is an error)"`
}

// StageConfig are the stages' settings (mirror.RunOptions, flat).
type StageConfig struct {
	PerAPI          int           `json:"per_api" flag:"per-api" default:"200" help:"distinct requests per API (the paper's 200)"`
	Invalid         int           `json:"invalid" flag:"invalid" help:"deliberately invalid requests per API from the sampler (default per-api/10; negative: none)"`
	Sampler         bool          `json:"sampler" flag:"sampler" help:"write requests with the schema-driven sampler even when a model is set"`
	Harvest         bool          `json:"harvest" flag:"harvest" default:"true" help:"sampler: a second round of requests with values the first round's responses held"`
	GenWorkers      int           `json:"gen_workers" flag:"gen-workers" default:"4" help:"APIs whose requests a model writes at once"`
	Workers         int           `json:"workers" flag:"workers" default:"32" help:"calls in flight at once"`
	Attempts        int           `json:"attempts" flag:"attempts" default:"3" help:"attempts of a call that failed for a passing reason (the paper's 3)"`
	Rate            float64       `json:"rate" flag:"rate" help:"most calls per second to one API (0: no limit)"`
	Burst           int           `json:"burst" flag:"burst" default:"1" help:"calls one API may get at once under --rate"`
	BreakAfter      int           `json:"break_after" flag:"break-after" default:"5" help:"connection failures in a row that open an API's circuit breaker (its requests wait for a later run)"`
	BreakFor        time.Duration `json:"break_for" flag:"break-for" default:"30s" help:"how long an open breaker stays open"`
	CallTimeout     time.Duration `json:"call_timeout" flag:"call-timeout" default:"30s" help:"timeout of one call attempt"`
	Limit           int           `json:"limit" flag:"limit" help:"collect at most this many pairs in this run (0: all)"`
	KeepFailures    int           `json:"keep_failures" flag:"keep-failures" default:"10000" help:"parameter-related failures kept (the paper's ~10,000), spread over the APIs"`
	NoDocCheck      bool          `json:"no_doc_check" flag:"no-doc-check" help:"skip the documentation-following check (Table 8)"`
	DocUnparsedDrop bool          `json:"doc_unparsed_drop" flag:"doc-unparsed-drop" help:"drop pairs whose documentation check gave no readable verdict"`
	LLMWorkers      int           `json:"llm_workers" flag:"llm-workers" default:"4" help:"model requests in flight at once"`
	SynthBelow      int           `json:"synth_below" flag:"synth-below" default:"20" help:"APIs with fewer kept pairs are long-tail and get synthesized pairs"`
	SynthTarget     int           `json:"synth_target" flag:"synth-target" help:"kept pairs synthesis tops a long-tail API up to (default --synth-below)"`
	SynthExamples   int           `json:"synth_examples" flag:"synth-examples" default:"10" help:"real examples per synthesis request (the paper's 10)"`
	OODSuccess      int           `json:"ood_success" flag:"ood-success" default:"200" help:"successful pairs of held-out APIs in the OOD test set"`
	OODFailure      int           `json:"ood_failure" flag:"ood-failure" default:"100" help:"failed pairs of held-out APIs in the OOD failure set"`
	IDSize          int           `json:"id_size" flag:"id-size" default:"100" help:"successful pairs in each ID test set (high, medium, low)"`
	ExplainSuccess  int           `json:"explain_success" flag:"explain-success" default:"43597" help:"successful training pairs sampled for rationales (the paper's 43,597)"`
	ExplainFailure  int           `json:"explain_failure" flag:"explain-failure" default:"2000" help:"failed training pairs sampled for rationales (the paper's 2,000)"`
	MaxTokens       int           `json:"max_tokens" flag:"max-tokens" default:"2560" help:"length filter on a CoT sample's output, in approximate tokens (the paper's 2,560)"`
	NoCoT           bool          `json:"no_cot" flag:"no-cot" help:"export SFT samples only"`
}

// Default returns the configuration the CLI starts from: the paper's
// sizes, one seed, the usual key variables.
func Default() Config {
	return configfile.Default[Config]()
}

// RunOptions returns the stages' options: the settings, with the seed
// spread over every seeded stage and the model workers over every model
// stage. Export.Out is Out/data; Export.Card is filled by Open.
func (c *Config) RunOptions() mirror.RunOptions {
	s := c.Stages
	var o mirror.RunOptions
	o.Generate.PerAPI, o.Generate.Invalid, o.Generate.Sampler, o.Generate.Workers = s.PerAPI, s.Invalid, s.Sampler, s.GenWorkers
	o.HarvestRound = s.Harvest
	o.Collect = mirror.CollectOptions{Workers: s.Workers, Attempts: s.Attempts, Rate: s.Rate, Burst: s.Burst, BreakAfter: s.BreakAfter,
		BreakFor: s.BreakFor, CallTimeout: s.CallTimeout, Limit: s.Limit}
	o.Filter.KeepFailures, o.Filter.NoDocCheck, o.Filter.DocUnparsedDrop, o.Filter.Workers = s.KeepFailures, s.NoDocCheck, s.DocUnparsedDrop, s.LLMWorkers
	o.Synth.Below, o.Synth.Target, o.Synth.Examples, o.Synth.Workers = s.SynthBelow, s.SynthTarget, s.SynthExamples, s.LLMWorkers
	o.Split.OODSuccess, o.Split.OODFailure, o.Split.IDSize = s.OODSuccess, s.OODFailure, s.IDSize
	o.Explain.Success, o.Explain.Failure, o.Explain.MaxTokens, o.Explain.Workers = s.ExplainSuccess, s.ExplainFailure, s.MaxTokens, s.LLMWorkers
	o.Export.NoCoT = s.NoCoT
	o.Generate.Seed, o.Filter.Seed, o.Synth.Seed, o.Split.Seed, o.Explain.Seed, o.Export.Seed = c.Seed, c.Seed, c.Seed, c.Seed, c.Seed, c.Seed
	return o
}

// Sources returns the sources' configuration, the key read with getenv.
func (c *Config) Sources(getenv func(string) string) mirror.SourceConfig {
	u := c.Upstream
	return mirror.SourceConfig{Collections: c.Collections, ToolBench: c.ToolBench, OpenAPI: c.OpenAPI,
		UpstreamURL: u.URL, ToolbenchKey: cmp.Or(u.ToolbenchKey, getenv(u.KeyEnv)), Direct: u.Direct, BaseURL: u.BaseURL,
		Timeout: u.Timeout, MaxResultBytes: u.MaxResultBytes}
}

// record is the effective configuration the dataset card records: the
// sources' settings and every stage's, without the paths, the replay
// switch or the model's URL, which differ between a run and its replay.
func (c *Config) record(withModel bool) map[string]any {
	u, m := c.Upstream, c.Model
	cfg := map[string]any{
		"dataset": c.Dataset,
		"sources": map[string]any{"collections": c.Collections, "toolbench": c.ToolBench, "openapi": c.OpenAPI,
			"upstream_url": redact.URL(u.URL), "upstream_direct": u.Direct, "base_url": redact.URL(u.BaseURL),
			"upstream_timeout": u.Timeout.String(), "max_result_bytes": u.MaxResultBytes},
		"stages": c.RunOptions().Config(),
	}
	if withModel {
		cfg["models"] = map[string]any{"model": m.Name, "judge_model": cmp.Or(m.JudgeModel, m.Name), "explain_model": cmp.Or(m.ExplainModel, m.Name), "timeout": m.Timeout.String()}
	}
	return cfg
}
