package harness

import (
	"log/slog"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/internal/configfile"
)

// Config is what toolenv eval evaluates and how: the flags of toolenv
// eval, and the keys of the eval section of a configuration file.
type Config struct {
	// Tasks are collection folders (collection.json, tools.json,
	// tasks.jsonl) or StableToolBench query files.
	Tasks []string `json:"tasks" flag:"tasks" path:"file" help:"tasks: a collection folder (collection.json, tools.json, tasks.jsonl) or StableToolBench query files (repeatable)"`
	// Agent is direct, react, cot, dfsdt or oracle.
	Agent string `json:"agent" flag:"agent" default:"react" enum:"direct,react,cot,dfsdt,oracle" help:"agent: direct, react, cot, dfsdt or oracle"`
	// Model is the model the agent asks.
	Model ModelConfig `json:"model" help:"the model the agent asks (any OpenAI-compatible endpoint)"`
	// Runs of every task, and episodes at once.
	Runs        int `json:"runs" flag:"runs" default:"1" help:"runs of every task"`
	Concurrency int `json:"concurrency" flag:"concurrency" default:"4" help:"episodes run at once"`
	// Out is the output folder.
	Out string `json:"out" flag:"out" path:"file" help:"output folder"`
	// EnvURL runs the tools on a running toolenv server instead of
	// in-process.
	EnvURL string `json:"env_url" flag:"env-url" url:"http" help:"run tools on a running toolenv server (e.g. http://127.0.0.1:8080) instead of in-process"`
	// Shard is "i/n": run only task k with k mod n = i.
	Shard string `json:"shard" flag:"shard" help:"run only shard i/n of the tasks (task k goes to shard k mod n); join shards with toolenv eval merge"`
	// Resume continues the run in Out; RetryErrors also runs again the
	// episodes that ended with an error.
	Resume      bool `json:"resume" flag:"resume" help:"continue the run in --out, skipping finished episodes"`
	RetryErrors bool `json:"retry_errors" flag:"retry-errors" help:"with --resume, run again the episodes that ended with an error (model or environment unreachable)"`
	// StopAfterErrors stops the run when this many episodes in a row
	// measured nothing (eval.Config.StopAfterErrors).
	StopAfterErrors int `json:"stop_after_errors" flag:"stop-after-errors" default:"3" help:"stop the run when this many episodes in a row measured nothing (the model, the environment or the judge did not answer after its retries); 0: never"`
	// Replay serves every model and judge request from Records.
	Replay  bool   `json:"replay" flag:"replay" help:"serve every model and judge request from the records, with no network (a request never recorded is an error)"`
	Records string `json:"records" flag:"records" path:"file" help:"database of recorded model and judge requests (default DIR/records.db)"`
	// Seed seeds every episode's request seed and in-context examples.
	Seed int64 `json:"seed" flag:"seed" default:"1" help:"seed of the run: every episode's request seed and in-context examples derive from it"`
	// TaskIDs, Groups and Limit filter the tasks.
	TaskIDs []string `json:"task_ids" flag:"task-id,comma" help:"evaluate only these task ids (comma-separated or repeated)"`
	Groups  []string `json:"groups" flag:"group,comma" help:"evaluate only tasks of these groups (a database, a StableToolBench group)"`
	Limit   int      `json:"limit" flag:"limit" help:"evaluate only the first N tasks (after the filters)"`
	// Judge judges final answers (SoPR, FAC).
	Judge JudgeConfig `json:"judge" help:"the judge of final answers (StableToolBench's SoPR, MirrorAPI's FAC)"`
	// Agents are the agents' settings.
	Agents AgentConfig `json:"agents" help:"the agents' settings"`
	// Skew runs tasks against one version of a collection while showing
	// the model another's documentation.
	Skew SkewConfig `json:"skew" help:"version skew: old documentation, new environment (DynamicToolBench's setting)"`
	// Queue shares the run's episodes with workers on other machines.
	Queue QueueConfig `json:"queue" help:"share one run's episodes between workers on any machines (docs/eval.md, Evaluation across machines)"`
}

