package main

import (
	"context"
	"fmt"
	"net"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/server"
	"github.com/toolenv/toolenv/server/guard"
)

func newServeCmd(e *env) *cobra.Command {
	var (
		f        envFlags
		addr     string
		baseURL  string
		maxBody  int64
		mcpNames string
		mcpList  mcpListFlags
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve collections of APIs over /virtual (StableToolBench), REST, OpenAPI and MCP",
		Long: `Serve collections of APIs. With no source flags it serves the embedded demo
collection. Every call goes through one pipeline: validation, the cache, then the
collection's backend (for documented APIs: the real upstream if configured, then the
LLM simulator if configured, else the offline synthesizer).`,
		Example: `  toolenv serve
  toolenv serve --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction
  toolenv serve --collection out/bird/slot --collection out/bird/rest --addr 127.0.0.1:9000
  toolenv serve --toolbench DIR --llm-url http://127.0.0.1:8000/v1 --llm-model MirrorAPI`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), e, &f, addr, baseURL, maxBody, mcpNames, mcpList)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&baseURL, "base-url", "", "public URL of the server, written into OpenAPI documents (default: the request's host)")
	fs.Int64Var(&maxBody, "max-body", 1<<20, "largest request body accepted, in bytes")
	fs.StringVar(&mcpNames, "mcp-names", "auto", "MCP tool names at /mcp: auto (own names, <collection>__<name> where names collide) or prefixed")
	mcpList.register(fs, "mcp-")
	f.register(fs)
	return cmd
}

func runServe(ctx context.Context, e *env, f *envFlags, addr, baseURL string, maxBody int64, mcpNames string, mcpList mcpListFlags) error {
	log := e.logger()
	metrics := server.NewMetrics()
	env, err := openEnvironment(ctx, f, e, metrics)
	if err != nil {
		return err
	}
	defer env.Close()
	mcpHandler, err := newMCPHTTPHandler(ctx, env, e, mcpNames, mcpList)
	if err != nil {
		return err
	}
	srv := server.New(server.Options{
		Pipeline: env.pipeline, Registry: env.registry, Logger: log, Metrics: metrics,
		MaxBodyBytes: maxBody, BaseURL: baseURL, MCP: mcpHandler,
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another server running there? pass --addr)", addr, err)
	}
	tools := 0
	for _, c := range env.registry.Collections() {
		tools += len(c.Tools)
		log.Info("collection", "name", c.Name, "kind", c.Kind, "tools", len(c.Tools), "backend", c.Backend.Type, "validation", c.Policy.Validation)
	}
	log.Info("toolenv is serving", "url", "http://"+ln.Addr().String(), "collections", len(env.registry.Collections()), "tools", tools, "store", env.store.Path())
	fmt.Fprintf(e.stderr, "toolenv: serving %d tools on http://%s (POST /virtual, GET /collections, /mcp, /metrics); Ctrl-C stops\n", tools, ln.Addr())
	if err := guard.Serve(ctx, ln, srv, guard.Limits{Logger: log}); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("stopped")
	return nil
}
