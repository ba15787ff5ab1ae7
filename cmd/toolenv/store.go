package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/internal/cli"
	"github.com/toolenv/toolenv/store"
)

func newStoreCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Inspect and migrate the store's schema",
	}
	cmd.AddCommand(newStoreMigrateCmd(e), newStoreStatusCmd(e))
	return cmd
}

func newStoreMigrateCmd(e *env) *cobra.Command {
	return cli.ReportCmd(e.stdout, &cobra.Command{
		Use:   "migrate",
		Short: "Bring the store's schema to this toolenv's version (serve does it on start)",
	}, cli.Defaults[harness.StoreConfig], "", func(ctx context.Context, c *harness.StoreConfig) (*store.MigrationReport, error) {
		rep, err := store.Migrate(ctx, c.Location(e.getenv), harness.StoreMigrations(), store.Options{Logger: e.logger()})
		if err != nil {
			return nil, harness.StoreError(err)
		}
		return rep, nil
	}, (*store.MigrationReport).WriteText)
}

// schemaStatus is what store status prints.
type schemaStatus struct {
	Components []store.SchemaVersion `json:"components"`
}

func newStoreStatusCmd(e *env) *cobra.Command {
	return cli.ReportCmd(e.stdout, &cobra.Command{
		Use:   "status",
		Short: "Print every component's schema version without changing anything",
	}, cli.Defaults[harness.StoreConfig], "", func(ctx context.Context, c *harness.StoreConfig) (schemaStatus, error) {
		vs, err := store.ReadSchema(ctx, c.Location(e.getenv), harness.StoreMigrations())
		if err != nil {
			return schemaStatus{}, harness.StoreError(err)
		}
		return schemaStatus{vs}, nil
	}, func(s schemaStatus, w io.Writer) { store.WriteSchemaStatus(w, s.Components) })
}