// QueueConfig shares a run's episodes between workers through a store
// (package eval/queue).
type QueueConfig struct {
	// URL is the store holding the queue: a postgres:// DSN, or an SQLite
	// file for workers on one machine; "" runs alone.
	URL string `json:"url" flag:"queue" path:"file" help:"share the run's episodes with other workers through this store: postgres://user:password@host:port/db (or an SQLite file, for workers on one machine); start the same command on every worker, each with its own --out; toolenv eval report --queue … --run-name NAME DIR writes the whole run's reports"`
	// Run names the run in the queue; "" names it after what it
	// evaluates (the tasks, agent, model and seed), so that workers
	// started with the same flags join one run.
	Run string `json:"run_name" flag:"run-name" help:"name of the run in the queue (default: derived from the tasks, agent, model and seed, so workers with the same flags join one run; name one to run the same configuration again)"`
	// Lease is how long a worker's claim on an episode lives without a
	// heartbeat; a dead worker's episode goes to another after it.
	Lease time.Duration `json:"lease" flag:"queue-lease" default:"1m" help:"how long a claim on an episode lives without a heartbeat (a dead worker's episode is run by another after it)"`
	// Attempts is how often an episode is claimed at most.
	Attempts int `json:"attempts" flag:"queue-attempts" default:"3" help:"most attempts at one episode: one that ends with an error (model or environment unreachable) is put back until then"`
	// Wait is how long a worker waits for an unreachable queue.
	Wait time.Duration `json:"wait" flag:"queue-wait" default:"2m" help:"how long a worker waits for an unreachable queue to return before it stops (finished episodes are kept until they are handed in)"`
}

// ModelConfig is the model the agent asks.
type ModelConfig struct {
	URL    string `json:"url" flag:"model" url:"http" help:"OpenAI-compatible endpoint of the model, e.g. http://127.0.0.1:8000/v1 (vLLM), http://127.0.0.1:11434/v1 (Ollama), https://api.openai.com/v1"`
	Name   string `json:"name" flag:"model-name" help:"model name the endpoint serves"`
	KeyEnv string `json:"key_env" flag:"api-key-env" default:"OPENAI_API_KEY" help:"environment variable holding the model's API key (empty: none)"`
	// APIKey is the key itself, for Go programs; it wins over KeyEnv.
	APIKey      string        `json:"api_key,omitempty" secret:"eval.model.key_env" help:"the model's API key itself"`
	Temperature float64       `json:"temperature" flag:"temperature" help:"sampling temperature sent with every agent request"`
	MaxTokens   int           `json:"max_tokens" flag:"max-tokens" help:"completion token limit of every agent request (0: the server's)"`
	Timeout     time.Duration `json:"timeout" flag:"model-timeout" default:"2m" help:"timeout of one model request"`
	Retries     int           `json:"retries" flag:"model-retries" default:"3" help:"retries of a model request that failed with a timeout, 429 or 5xx (with backoff)"`
}

// JudgeConfig is the judge of final answers.
type JudgeConfig struct {
	URL    string `json:"url" flag:"judge-url" url:"http" help:"endpoint of the SoPR/FAC judge (default: --model)"`
	Model  string `json:"model" flag:"judge-model" help:"judge model name (default: --model-name); judging applies to react, cot and dfsdt"`
	KeyEnv string `json:"key_env" flag:"judge-api-key-env" help:"environment variable of the judge's API key (default: --api-key-env)"`
	// APIKey is the key itself, for Go programs.
	APIKey string `json:"api_key,omitempty" secret:"eval.judge.key_env" help:"the judge's API key itself"`
	Off    bool   `json:"off" flag:"no-judge" help:"do not judge final answers (no SoPR, no FAC)"`
	NoSoPR bool   `json:"no_sopr" flag:"no-sopr" help:"skip StableToolBench's Solvable Pass Rate"`
	FAC    bool   `json:"fac" flag:"fac" help:"also judge MirrorAPI's Final Answer Completeness (its judge is a fine-tuned model; see docs/eval.md)"`
	Rounds int    `json:"rounds" flag:"judge-rounds" default:"1" help:"judgements of each answer (StableToolBench's --evaluate_times)"`
}

