package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/toolbench"
)

// envFlags are the flags that say which collections to load and how to
// answer their calls; serve, mcp and eval share them.
type envFlags struct {
	store       string
	toolbench   []string
	openapi     []string
	collections []string
	demo        bool

	llmURL     string
	llmModel   string
	llmKeyEnv  string
	simPrompt  string
	llmTimeout time.Duration

	upstreamURL     string
	upstreamKeyEnv  string
	upstreamDirect  bool
	upstreamTimeout time.Duration

	timeout        time.Duration
	maxResultBytes int

	driftMode string // drift enforcement mode override (drift_mw.go)
	feedback  string // feedback level for calls that do not ask (drift_mw.go)
	faults    string // operational faults config (drift_mw.go)
	docsTool  bool   // offer the documentation tool (drift_mw.go)

	mapping mapFlags // failover and drift repair (map_mw.go)
}

func (f *envFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.store, "store", defaultStorePath(), "cache and records database (SQLite); \":memory:\" keeps nothing")
	fs.StringArrayVar(&f.toolbench, "toolbench", nil, "ToolBench docs: a StableToolBench query file, a folder of them, or a toolenv/tools/<Category>/<tool>.json tree (repeatable)")
	fs.StringArrayVar(&f.openapi, "openapi", nil, "an OpenAPI 3.0/3.1 document (JSON or YAML) to serve as a collection; NAME=FILE names the collection (repeatable)")
	fs.StringArrayVar(&f.collections, "collection", nil, "a toolenv collection folder (collection.json + tools.json), e.g. a built NL2SQL flavor or a drifted version (repeatable)")
	fs.BoolVar(&f.demo, "demo", false, "also serve the embedded demo collection (it is served anyway when nothing else is given)")
	fs.StringVar(&f.llmURL, "llm-url", "", "OpenAI-compatible endpoint of the API simulator, e.g. http://127.0.0.1:8000/v1 (vLLM serving MirrorAPI); empty: the offline synthesizer answers")
	fs.StringVar(&f.llmModel, "llm-model", "", "model name of the simulator")
	fs.StringVar(&f.llmKeyEnv, "llm-key-env", "OPENAI_API_KEY", "environment variable holding the simulator's API key")
	fs.StringVar(&f.simPrompt, "sim-prompt", "sft", "simulator prompt: sft (MirrorAPI), cot (MirrorAPI chain of thought) or stb (StableToolBench's GPT prompt)")
	fs.DurationVar(&f.llmTimeout, "llm-timeout", 60*time.Second, "timeout of one simulator request")
	fs.StringVar(&f.upstreamURL, "upstream-url", "", "StableToolBench/RapidAPI proxy URL to try before simulating (e.g. http://host:8080/rapidapi)")
	fs.StringVar(&f.upstreamKeyEnv, "upstream-key-env", "TOOLBENCH_KEY", "environment variable holding the proxy's toolbench_key")
	fs.BoolVar(&f.upstreamDirect, "upstream-direct", false, "call each tool's own documented URL before simulating")
	fs.DurationVar(&f.upstreamTimeout, "upstream-timeout", 15*time.Second, "timeout of one upstream request")
	fs.DurationVar(&f.timeout, "timeout", 120*time.Second, "overall timeout of one tool call")
	fs.IntVar(&f.maxResultBytes, "max-result-bytes", 8<<20, "reject responses larger than this")
	registerDriftFlags(fs, f)
	registerMapFlags(fs, &f.mapping)
}

// defaultStorePath is $XDG_CACHE_HOME/toolenv/store.db (or the OS's user
// cache folder), else ./.toolenv/store.db.
func defaultStorePath() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "toolenv", "store.db")
	}
	return filepath.Join(".toolenv", "store.db")
}

// environment is a loaded set of collections with their backends and the
// pipeline that serves them.
type environment struct {
	registry *invoke.Registry
	pipeline toolenv.Handler
	store    *store.Store
	llm      *llm.Client
	closers  []io.Closer
	log      *slog.Logger
	// storeFlag is where --store said the store is.
	storeFlag string
	// tasks gathered from the sources (StableToolBench queries, the demo,
	// collection folders), by collection.
	tasks map[string][]*toolenv.Task
}

