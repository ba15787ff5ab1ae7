package environment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/faults"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/configfile"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/server"
	"github.com/toolenv/toolenv/server/guard"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/store/epstore"
	"github.com/toolenv/toolenv/tasksession"
)

// Environment is one loaded environment: its collections, their backends,
// the one pipeline every call goes through and the front-ends over it.
// Open builds it; Close releases it. It is safe for concurrent use.
type Environment struct {
	// Config is the configuration the environment was opened with.
	Config Config
	// Registry holds the collections and their backends.
	Registry *invoke.Registry
	// Pipeline is the one call path: every front-end invokes it.
	Pipeline toolenv.Handler
	// Store is the cache and records store (SQLite or PostgreSQL).
	Store store.Store
	// Sessions keeps the SLOT/SEL task sessions in Store when
	// Config.Sessions says so (nil: in memory): the issuer of the HTTP
	// front-ends and the log of the sqltools backends.
	Sessions *tasksession.Sessions
	// Metrics counts the calls through Pipeline; Handler serves them at
	// /metrics.
	Metrics *server.Metrics
	// Tasks are the tasks that came with the sources (StableToolBench
	// queries, the demo, tasks.jsonl of collection folders), by
	// collection name.
	Tasks map[string][]*toolenv.Task

	log     *slog.Logger
	getenv  func(string) string
	llm     *llm.Client
	closeMu sync.Mutex // guards closers (Reload retires backends)
	closers []io.Closer

	// Hot-loading (hotload.go): Reload is one at a time; the drift
	// enforcer and documentation learn each hot-loaded version.
	reloadMu sync.Mutex
	enforcer *drift.Enforcer

	// MCP servers served as collections (mcpsources.go).
	mcp  mcpSources
	docs *drift.Docs

	// What the configuration applies, for PolicyOf: the fault rules, and
	// the collections calls are repaired for (name → the option).
	faults  *faults.Config
	repairs map[string]string

	frontOnce sync.Once
	search    *server.IndexSearch // behind search_tools
	mcpServer *mcp.Server
	handler   http.Handler
	guard     *guard.Guard
	frontErr  error
}

// Open loads every source cfg names, builds each collection's backend and
// the pipeline (see the package documentation for its order). A nil cfg
// serves the demo collection from an in-memory store. Problems with cfg
// are *toolenv.Error values with StatusInvalidArguments.
func Open(ctx context.Context, cfg *Config) (*Environment, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if c.Store == "" {
		c.Store = ":memory:"
	}
	if c.Version == "" {
		c.Version = buildinfo.Version()
	}
	if c.Images == nil {
		c.Images = &rodb.Images{} // collections over the same database index it once
	}
	env := &Environment{Config: c, Registry: invoke.NewRegistry(), Metrics: server.NewMetrics(),
		Tasks: map[string][]*toolenv.Task{}, log: c.Logger, getenv: c.Getenv}
	if env.log == nil {
		env.log = slog.New(slog.DiscardHandler)
	}
	if env.getenv == nil {
		env.getenv = os.Getenv
	}
	ok := false
	defer func() {
		if !ok {
			env.Close()
		}
	}()
	if err := env.check(); err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, c.Store, store.Options{Logger: env.log, Migrations: StoreMigrations(), Timeout: c.StoreTimeout})
	if err != nil {
		var se *store.SchemaError
		if errors.As(err, &se) {
			return nil, err // it says what to do
		}
		return nil, fmt.Errorf("%w (set %s to use another store)", err, env.option("store"))
	}
	env.Store = st
	env.closers = append(env.closers, st)
	if c.Sessions == "store" || (c.Sessions == "" && st.Kind() == "postgres") {
		env.Sessions, err = tasksession.New(ctx, st, tasksession.Options{
			Max: c.Server.MaxSessions, ClientNamed: c.Server.ClientSessionIDs, OnEnd: server.DropSessions(env.Registry), Logger: env.log,
			OnEvict: func(n int) { env.Metrics.SessionsEvicted("task", n) }})
		if err != nil {
			return nil, err
		}
	}
	if c.Simulator.URL != "" {
		env.llm = llm.New(c.Simulator.URL, llm.Options{APIKey: env.secret(c.Simulator.APIKey, c.Simulator.KeyEnv), Timeout: c.Simulator.Timeout, Logger: env.log})
	}
	colls, err := env.loadSources(ctx)
	if err != nil {
		return nil, err
	}
	for _, ls := range colls {
		col := ls.col
		backend, err := env.newBackend(ctx, col)
		if err != nil {
			return nil, fmt.Errorf("collection %s: %w", col.Name, err)
		}
		if err := env.Registry.Add(col, backend); err != nil {
			if ls.from != "" {
				return nil, fmt.Errorf("%s: %w", ls.from, err)
			}
			return nil, err
		}
	}
	if err := env.checkIsolationNames(); err != nil {
		return nil, err
	}
	before, after, err := env.middleware(ctx)
	if err != nil {
		return nil, err
	}
	var obs invoke.Observer = env.Metrics
	if c.Observer != nil {
		obs = observers{env.Metrics, c.Observer}
	}
	env.Pipeline = invoke.New(env.Registry, invoke.Options{
		Logger: env.log, Observer: obs, Timeout: c.Timeout, Cache: st, Fleet: env.fleet(), MaxResultBytes: c.MaxResultBytes,
		BeforeValidate: before, AfterValidate: after,
	})
	ok = true
	return env, nil
}

