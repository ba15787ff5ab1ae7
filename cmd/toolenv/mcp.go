package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/server"
)

// newMCPHTTPHandler returns the MCP streamable-HTTP handler serve mounts
// at /mcp: every loaded tool, named by the auto scheme.
func newMCPHTTPHandler(ctx context.Context, env *environment, e *env, names string) (http.Handler, error) {
	naming, err := server.ParseMCPNaming(names)
	if err != nil {
		return nil, usagef("--mcp-names: %v", err)
	}
	srv, err := newMCPServer(env, naming)
	if err != nil {
		return nil, err
	}
	return server.NewMCPHandler(srv, server.MCPHTTPOptions{Logger: env.log}), nil
}

func newMCPServer(env *environment, naming server.MCPNaming) (*mcp.Server, error) {
	return server.NewMCPServer(server.MCPOptions{
		Pipeline: env.pipeline, Registry: env.registry, Logger: env.log, Naming: naming, Version: version,
	})
}

func newMCPCmd(e *env) *cobra.Command {
	var (
		f     envFlags
		names string
	)
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
  toolenv mcp --openapi petstore.yaml --names prefixed --store :memory:`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			naming, err := server.ParseMCPNaming(names)
			if err != nil {
				return usagef("--names: %v", err)
			}
			return runMCP(cmd.Context(), e, &f, naming)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&names, "names", "auto", "tool naming: auto (own names, <collection>__<name> where names collide) or prefixed (always <collection>__<name>)")
	f.register(fs)
	return cmd
}

func runMCP(ctx context.Context, e *env, f *envFlags, naming server.MCPNaming) error {
	env, err := openEnvironment(ctx, f, e, nil)
	if err != nil {
		return err
	}
	defer env.Close()
	srv, err := newMCPServer(env, naming)
	if err != nil {
		return err
	}
	tools := 0
	for _, c := range env.registry.Collections() {
		tools += len(c.Tools)
	}
	env.log.Info("toolenv is serving MCP over stdio", "collections", len(env.registry.Collections()), "tools", tools, "names", naming.String(), "store", env.store.Path())
	t := &mcp.IOTransport{Reader: stdinCloser(e.stdin), Writer: writeNopCloser{e.stdout}}
	err = srv.Run(ctx, t)
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed):
		env.log.Info("MCP client disconnected")
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
