package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
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
			if out == "" && tools == "" {
				return toolenv.Errorw(toolenv.StatusInvalidArguments, "", "give --out DIR (collection folders) or --tools FILE (a tools file for --mcp-tools)")
			}
			cfg, err := cf.resolve(e)
			if err != nil {
				return err
			}
			ec := cfg.Config
			if len(ec.MCPSources.Servers)+len(ec.MCPSources.Config) == 0 {
				return toolenv.Errorw(toolenv.StatusInvalidArguments, "", "name an MCP server: --mcp-server NAME=URL, --mcp-server NAME='COMMAND ARGS...' or --mcp-config FILE")
			}
			ec.ToolBench, ec.OpenAPI, ec.Collections, ec.Demo, ec.MCPSources.Tools = nil, nil, nil, false, nil
			env, err := environment.Open(cmd.Context(), &ec)
			if err != nil {
				return err
			}
			defer env.Close()
			clients := env.MCPClients()
			names := make([]string, 0, len(clients))
			for n := range clients {
				names = append(names, n)
			}
			sort.Strings(names)
			doc := map[string]any{}
			for _, n := range names {
				col := env.Registry.Collection(n)
				if col == nil {
					continue
				}
				if out != "" {
					dir := filepath.Join(out, n)
					if err := toolenv.WriteCollection(dir, col); err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "%s: %d tools → %s\n", n, len(col.Tools), dir)
				}
				entry := map[string]any{"tools": env.MCPTools(n)}
				raw, _ := json.Marshal(clients[n].Server().Redacted())
				var srv map[string]any
				_ = json.Unmarshal(raw, &srv)
				for k, v := range srv {
					entry[k] = v
				}
				doc[n] = entry
			}
			if tools != "" {
				if err := toolenv.WriteJSONFile(tools, map[string]any{"mcpServers": doc}); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "tools of %d servers → %s\n", len(doc), tools)
			}
			return nil
		},
	}
	cf = bindConfig(cmd.Flags(), bindEnv)
	cmd.Flags().StringVar(&out, "out", "", "folder to write one collection folder per server into (DIR/NAME)")
	cmd.Flags().StringVar(&tools, "tools", "", "also write the servers' tools to this file, in the shape --mcp-tools reads")
	return cmd
}
