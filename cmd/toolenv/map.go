package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/internal/cli"
	"github.com/toolenv/toolenv/mapping/graph"
	"github.com/toolenv/toolenv/mapping/index"
	"github.com/toolenv/toolenv/mapping/verify"
)

func newMapCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "map",
		Short: "Index tools, map equivalent endpoints and fields, and use the mappings",
	}
	cmd.AddCommand(newMapIndexCmd(e), newMapSearchCmd(e), newMapMatchCmd(e), newMapProbeCmd(e), newMapSequenceCmd(e), newMapReviewCmd(e), newMapEvalCmd(e))
	return cmd
}

// defaultIndexPath is map.db beside the default store.
func defaultIndexPath() string {
	return filepath.Join(filepath.Dir(environment.Default().Store), "map.db")
}

// indexEnv is what the index commands run with.
func indexEnv(e *env) index.Env {
	return index.Env{Logger: e.logger(), Getenv: e.getenv, Progress: e.stderr}
}

func newMapIndexCmd(e *env) *cobra.Command {
	var (
		cf     *configFlags
		f      *cli.Options[index.Config]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Index every tool (BM25 + vectors) with its structural mappings and clusters",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := f.Value()
			env, err := cf.open(cmd.Context(), e)
			if err != nil {
				return err
			}
			defer env.Close()
			rep, run, err := index.BuildMapped(cmd.Context(), env.Store, env.ListedTools(), cfg, indexEnv(e))
			if err != nil {
				return err
			}
			if asJSON {
				return cli.WriteJSON(e.stdout, rep)
			}
			rep.WriteMarkdown(e.stdout, cfg.Notes(run)...)
			return nil
		},
	}
	cf = bindConfig(cmd.Flags(), bindEnv)
	f = cli.Bind(cmd.Flags(), func() index.Config { c := cli.Defaults[index.Config](); c.Path = defaultIndexPath(); return c }, false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func newMapSearchCmd(e *env) *cobra.Command {
	var (
		f      *cli.Options[index.SearchConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search the tool index; each hit comes with its alternatives",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, meta, err := index.SearchFile(cmd.Context(), args[0], f.Value(), indexEnv(e))
			if err != nil {
				return err
			}
			if asJSON {
				return cli.WriteJSON(e.stdout, res)
			}
			for _, n := range res.Notes {
				fmt.Fprintf(e.stderr, "note: %s\n", n)
			}
			res.WriteTable(e.stdout, meta.Tools)
			return nil
		},
	}
	f = cli.Bind(cmd.Flags(), func() index.SearchConfig {
		c := cli.Defaults[index.SearchConfig]()
		c.Path = defaultIndexPath()
		return c
	}, false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

func newMapMatchCmd(e *env) *cobra.Command {
	var (
		cf     *configFlags
		f      *cli.Options[graph.MatchConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "match",
		Short: "Map equivalent tools and fields structurally (no model) and write the mappings",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := f.Value()
			env, err := cf.open(cmd.Context(), e)
			if err != nil {
				return err
			}
			defer env.Close()
			tools := env.ListedTools()
			set, err := graph.Match(cmd.Context(), env.Store, tools, cfg, e.stderr, verify.Pipeline{Handler: env.Pipeline, Collection: env.Registry.Collection})
			if err != nil {
				return err
			}
			if asJSON {
				return cli.WriteJSON(e.stdout, set)
			}
			fmt.Fprintf(e.stdout, "%d tools, %d mappings (%d field pairs), %d clusters", len(tools), len(set.Mappings), set.FieldPairs(), len(set.Clusters))
			if cfg.Out != "" {
				fmt.Fprintf(e.stdout, ", written to %s", cfg.Out)
			}
			fmt.Fprintln(e.stdout)
			return nil
		},
	}
	cf = bindConfig(cmd.Flags(), bindEnv)
	f = cli.Bind(cmd.Flags(), cli.Defaults[graph.MatchConfig], false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the mappings as JSON")
	return cmd
}
