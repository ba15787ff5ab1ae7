package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	return cmd
}

func runMCP(ctx context.Context, e *env, cfg *environment.Config) error {
	env, err := environment.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer env.Close()
	defer env.WatchInBackground(ctx, cfg.Watch)()
	srv, err := env.MCPServer()
	if err != nil {
		return err
	}
	tools := 0
	for _, c := range env.Collections() {
		tools += len(c.Tools)
	}
	log := env.Logger()
	log.Info("toolenv is serving MCP over stdio", "collections", len(env.Collections()), "tools", tools, "names", cfg.MCP.Names, "store", env.Store.Path())
	env.Ready()
	t := &mcp.IOTransport{Reader: stdinCloser(e.stdin), Writer: writeNopCloser{e.stdout}}
	err = srv.Run(ctx, t)
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed):
		log.Info("MCP client disconnected")
		return nil
	case ctx.Err() != nil:
		return nil // interrupted: a clean stop
	}
	return fmt.Errorf("mcp over stdio: %w", err)
}

// stdinCloser lets the SDK close the input when the session ends (an
// interrupt must unblock a pending read), when it can be closed.
func stdinCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

// writeNopCloser hands stdout to the SDK without letting it close it:
// the command may still report on it after the session.
type writeNopCloser struct{ io.Writer }

func (writeNopCloser) Close() error { return nil }