// check rejects values no component would accept, before anything is
// loaded.
func (env *Environment) check() error {
	c := &env.Config
	if c.Simulator.URL != "" && c.Simulator.Model == "" {
		return invalid("%s needs %s (the model name the endpoint serves)", env.option("simulator.url"), env.option("simulator.model"))
	}
	switch c.Drift.Mode {
	case "", drift.ModeStrict, drift.ModeCompat:
	default:
		return invalid("%s %q: want strict or compat", env.option("drift.mode"), c.Drift.Mode)
	}
	switch c.Sessions {
	case "", "memory", "store":
	default:
		return invalid("%s %q: want memory or store", env.option("sessions"), c.Sessions)
	}
	switch c.Feedback {
	case "", toolenv.FeedbackNone, toolenv.FeedbackTerse, toolenv.FeedbackHelpful:
	default:
		return invalid("%s %q: want none, terse or helpful", env.option("feedback"), c.Feedback)
	}
	switch c.MCPSources.OnFailure {
	case "", "simulate", "error":
	default:
		return invalid("%s %q: want simulate or error", env.option("mcp_sources.on_failure"), c.MCPSources.OnFailure)
	}
	if c.MCP.EmbedURL != "" && c.MCP.EmbedModel == "" {
		return invalid("%s needs %s (the embedding model the endpoint serves)", env.option("mcp.embed_url"), env.option("mcp.embed_model"))
	}
	if _, err := server.ParseMCPNaming(c.MCP.Names); err != nil {
		return invalid("%s: %v", env.option("mcp.names"), err)
	}
	return nil
}

// StoreMigrations are the schema steps of the tables other packages keep
// in the store (task sessions, RL episodes, the evaluation queue), beside the store's
// own: every program that opens or migrates an environment's store passes
// them (toolenv store migrate does).
func StoreMigrations() []store.Migration {
	return slices.Concat(tasksession.Migrations, epstore.Migrations)
}

// option names a configuration key for a message, with its flag.
func (env *Environment) option(key string) string { return configfile.Option(&env.Config, key) }

// secret returns a credential: the value given, else the named
// environment variable's.
func (env *Environment) secret(value, keyEnv string) string {
	if value != "" || keyEnv == "" {
		return value
	}
	return env.getenv(keyEnv)
}

// invalid is an error in the configuration.
func invalid(format string, args ...any) error {
	return toolenv.Errorw(toolenv.StatusInvalidArguments, "", format, args...)
}

// Collections returns the collections served, in the order loaded.
func (env *Environment) Collections() []*toolenv.Collection { return env.Registry.Collections() }

// Logger returns the environment's logger.
func (env *Environment) Logger() *slog.Logger { return env.log }

// Close releases the backends and the store, last opened first.
func (env *Environment) Close() error {
	env.closeMu.Lock()
	defer env.closeMu.Unlock()
	var errs []error
	for i := len(env.closers) - 1; i >= 0; i-- {
		errs = append(errs, env.closers[i].Close())
	}
	env.closers = nil
	return errors.Join(errs...)
}

// observers tells several observers about each call.
type observers []invoke.Observer

func (o observers) Observe(call *toolenv.Call, res *toolenv.Result, elapsed time.Duration) {
	for _, x := range o {
		x.Observe(call, res, elapsed)
	}
}

// fleet returns the claims that make replicas sharing a PostgreSQL store
// answer each miss once, when misses cost something (a simulator or an
// upstream is configured); the offline synthesizer answers too cheaply to
// be worth coordinating.
func (env *Environment) fleet() *invoke.Fleet {
	c := &env.Config
	if env.Store.Kind() != "postgres" || (c.Simulator.URL == "" && c.Upstream.URL == "" && !c.Upstream.Direct) {
		return nil
	}
	return &invoke.Fleet{Claims: env.Store, Lease: c.ClaimLease}
}
