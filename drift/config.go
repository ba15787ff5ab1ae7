package drift

import (
	"log/slog"

	"github.com/toolenv/toolenv/internal/foldercache"
)

// Config is a drift job as "toolenv drift" takes it: the source, the
// output and the options, each field a flag (its tags; internal/configfile
// binds them). Job turns it into the Job Run runs.
type Config struct {
	In         string   `json:"in" flag:"in" path:"file" help:"collection folder to drift (a built collection, or a drifted one for the next version)"`
	ToolBench  []string `json:"toolbench" flag:"toolbench" path:"file" help:"drift ToolBench docs instead: a StableToolBench query file or folder (repeatable)"`
	OpenAPI    string   `json:"openapi" flag:"openapi" path:"named" help:"drift an OpenAPI 3 document instead"`
	Demo       bool     `json:"demo" flag:"demo" help:"drift the embedded demo collection"`
	Tasks      string   `json:"tasks" flag:"tasks" path:"file" help:"tasks (JSONL) to translate to the new version (default: the source's own tasks)"`
	Out        string   `json:"out" flag:"out" path:"file" help:"folder to write the new version into (required)"`
	Seed       uint64   `json:"seed" flag:"seed" help:"seed of every random choice (required)"`
	Operators  []string `json:"ops" flag:"ops,comma" help:"operators to run, comma separated (default: all)"`
	Rates      string   `json:"rate" flag:"rate" help:"per-operator rates, e.g. rename=0.5,type=0.2 (probability each eligible tool/parameter/field is changed)"`
	Version    string   `json:"version" flag:"version" help:"name of the new version (default: the next, v1 → v2)"`
	Validation string   `json:"validation" flag:"validation" help:"validation policy of the new version: strict (default) or lenient"`
	Mode       string   `json:"mode" flag:"mode" enum:",strict,compat" help:"mode of the new version: strict (default; old calls are rejected) or compat (old calls are translated with a warning)"`
	Feedback   string   `json:"feedback" flag:"feedback" help:"feedback level of the new version: none, terse or helpful (default: the source's)"`
	Rules      string   `json:"rules" flag:"rules" path:"file" help:"folder of drift rules replacing the built-in ones (synonyms.tsv, abbreviations.tsv, actions.tsv, default_flips.tsv, nest_groups.json, error_styles.json, paths.json)"`
	Force      bool     `json:"force" flag:"force" help:"replace --out whatever it holds"`
	BuildCache string   `json:"build_cache" flag:"build-cache" help:"folder of finished outputs, shared with toolenv build bird: an identical drift (the same toolenv, every byte of the inputs, the same options and --out's place relative to them) writes the stored output and says so (\"reused drift ...\"); entries checked on every read; \"off\": always drift; $TOOLENV_BUILD_CACHE when not given (default: toolenv/builds in the user's cache folder)"`
}

// DefaultConfig returns the configuration the CLI starts from: the
// folder of finished outputs in its default place
// ($TOOLENV_BUILD_CACHE, else toolenv/builds in the user's cache folder).
func DefaultConfig() Config {
	return Config{BuildCache: foldercache.DefaultDir()}
}

// Job returns the job the configuration describes, logging with log.
// Rates that do not parse are an invalid_arguments error (ParseRates).
func (c *Config) Job(log *slog.Logger) (Job, error) {
	rates, err := ParseRates(c.Rates)
	if err != nil {
		return Job{}, err
	}
	return Job{
		Source: Source{In: c.In, ToolBench: c.ToolBench, OpenAPI: c.OpenAPI, Demo: c.Demo},
		Tasks:  c.Tasks, Rules: c.Rules, Out: c.Out, Force: c.Force, Logger: log,
		Options: Options{Seed: c.Seed, Operators: c.Operators, Rates: rates, Version: c.Version, Validation: c.Validation, Mode: c.Mode, Feedback: c.Feedback},
	}, nil
}
