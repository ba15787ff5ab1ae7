package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/eval/queue"
	"github.com/toolenv/toolenv/store"
)

// storeEnv is the environment variable that names the store when --store
// is not given: a file path or a postgres:// DSN (keeping a password out
// of the command line).
const storeEnv = harness.StoreEnv

const storeFlagUsage = "cache and records store: an SQLite file (\":memory:\" keeps nothing) or postgres://user:password@host:port/db to share one store between replicas (default $" + storeEnv + ", else the user cache folder's toolenv/store.db)"

// storeLocation is where the store is: the --store flag, else
// $TOOLENV_STORE, else the default file.
func (e *env) storeLocation(flag string) string {
	if flag != "" {
		return flag
	}
	if v := e.getenv(storeEnv); v != "" {
		return v
	}
	return environment.Default().Store
}

// storeMigrations are the tables of every component toolenv keeps in a
// store beside the store's own: the environment's (task sessions) and
// the evaluation queue's.
func storeMigrations() []store.Migration {
	return append(environment.StoreMigrations(), queue.Migrations...)
}

// storeOpenError says how to pick another store, unless the store is
// refused for its schema (whose message says what to do).
func storeOpenError(err error) error {
	var se *store.SchemaError
	if errors.As(err, &se) {
		return err
	}
	return fmt.Errorf("%w (pass --store PATH or --store postgres://… to use another store)", err)
}

func newStoreCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Inspect and migrate the store's schema",
	}
	cmd.AddCommand(newStoreMigrateCmd(e), newStoreStatusCmd(e))
	return cmd
}

func newStoreMigrateCmd(e *env) *cobra.Command {
	var (
		storePath string
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Bring the store's schema to this toolenv's version (serve does it on start)",
		Long: `Apply the store's pending schema migrations and print every component's version.
Replicas sharing a PostgreSQL store must run the same schema: a toolenv older than
the store refuses to start, so migrate once with the new toolenv, then roll the
replicas. Migrating an up-to-date store changes nothing.`,
		Example: `  toolenv store migrate --store postgres://toolenv:secret@db:5432/toolenv
  TOOLENV_STORE=postgres://toolenv@db/toolenv toolenv store migrate`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := store.Migrate(cmd.Context(), e.storeLocation(storePath), storeMigrations(), store.Options{Logger: e.logger()})
			if err != nil {
				return storeOpenError(err)
			}
			if asJSON {
				return writeJSON(e.stdout, rep)
			}
			rep.WriteText(e.stdout)
			return nil
		},
	}
	cmd.Flags().StringVar(&storePath, "store", "", storeFlagUsage)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newStoreStatusCmd(e *env) *cobra.Command {
	var (
		storePath string
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print every component's schema version without changing anything",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			loc := e.storeLocation(storePath)
			vs, err := store.ReadSchema(cmd.Context(), loc, storeMigrations())
			if err != nil {
				return storeOpenError(err)
			}
			if asJSON {
				return writeJSON(e.stdout, map[string]any{"components": vs})
			}
			store.WriteSchemaStatus(e.stdout, vs)
			return nil
		},
	}
	cmd.Flags().StringVar(&storePath, "store", "", storeFlagUsage)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
