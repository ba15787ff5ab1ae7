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
		Long: `Start (or reach) each MCP server named by --mcp-server and --mcp-config, read its
tools, and write each as a toolenv collection folder DIR/NAME (collection.json,
tools.json): serve it with --collection DIR/NAME, drift it with toolenv drift --in
DIR/NAME, index it with toolenv map index. The folder's collection.json names the
server (command or URL), so serving the folder starts the server again; ${VAR}
references in env, headers and args are written as they are, and values written
inline that look like credentials are written as xxxxx.

With --tools FILE, also write every server's tools in the mcpServers + tools
shape that --mcp-tools reads: documentation only, no server needed to serve it.`,
		Example: `  toolenv mcp save --mcp-server memory='npx -y @modelcontextprotocol/server-memory' --out out/mcp
  toolenv mcp save --mcp-config claude_desktop_config.json --out out/mcp --tools out/mcp/tools.json`,
		Args: cobra.NoArgs,
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