// Close releases the backends and the store.
func (env *environment) Close() error {
	var errs []error
	for i := len(env.closers) - 1; i >= 0; i-- {
		errs = append(errs, env.closers[i].Close())
	}
	return errors.Join(errs...)
}

// openEnvironment loads every source the flags name, builds each
// collection's backend and the pipeline. obs may be nil.
func openEnvironment(ctx context.Context, f *envFlags, e *env, obs invoke.Observer) (*environment, error) {
	log := e.logger()
	env := &environment{registry: invoke.NewRegistry(), log: log, tasks: map[string][]*toolenv.Task{}, storeFlag: f.store}
	ok := false
	defer func() {
		if !ok {
			env.Close()
		}
	}()
	st, err := store.Open(ctx, f.store, store.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("%w (pass --store PATH to use another file)", err)
	}
	env.store = st
	env.closers = append(env.closers, st)
	if f.llmURL != "" {
		if f.llmModel == "" {
			return nil, usagef("--llm-url needs --llm-model (the model name the endpoint serves)")
		}
		env.llm = llm.New(f.llmURL, llm.Options{APIKey: e.getenv(f.llmKeyEnv), Timeout: f.llmTimeout, Logger: log})
	}

	var colls []*toolenv.Collection
	start := time.Now()
	if len(f.toolbench) > 0 {
		src, err := toolbench.Load(f.toolbench...)
		if err != nil {
			return nil, err
		}
		c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
		colls = append(colls, c)
		env.tasks[c.Name] = src.Tasks(c)
		log.Info("loaded ToolBench docs", "files", src.Files, "apis", len(c.Tools), "queries", len(env.tasks[c.Name]), "elapsed", time.Since(start).Round(time.Millisecond))
	}
	for _, path := range f.openapi {
		c, err := loadOpenAPI(ctx, path)
		if err != nil {
			return nil, err
		}
		colls = append(colls, c)
		log.Info("loaded OpenAPI document", "file", path, "collection", c.Name, "tools", len(c.Tools))
	}
	for _, dir := range f.collections {
		c, err := toolenv.ReadCollection(dir)
		if err != nil {
			return nil, err
		}
		colls = append(colls, c)
		tasks, problems, err := toolenv.ReadTasks(filepath.Join(dir, toolenv.TasksFile))
		switch {
		case err == nil:
			env.tasks[c.Name] = tasks
			for _, p := range problems {
				log.Warn("task skipped", "err", p)
			}
		case !errors.Is(err, fs.ErrNotExist):
			log.Warn("the collection's tasks cannot be read; serving its tools without them", "dir", dir, "err", err)
		}
		log.Info("loaded collection", "dir", dir, "collection", c.Name, "kind", c.Kind, "tools", len(c.Tools))
	}
	if f.demo || len(colls) == 0 {
		c, err := demo.Collection()
		if err != nil {
			return nil, err
		}
		colls = append(colls, c)
		if tasks, err := demo.Tasks(); err == nil {
			env.tasks[c.Name] = tasks
		}
		log.Info("serving the embedded demo collection", "tools", len(c.Tools))
	}
	for _, c := range colls {
		backend, err := newBackend(ctx, c, f, env, e)
		if err != nil {
			return nil, fmt.Errorf("collection %s: %w", c.Name, err)
		}
		if err := env.registry.Add(c, backend); err != nil {
			return nil, err
		}
	}
	before, after, err := pipelineMiddleware(ctx, f, env, e)
	if err != nil {
		return nil, err
	}
	env.pipeline = invoke.New(env.registry, invoke.Options{
		Logger: log, Observer: obs, Timeout: f.timeout, Cache: st, MaxResultBytes: f.maxResultBytes,
		BeforeValidate: before, AfterValidate: after,
	})
	ok = true
	return env, nil
}
