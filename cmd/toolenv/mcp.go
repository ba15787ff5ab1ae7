package main

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/environment"
)

func newMCPCmd(e *env) *cobra.Command {
	var cf *configFlags
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve collections of APIs as MCP tools over stdio",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := cf.resolve(e)
			if err != nil {
				return err
			}
			return runMCP(cmd.Context(), e, &cfg.Config)
		},
	}
	cf = bindConfig(cmd.Flags(), bindMCP)
	cmd.AddCommand(newMCPSaveCmd(e))
	return cmd
}

func runMCP(ctx context.Context, e *env, cfg *environment.Config) error {
	env, err := environment.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer env.Close()
	defer env.WatchInBackground(ctx, cfg.Watch)()
	return env.ServeStdio(ctx, e.stdin, e.stdout)
}
