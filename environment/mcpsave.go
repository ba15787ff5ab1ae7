package environment

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"

	toolenv "github.com/toolenv/toolenv"
)

// SavedMCP is one MCP server SaveMCP wrote.
type SavedMCP struct {
	// Name is the server's (and its collection's) name.
	Name string
	// Tools counts its tools.
	Tools int
	// Dir is the collection folder written, "" without an out folder.
	Dir string
}

// SaveMCP starts (or reaches) the MCP servers cfg names (MCPSources'
// Servers and Config; its other sources are left out), reads their tools
// and writes each server as a collection folder out/NAME (when out is
// set): serving the folder starts the server again, drift and map read
// it. With toolsFile it also writes every server's tools in the
// mcpServers + tools shape MCPSources.Tools reads (documentation only, no
// server needed to serve it). ${VAR} references are written as they are,
// and inline values that look like credentials as xxxxx. The servers are
// stopped before it returns.
func SaveMCP(ctx context.Context, cfg Config, out, toolsFile string) ([]SavedMCP, error) {
	if out == "" && toolsFile == "" {
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "give --out DIR (collection folders) or --tools FILE (a tools file for --mcp-tools)")
	}
	if len(cfg.MCPSources.Servers)+len(cfg.MCPSources.Config) == 0 {
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "name an MCP server: --mcp-server NAME=URL, --mcp-server NAME='COMMAND ARGS...' or --mcp-config FILE")
	}
	cfg.ToolBench, cfg.OpenAPI, cfg.Collections, cfg.Demo, cfg.MCPSources.Tools = nil, nil, nil, false, nil
	env, err := Open(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	defer env.Close()
	clients := env.MCPClients()
	names := make([]string, 0, len(clients))
	for n := range clients {
		names = append(names, n)
	}
	sort.Strings(names)
	var saved []SavedMCP
	doc := map[string]any{}
	for _, n := range names {
		col := env.Registry.Collection(n)
		if col == nil {
			continue
		}
		s := SavedMCP{Name: n, Tools: len(col.Tools)}
		if out != "" {
			s.Dir = filepath.Join(out, n)
			if err := toolenv.WriteCollection(s.Dir, col); err != nil {
				return saved, err
			}
		}
		saved = append(saved, s)
		entry := map[string]any{"tools": env.MCPTools(n)}
		raw, _ := json.Marshal(clients[n].Server().Redacted())
		var srv map[string]any
		_ = json.Unmarshal(raw, &srv)
		for k, v := range srv {
			entry[k] = v
		}
		doc[n] = entry
	}
	if toolsFile != "" {
		if err := toolenv.WriteJSONFile(toolsFile, map[string]any{"mcpServers": doc}); err != nil {
			return saved, err
		}
	}
	return saved, nil
}
