package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
)

func newEpisodesCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "episodes",
		Short: "Work with the RL episodes toolenv serve keeps in the store (/openenv, docs/episodes.md)",
	}
	cmd.AddCommand(newEpisodesExportCmd(e))
	return cmd
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
			eps, err := episode.New(ctx, env, episode.Options{Persist: "store"})
			if err != nil {
				return err
			}
			defer eps.Close()
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
			n, err := eps.Export(ctx, bw, format)
			if ferr := bw.Flush(); err == nil {
				err = ferr
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "toolenv: %d episodes written (%s)\n", n, format)
			return nil
		},
	}
	cf = bindConfig(cmd.Flags(), bindEnv)
	cmd.Flags().StringVar(&format, "format", episode.ExportJSONL, "jsonl (records), openai or sharegpt (SFT data)")
	cmd.Flags().StringVar(&out, "out", "", "write here instead of standard output")
	return cmd
}
