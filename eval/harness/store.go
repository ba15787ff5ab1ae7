package harness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval/queue"
	"github.com/toolenv/toolenv/eval/report"
	"github.com/toolenv/toolenv/store"
)

// StoreConfig names the store of the commands that work on a store alone
// ("toolenv cache", "toolenv store"): its tag is their --store flag.
type StoreConfig struct {
	// Store is an SQLite file, ":memory:" or a postgres:// DSN; "" means
	// $TOOLENV_STORE, else the default file (Location).
	Store string `json:"store" flag:"store" path:"file" help:"cache and records store: an SQLite file (\":memory:\" keeps nothing) or postgres://user:password@host:port/db to share one store between replicas (default $TOOLENV_STORE, else the user cache folder's toolenv/store.db)"`
}

// Location is where the store is: Store, else the variable StoreEnv
// (read with getenv), else the default file of environment.Default.
func (c *StoreConfig) Location(getenv func(string) string) string {
	if c.Store != "" {
		return c.Store
	}
	if v := getenv(StoreEnv); v != "" {
		return v
	}
	return environment.Default().Store
}

// Open opens the store at Location. With mustExist (a command that only
// reads it) a path with no file is a not_found error rather than a new,
// empty store. Other failures say how to pick another store (StoreError).
func (c *StoreConfig) Open(ctx context.Context, getenv func(string) string, mustExist bool, log *slog.Logger) (store.Store, error) {
	path := c.Location(getenv)
	if mustExist && path != ":memory:" && !store.IsPostgres(path) {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, toolenv.Errorw(toolenv.StatusNotFound, "pass --store PATH: the one serve and cache import used", "no store at %s", path)
		}
	}
	st, err := store.Open(ctx, path, store.Options{Logger: log})
	if err != nil {
		return nil, StoreError(err)
	}
	return st, nil
}

// StoreMigrations are the tables of every component toolenv keeps in a
// store beside the store's own: the environment's (task sessions) and
// the evaluation queue's.
func StoreMigrations() []store.Migration {
	return append(environment.StoreMigrations(), queue.Migrations...)
}

// StoreError says how to pick another store, unless the store was refused
// for its schema (whose message says what to do).
func StoreError(err error) error {
	var se *store.SchemaError
	if errors.As(err, &se) {
		return err
	}
	return fmt.Errorf("%w (pass --store PATH or --store postgres://… to use another store)", err)
}

// QueueReport opens the store of the evaluation queue at url. With a run
// name it writes that run's reports into dir (report.FromQueue); without
// one it returns the store's runs instead (and a nil *report.Queued). A
// queue holding no runs is an invalid_arguments error.
func QueueReport(ctx context.Context, url, name, dir string, log *slog.Logger) (*report.Queued, []queue.RunInfo, error) {
	st, err := store.Open(ctx, url, store.Options{Logger: log, Migrations: queue.Migrations})
	if err != nil {
		return nil, nil, StoreError(err)
	}
	defer st.Close()
	if name != "" {
		q, err := report.FromQueue(ctx, st, name, store.Redact(url), dir)
		return q, nil, err
	}
	runs, err := queue.List(ctx, st)
	if err == nil && len(runs) == 0 {
		err = toolenv.Errorw(toolenv.StatusInvalidArguments, "", "the queue at %s holds no runs", store.Redact(url))
	}
	return nil, runs, err
}
