package main

import (
	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/store"
	"io"
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
	var (
		sf     *options[harness.StoreConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Bring the store's schema to this toolenv's version (serve does it on start)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := store.Migrate(cmd.Context(), sf.value().Location(e.getenv), harness.StoreMigrations(), store.Options{Logger: e.logger()})
			if err != nil {
				return harness.StoreError(err)
			}
			return show(e, asJSON, rep, rep.WriteText)
		},
	}
	sf = bindStore(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newStoreStatusCmd(e *env) *cobra.Command {
	var (
		sf     *options[harness.StoreConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print every component's schema version without changing anything",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			vs, err := store.ReadSchema(cmd.Context(), sf.value().Location(e.getenv), harness.StoreMigrations())
			if err != nil {
				return harness.StoreError(err)
			}
			return show(e, asJSON, map[string]any{"components": vs}, func(w io.Writer) { store.WriteSchemaStatus(w, vs) })
		},
	}
	sf = bindStore(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