// AgentConfig are the agents' settings.
type AgentConfig struct {
	Budget         int    `json:"budget" flag:"budget" default:"10" help:"react: think-act-observe turns"`
	MaxSteps       int    `json:"max_steps" flag:"max-steps" default:"12" help:"cot/dfsdt: ToolBench's single_chain_max_step (chain length in nodes)"`
	Tries          int    `json:"tries" flag:"tries" default:"1" help:"cot: chains tried (CoT@N)"`
	Beam           int    `json:"beam" flag:"beam" default:"2" help:"dfsdt: children per state (tree_beam_size)"`
	MaxQueries     int    `json:"max_queries" flag:"max-queries" default:"200" help:"dfsdt: model calls per task (max_query_count)"`
	MaxObservation int    `json:"max_observation" flag:"max-observation" help:"characters of a tool's response shown to the model (0: 1024 for cot/dfsdt, 4096 for react)"`
	Style          string `json:"style" flag:"style" enum:",nestful,bfcl" help:"direct: prompt style nestful or bfcl (default: nestful for SLOT/SEL, bfcl otherwise)"`
	NativeTools    bool   `json:"native_tools" flag:"native-tools" help:"direct: offer the tools natively (tools field) instead of in the prompt"`
	StrictTools    bool   `json:"strict_tools" flag:"strict-tools" help:"direct with --native-tools, cot, dfsdt: offer the tools as OpenAI strict functions (strict: true, every argument required, optional ones nullable; see docs/frontends.md)"`
	Examples       int    `json:"examples" flag:"examples" default:"3" help:"direct, nestful style: in-context examples"`
}

// SkewConfig runs the tasks of a (drifted) collection folder while the
// model is shown the documentation of another version of it.
type SkewConfig struct {
	Env  []string `json:"env" flag:"env" path:"file" help:"collection folder to run against, e.g. a drifted version (repeatable; same as --tasks)"`
	Docs []string `json:"docs" flag:"docs" path:"file" help:"collection folder whose documentation the model is shown, e.g. the version before the drift: toolenv eval --docs C --env C2 (repeatable; matched to the environment's collections by name)"`
}

// Default returns the configuration toolenv eval starts from.
func Default() Config {
	return configfile.Default[Config]()
}

// File is a whole configuration file: the environment's keys at the top
// level and toolenv eval's in its eval section. Every command reads it;
// each uses the part it needs.
type File struct {
	environment.Config
	// Eval is toolenv eval's section.
	Eval Config `json:"eval" help:"toolenv eval: tasks, agent, model, judge"`
}

// DefaultFile returns the defaults of both parts.
func DefaultFile() File {
	return File{Config: environment.Default(), Eval: Default()}
}

// StoreEnv is the environment variable that names the store when neither
// a configuration file nor a flag does: a file path or a postgres:// DSN
// (keeping a password out of the command line).
const StoreEnv = "TOOLENV_STORE"

// Resolve returns the effective configuration of a command: the
// defaults, then $TOOLENV_STORE (read with getenv), then the
// configuration file at path ("" for none), then the flags the user gave
// (nil for none). It logs the file's warnings, and at debug level every
// flag that overrides a different value in the file; the returned
// configuration logs with log and reads credentials with getenv. A file
// that does not exist is a not-found error; a file or value that is
// wrong, an invalid-arguments error saying what to write instead.
func Resolve(path string, flags *configfile.Flags, getenv func(string) string, log *slog.Logger) (*File, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg := DefaultFile()
	if v := getenv(StoreEnv); v != "" {
		cfg.Store = v // a file or flag given still wins
	}
	if err := Layer(path, &cfg, flags, log); err != nil {
		return nil, err
	}
	if cfg.MCP.PageSize == 0 || cfg.MCP.SearchAbove == 0 {
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "the MCP page size and search threshold are positive numbers, or -1 (one page; no search_tools)")
	}
	cfg.Logger, cfg.Getenv = log, getenv
	return &cfg, nil
}

// Layer sets the configuration v points to (holding the defaults) from
// the configuration file at path ("" for none), then from the flags the
// user gave: defaults < file < flags. It is configfile.Layer, by which
// every command's options, whatever their type, are resolved.
func Layer(path string, v any, flags *configfile.Flags, log *slog.Logger) error {
	return configfile.Layer(path, v, flags, log)
}

// Schema returns the JSON Schema of configuration files (File): what
// "toolenv config schema" prints and docs/toolenv.schema.json holds.
func Schema() ([]byte, error) {
	return configfile.Schema(&File{}, environment.SchemaID, "toolenv configuration")
}
