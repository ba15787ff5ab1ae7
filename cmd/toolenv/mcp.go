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
		Long: `Serve collections of APIs as MCP tools over stdin/stdout, for MCP clients that
start their servers as commands (Claude Desktop, MCP inspectors, SDK clients).
It loads the same sources as serve (with none, the embedded demo collection) and
answers every tools/call through the same pipeline. stdout carries only MCP
messages; logs go to stderr. The server stops at the end of its input.

Tool names: with --names auto (the default) each tool keeps its own name, and a
name used by several collections becomes <collection>__<name>; --names prefixed
always uses <collection>__<name>. A tool can also be called by its ID
(collection/name). The whole connection is one toolenv session (SLOT/SEL task
state); a call's _meta "toolenv/session" names another.`,
		Example: `  toolenv mcp
  toolenv mcp --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction
  toolenv mcp --openapi petstore.yaml --names prefixed --store :memory:
  toolenv mcp --config examples/bird.yaml`,
		Args: cobra.NoArgs,
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
