package environment

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolenv/toolenv/mapping/embed"
	"github.com/toolenv/toolenv/server"
	"github.com/toolenv/toolenv/server/guard"
	"github.com/toolenv/toolenv/server/session"
)

// Handler returns the HTTP handler of every front-end over the pipeline:
// /virtual, REST, listings, OpenAPI, /mcp (streamable HTTP), /metrics and
// /healthz (see package server). Mount it on any server: the environment
// never listens itself. It is built once, on the first call.
func (env *Environment) Handler() (http.Handler, error) {
	env.frontends()
	return env.handler, env.frontErr
}

// Guard returns the checks every request to Handler passes (Host,
// Origin, bearer tokens from Config.Server.AuthTokenEnv, content type);
// the program that listens asks guard.RequireToken before it serves a
// non-loopback address. It is built with Handler.
func (env *Environment) Guard() (*guard.Guard, error) {
	env.frontends()
	return env.guard, env.frontErr
}

// MCPServer returns the MCP server offering every tool (hidden tools are
// callable but not listed), as Config.MCP names them. Handler serves it at
// /mcp; run it over stdio with its Run method and an mcp.IOTransport. It
// is built once, on the first call.
func (env *Environment) MCPServer() (*mcp.Server, error) {
	env.frontends()
	return env.mcpServer, env.frontErr
}

// Ready tells the environment that its server is ready (listening, or
// about to read its first MCP message): work kept out of the start-up
// begins in the background. Today that is the search_tools index, whose
// build at 50,000 tools takes seconds of CPU; a search made before it is
// done waits for it (never an answer from a partial index). Without Ready
// the index is built at the first search. Call it after Handler or
// MCPServer; calling it again does nothing more.
func (env *Environment) Ready() {
	env.frontends()
	if env.search != nil {
		env.search.Eager()
	}
}

// toolSearch is the index behind the MCP search_tools tool: its files
// sit in a "search" folder beside the store file (reused while the tools
// stay the same), or in a temporary folder removed by Close when the store
// is not a file.
func (env *Environment) toolSearch() (*server.IndexSearch, error) {
	dir := ""
	if p := env.Config.Store; p != "" && p != ":memory:" && !strings.Contains(p, "://") {
		dir = filepath.Join(filepath.Dir(p), "search")
	} else {
		tmp, err := os.MkdirTemp("", "toolenv-search-")
		if err != nil {
			return nil, fmt.Errorf("tool search index: %w", err)
		}
		env.closers = append(env.closers, closerFunc(func() error { return os.RemoveAll(tmp) }))
		dir = tmp
	}
	opts := server.IndexSearchOptions{Dir: dir, Logger: env.log}
	if c := &env.Config.MCP; c.EmbedURL != "" {
		emb, err := embed.New(embed.Config{URL: c.EmbedURL, Model: c.EmbedModel, APIKey: env.secret("", c.EmbedKeyEnv), Timeout: time.Minute, Logger: env.log})
		if err != nil {
			return nil, invalid("%s: %v", env.option("mcp.embed_url"), err)
		}
		opts.Embedder = emb
	}
	search := server.NewIndexSearch(opts)
	env.closers = append(env.closers, search)
	return search, nil
}

// closerFunc is a function as an io.Closer.
type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// frontends builds the MCP server and the HTTP handler, once.
func (env *Environment) frontends() {
	env.frontOnce.Do(func() {
		c := &env.Config
		naming, err := server.ParseMCPNaming(c.MCP.Names)
		if err != nil {
			env.frontErr = invalid("%s: %v", env.option("mcp.names"), err)
			return
		}
		search, err := env.toolSearch()
		if err != nil {
			env.frontErr = err
			return
		}
		env.search = search
		tokens, err := guard.TokensFromEnv(env.getenv, c.Server.AuthTokenEnv)
		if err != nil {
			env.frontErr = invalid("%s: %v", env.option("server.auth_token_env"), err)
			return
		}
		env.guard, err = guard.New(guard.Policy{Tokens: tokens, AllowedHosts: c.Server.AllowedHosts, Open: []string{"/healthz"}, Logger: env.log})
		if err != nil {
			env.frontErr = invalid("%s: %v", env.option("server.allowed_hosts"), err)
			return
		}
		drop := server.DropSessions(env.Registry)
		var sessions server.SessionIssuer = session.New(session.Options{Max: c.Server.MaxSessions, ClientNamed: c.Server.ClientSessionIDs, OnEnd: drop,
			Logger: env.log, OnEvict: func(n int) { env.Metrics.SessionsEvicted("task", n) }, MaxPerClient: c.Server.MaxSessionsPerClient})
		if env.Sessions != nil {
			sessions = env.Sessions // issued by any replica, honoured by all
		}
		env.mcpServer, err = server.NewMCPServer(server.MCPOptions{
			Pipeline: env.Pipeline, Registry: env.Registry, Logger: env.log, Naming: naming, Version: c.Version, Search: search,
			PageSize: c.MCP.PageSize, SearchAbove: c.MCP.SearchAbove, Sessions: sessions, Sources: env.mcpProxySources(),
		})
		if err != nil {
			env.frontErr = err
			return
		}
		mcpHandler := server.NewMCPHandler(env.mcpServer, server.MCPHTTPOptions{Logger: env.log, MaxSessions: c.Server.MaxSessions, OnSessionEnd: drop,
			MaxBodyBytes:         c.Server.MaxBody,
			OnEvict:              func(n int) { env.Metrics.SessionsEvicted("mcp", n) },
			MaxSessionsPerClient: c.Server.MaxSessionsPerClient, MaxStreamsPerClient: c.Server.MaxStreamsPerClient,
			StreamIdle: c.Server.StreamIdle, StreamMaxLifetime: c.Server.StreamMaxLifetime})
		env.handler = server.New(server.Options{
			Pipeline: env.Pipeline, Registry: env.Registry, Logger: env.log, Metrics: env.Metrics,
			MaxBodyBytes: c.Server.MaxBody, BaseURL: c.Server.BaseURL, MCP: mcpHandler,
			Guard: env.guard, Sessions: sessions, Recorded: env.Store, Policy: env.PolicyOf,
		})
	})
}
