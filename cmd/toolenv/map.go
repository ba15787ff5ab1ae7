package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/environment"
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
		f      *options[index.Config]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Index every tool (BM25 + vectors) with its structural mappings and clusters",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := f.value()
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
				return writeJSON(e.stdout, rep)
			}
			rep.WriteMarkdown(e.stdout, cfg.Notes(run)...)
			return nil
		},
	}
	cf = bindConfig(cmd.Flags(), bindEnv)
	f = bindOptions(cmd.Flags(), func() index.Config { c := configDefaults[index.Config](); c.Path = defaultIndexPath(); return c }, false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// reportCmd completes cmd (its Use and Short set) into a command with
// the flags of T (def gives their defaults) and --json ("print the what
// as JSON"; what may be empty): it runs run with the options given and prints the result
// with text, or as JSON. text takes the result first, as a method
// does ((*mapeval.Report).Markdown). A result that comes with an interrupt (the part
// of a long run done) is printed before the error is returned.
func reportCmd[T, R any](e *env, cmd *cobra.Command, def func() T, what string, run func(ctx context.Context, cfg *T) (R, error), text func(r R, w io.Writer)) *cobra.Command {
	var asJSON bool
	f := bindOptions(cmd.Flags(), def, false)
	cmd.Flags().BoolVar(&asJSON, "json", false, strings.Replace("print the "+what+" as JSON", "the  ", "", 1))
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		r, err := run(cmd.Context(), f.value())
		if err != nil && (cmd.Context().Err() == nil || reflect.ValueOf(&r).Elem().IsZero()) {
			return err
		}
		if perr := show(e, asJSON, r, func(w io.Writer) { text(r, w) }); err == nil {
			err = perr
		}
		if err == nil {
			err = cmd.Context().Err() // interrupted: what was done is printed, the exit code says so
		}
		return err
	}
	return cmd
}

// show prints v with text, or as JSON with --json.
func show(e *env, asJSON bool, v any, text func(io.Writer)) error {
	if asJSON {
		return writeJSON(e.stdout, v)
	}
	text(e.stdout)
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newMapSearchCmd(e *env) *cobra.Command {
	var (
		f      *options[index.SearchConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search the tool index; each hit comes with its alternatives",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, meta, err := index.SearchFile(cmd.Context(), args[0], f.value(), indexEnv(e))
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, res)
			}
			for _, n := range res.Notes {
				fmt.Fprintf(e.stderr, "note: %s\n", n)
			}
			res.WriteTable(e.stdout, meta.Tools)
			return nil
		},
	}
	f = bindOptions(cmd.Flags(), func() index.SearchConfig {
		c := configDefaults[index.SearchConfig]()
		c.Path = defaultIndexPath()
		return c
	}, false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

func newMapMatchCmd(e *env) *cobra.Command {
	var (
		cf     *configFlags
		f      *options[graph.MatchConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "match",
		Short: "Map equivalent tools and fields structurally (no model) and write the mappings",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := f.value()
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
				return writeJSON(e.stdout, set)
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
	f = bindOptions(cmd.Flags(), configDefaults[graph.MatchConfig], false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the mappings as JSON")
	return cmd
}
