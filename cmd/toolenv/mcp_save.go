package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/environment"
)

func newMCPSaveCmd(e *env) *cobra.Command {
	var (
		cf    *configFlags
		out   string
		tools string
	)
	cmd := &cobra.Command{
		Use:   "save --mcp-server NAME=URL|NAME=COMMAND... --out DIR",
		Short: "Save MCP servers' tools as collection folders (for drift, mapping, --collection) or as a tools file (--mcp-tools)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := cf.resolve(e)
			if err != nil {
				return err
			}
			saved, err := environment.SaveMCP(cmd.Context(), cfg.Config, out, tools)
			for _, s := range saved {
				if s.Dir != "" {
					fmt.Fprintf(e.stdout, "%s: %d tools → %s\n", s.Name, s.Tools, s.Dir)
				}
			}
			if err == nil && tools != "" {
				fmt.Fprintf(e.stdout, "tools of %d servers → %s\n", len(saved), tools)
			}
			return err
		},
	}
	cf = bindConfig(cmd.Flags(), bindEnv)
	cmd.Flags().StringVar(&out, "out", "", "folder to write one collection folder per server into (DIR/NAME)")
	cmd.Flags().StringVar(&tools, "tools", "", "also write the servers' tools to this file, in the shape --mcp-tools reads")
	return cmd
}
