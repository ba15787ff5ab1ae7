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
		Long: `Read every RL episode kept in the store (episodes live there with --sessions
store, the default with a postgres:// store; a server keeping them in memory writes
each there when it ends) and write each as one JSON line:
--format jsonl is the record (reset options, reward definition, tools, every step's
calls, observations and rewards, the return and the outcome); openai is the chat
with its tool calls ({"messages", "tools", "reward"}); sharegpt is LLaMA-Factory's
function-calling form. Give the collections to export: an episode is rebuilt from its
task, and the episodes of other collections are skipped (and counted).`,
		Example: `  toolenv episodes export --store episodes.db --collection out/bird/slot --out episodes.jsonl
  toolenv episodes export --store postgres://toolenv@db/toolenv --collection out/bird/slot --format openai --out sft.jsonl`,
		Args: cobra.NoArgs,
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
			rep, err := eps.Export(ctx, bw, format)
			if ferr := bw.Flush(); err == nil {
				err = ferr
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "toolenv: %d episodes written (%s)%s\n", rep.Written, format, episode.SkippedNote(rep))
			return nil
		},
	}
	cf = bindConfig(cmd.Flags(), bindEnv)
	cmd.Flags().StringVar(&format, "format", episode.ExportJSONL, "jsonl (records), openai or sharegpt (SFT data)")
	cmd.Flags().StringVar(&out, "out", "", "write here instead of standard output")
	return cmd
}
