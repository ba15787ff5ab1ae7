package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/toolenv/toolenv/server"
)

// newMCPHTTPHandler returns the MCP streamable-HTTP handler serve mounts
// at /mcp: every loaded tool, named by the auto scheme.
func newMCPHTTPHandler(ctx context.Context, env *environment, e *env, names string, lf mcpListFlags) (http.Handler, error) {
	naming, err := server.ParseMCPNaming(names)
	if err != nil {
		return nil, usagef("--mcp-names: %v", err)
	}
	srv, err := newMCPServer(env, naming, lf)
	if err != nil {
		return nil, err
	}
	return server.NewMCPHandler(srv, server.MCPHTTPOptions{Logger: env.log}), nil
}

// mcpListFlags say how tools/list pages and when search_tools is offered.
type mcpListFlags struct {
	pageSize    int
	searchAbove int
}

func (lf *mcpListFlags) register(fs *pflag.FlagSet, prefix string) {
	fs.IntVar(&lf.pageSize, prefix+"page-size", server.DefaultMCPPageSize, "tools per MCP tools/list page (the next page's cursor in nextCursor); -1: every tool in one page")
	fs.IntVar(&lf.searchAbove, prefix+"search-above", server.DefaultMCPSearchAbove, "offer the MCP search_tools tool when more tools than this are listed; -1: never")
}

func newMCPServer(env *environment, naming server.MCPNaming, lf mcpListFlags) (*mcp.Server, error) {
	if lf.pageSize == 0 || lf.searchAbove == 0 {
		return nil, usagef("the MCP page size and search threshold are positive numbers, or -1 (one page; no search_tools)")
	}
	search, err := newToolSearch(env)
	if err != nil {
		return nil, err
	}
	return server.NewMCPServer(server.MCPOptions{
		Pipeline: env.pipeline, Registry: env.registry, Logger: env.log, Naming: naming, Version: version, Search: search,
		PageSize: lf.pageSize, SearchAbove: lf.searchAbove,
	})
}

// newToolSearch is the index behind the MCP search_tools tool: its files
// sit in a "search" folder beside the store file (reused while the tools
// stay the same), or in a temporary folder removed at exit when the store
// is not a file.
func newToolSearch(env *environment) (*server.IndexSearch, error) {
	dir := ""
	if p := env.storeFlag; p != "" && p != ":memory:" && !strings.Contains(p, "://") {
		dir = filepath.Join(filepath.Dir(p), "search")
	} else {
		tmp, err := os.MkdirTemp("", "toolenv-search-")
		if err != nil {
			return nil, fmt.Errorf("tool search index: %w", err)
		}
		env.closers = append(env.closers, closerFunc(func() error { return os.RemoveAll(tmp) }))
		dir = tmp
	}
	search := server.NewIndexSearch(server.IndexSearchOptions{Dir: dir, Logger: env.log})
	env.closers = append(env.closers, search)
	return search, nil
}

// closerFunc is a function as an io.Closer.
type closerFunc func() error

func (f closerFunc) Close() error { return f() }

func newMCPCmd(e *env) *cobra.Command {
	var (
		f     envFlags
		names string
		lf    mcpListFlags
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
			return runMCP(cmd.Context(), e, &f, naming, lf)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&names, "names", "auto", "tool naming: auto (own names, <collection>__<name> where names collide) or prefixed (always <collection>__<name>)")
	lf.register(fs, "")
	f.register(fs)
	return cmd
}

func runMCP(ctx context.Context, e *env, f *envFlags, naming server.MCPNaming, lf mcpListFlags) error {
	env, err := openEnvironment(ctx, f, e, nil)
	if err != nil {
		return err
	}
	defer env.Close()
	srv, err := newMCPServer(env, naming, lf)
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
