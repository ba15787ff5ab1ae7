package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
	judgepkg "github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/internal/cli"
	"github.com/toolenv/toolenv/llm"
)

func newEpisodesCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "episodes",
		Short: "Work with the RL episodes toolenv serve keeps in the store (/openenv, docs/episodes.md)",
	}
	cmd.AddCommand(newEpisodesExportCmd(e), newEpisodesRescoreCmd(e))
	return cmd
}

func newEpisodesRescoreCmd(e *env) *cobra.Command {
	var (
		cf            *configFlags
		format, out   string
		reward        string
		judge, jmodel string
	)
	cmd := &cobra.Command{
		Use:   "rescore",
		Short: "Recompute the rewards of the store's episodes under a new reward definition, writing new records",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := cf.resolve(e)
			if err != nil {
				return err
			}
			def, err := episode.ParseReward([]byte(reward))
			if err != nil {
				return cli.Usage(err)
			}
			ctx := cmd.Context()
			env, err := environment.Open(ctx, &cfg.Config)
			if err != nil {
				return err
			}
			defer env.Close()
			opts := episode.Options{}
			if judge != "" {
				opts.Judge = &judgepkg.Judge{Model: llm.New(judge, llm.Options{Logger: cfg.Logger}), ModelName: jmodel}
			}
			eps, err := episode.New(ctx, env, opts)
			if err != nil {
				return err
			}
			defer eps.Close()
			return writeTo(e, out, func(w io.Writer) error {
				rep, err := eps.Rescore(ctx, w, def, format)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "toolenv: %d episodes rescored (%s), %d whose success needs state the record does not hold%s%s\n",
					rep.Written, format, rep.NeedsState, episode.SkippedNote(&episode.ExportReport{Skipped: rep.Skipped}), episode.UnscorableNote(rep))
				return nil
			})
		},
	}
	cf = bindConfig(cmd.Flags(), bindEnv)
	cmd.Flags().StringVar(&reward, "reward", "", `the new reward definition, JSON: {"success": ..., "step_cost": ..., "penalty": {...}}`)
	cmd.Flags().StringVar(&format, "format", episode.ExportJSONL, "jsonl (records), openai or sharegpt (SFT data)")
	cmd.Flags().StringVar(&out, "out", "", "write here instead of standard output")
	cmd.Flags().StringVar(&judge, "episode-judge-url", "", "OpenAI-compatible endpoint of the judge, for success pass_rate")
	cmd.Flags().StringVar(&jmodel, "episode-judge-model", "", "the judge's model name")
	_ = cmd.MarkFlagRequired("reward")
	return cmd
}

// writeTo runs write on the file out (created), or standard output.
func writeTo(e *env, out string, write func(io.Writer) error) error {
	w := e.stdout
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriter(w)
	err := write(bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

func newEpisodesExportCmd(e *env) *cobra.Command {
	var (
		cf     *configFlags
		format string
		out    string
	)
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write every episode of the store as a trajectory: JSONL records, or SFT data in OpenAI or ShareGPT form",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := cf.resolve(e)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			env, err := environment.Open(ctx, &cfg.Config)
			if err != nil {
				return err
			}
			defer env.Close()
			eps, err := episode.New(ctx, env, episode.Options{})
			if err != nil {
				return err
			}
			defer eps.Close()
			return writeTo(e, out, func(w io.Writer) error {
				rep, err := eps.Export(ctx, w, format)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "toolenv: %d episodes written (%s)%s\n", rep.Written, format, episode.SkippedNote(rep))
				return nil
			})
		},
	}
	cf = bindConfig(cmd.Flags(), bindEnv)
	cmd.Flags().StringVar(&format, "format", episode.ExportJSONL, "jsonl (records), openai or sharegpt (SFT data)")
	cmd.Flags().StringVar(&out, "out", "", "write here instead of standard output")
	return cmd
}
