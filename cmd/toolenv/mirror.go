package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/toolenv/toolenv/internal/cli"
	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/mirror/dataset"
)

// mirrorOptions are what a mirror command opens its dataset with.
func mirrorOptions(e *env) dataset.Options {
	return dataset.Options{Logger: e.logger(), Getenv: e.getenv, Progress: e.stderr}
}

// bindMirror registers the flags every "toolenv mirror" command shares
// (dataset.Config's) and --config.
func bindMirror(fs *pflag.FlagSet) *cli.Options[dataset.Config] {
	return cli.Bind(fs, dataset.Default, true)
}

func newMirrorCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mirror",
		Short: "Make MirrorAPI training data and MirrorAPI-Bench from real API calls",
	}
	cmd.AddCommand(newMirrorRunsCmd(e, "run", "Run every stage: generate, collect, filter, synthesize, split, explain, export", nil))
	for _, stage := range mirror.Stages {
		cmd.AddCommand(newMirrorRunsCmd(e, stage, mirror.StageSummary(stage), []string{stage}))
	}
	cmd.AddCommand(newMirrorRunsCmd(e, "report", "Write the dataset's report (funnel, losses per rule, splits, per category) again", []string{}),
		newMirrorCacheSetCmd(e), newMirrorFACCmd(e), newMirrorCompareCmd(e))
	return cmd
}

// newMirrorRunsCmd is a command that runs the stages only names (nil:
// all; empty: none) and writes the dataset's report.
func newMirrorRunsCmd(e *env, name, short string, only []string) *cobra.Command {
	var f *cli.Options[dataset.Config]
	cmd := &cobra.Command{
		Use:   name + " --collection DIR --out DIR",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := f.Resolve(e.logger())
			if err != nil {
				return err
			}
			d, err := dataset.Open(cmd.Context(), cfg, mirrorOptions(e))
			if err != nil {
				return err
			}
			defer d.Close()
			start := time.Now()
			rep, err := d.Run(cmd.Context(), only)
			if rep != nil && rep.Summary != nil {
				fmt.Fprint(e.stdout, mirror.FunnelText(rep.Summary))
				fmt.Fprintf(e.stdout, "report: %s (%s)\n", filepath.Join(cfg.Out, "report.md"), time.Since(start).Round(time.Millisecond))
			}
			return err
		},
	}
	f = bindMirror(cmd.Flags())
	return cmd
}

func newMirrorCacheSetCmd(e *env) *cobra.Command {
	var f *cli.Options[dataset.CacheSetConfig]
	cmd := &cobra.Command{
		Use:   "cache-set --from STORE --toolbench DOCS --out DIR",
		Short: "Write the cache-model data (MirrorAPI-Cache, §4.4) from the real answers of a toolenv store",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := f.Resolve(e.logger())
			if err != nil {
				return err
			}
			cs, err := dataset.CacheSet(cmd.Context(), cfg, mirrorOptions(e))
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "cache set: %d entries read, %d training samples, %d held out; skipped %v\nwritten to %s\n", cs.Entries, cs.Train, cs.Test, cs.Skipped, cfg.Out)
			return nil
		},
	}
	f = cli.Bind(cmd.Flags(), dataset.DefaultCacheSet, false)
	return cmd
}

func newMirrorFACCmd(e *env) *cobra.Command {
	var f *cli.Options[dataset.FACConfig]
	cmd := &cobra.Command{
		Use:   "fac --runs DIR --out DIR",
		Short: "Write FAC annotation files (Table 13's prompt) from evaluation episodes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := f.Resolve(e.logger())
			if err != nil {
				return err
			}
			st, err := dataset.FAC(cmd.Context(), cfg, mirrorOptions(e))
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "FAC files: %d episodes, %d with a final answer; labels %v\nwritten to %s\n", st.Episodes, st.Written, st.Labels, cfg.Out)
			return nil
		},
	}
	f = cli.Bind(cmd.Flags(), dataset.DefaultFAC, false)
	return cmd
}

func newMirrorCompareCmd(e *env) *cobra.Command {
	var (
		f  *cli.Options[dataset.Config]
		cf *cli.Options[dataset.CompareConfig]
	)
	cmd := &cobra.Command{
		Use:   "compare --collection DIR --out DIR --llm-url URL --llm-model M --agent-url URL --agent-model M",
		Short: "Compare agents on the real, a cached and a simulated environment (MirrorAPI §4.3)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := f.Resolve(e.logger())
			if err != nil {
				return err
			}
			cs, out, err := dataset.Compare(cmd.Context(), cfg, cf.Value(), mirrorOptions(e))
			if err != nil {
				return err
			}
			md, _ := os.ReadFile(filepath.Join(out, "compare.md"))
			fmt.Fprintf(e.stdout, "%s\nwritten to %s (%d of %d queries kept)\n", md, out, cs.Kept, cs.Queries)
			return nil
		},
	}
	f = bindMirror(cmd.Flags())
	cf = cli.Bind(cmd.Flags(), dataset.DefaultCompare, false)
	return cmd
}
