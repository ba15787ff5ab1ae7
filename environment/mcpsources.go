package environment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/mcpsource"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/store"
)

// mcpSources holds the running MCP servers' clients, by collection name.
type mcpSources struct {
	mu      sync.Mutex
	clients map[string]*mcpsource.Client
	states  map[string]map[string]string // server → tool → state override
	lists   map[string][]*mcp.Tool       // server → the tool list served (live or recorded)
	modes   map[string]string            // server → isolation mode (mcp_sources.isolation)
	opts    map[string]mcpsource.Options // server → its client's options, for its pool
}

// MCPToolsKey is the tool ID under which the store keeps the last tool
// list an MCP server gave, so that its collection is served (from the
// recordings and the simulator) when the server cannot be started.
func MCPToolsKey(server string) string { return server + "/tools/list" }

// loadMCPSources starts the MCP servers the configuration names and reads
// their tool lists, and reads the saved tool lists; each becomes a
// collection.
func (env *Environment) loadMCPSources(ctx context.Context) ([]loadedSource, error) {
	c := &env.Config.MCPSources
	if len(c.Servers) == 0 && len(c.Config) == 0 && len(c.Tools) == 0 {
		if len(c.State) > 0 || len(c.Headers) > 0 {
			return nil, invalid("%s and %s need an MCP server (%s or %s)", env.option("mcp_sources.state"), env.option("mcp_sources.headers"), env.option("mcp_sources.servers"), env.option("mcp_sources.config"))
		}
		return nil, nil
	}
	servers, err := env.mcpServers()
	if err != nil {
		return nil, err
	}
	for i, s := range servers {
		if servers[i], err = env.isolate(s); err != nil {
			return nil, err
		}
	}
	states, err := parseStateOverrides(c.State)
	if err != nil {
		return nil, invalid("%s: %v", env.option("mcp_sources.state"), err)
	}
	env.mcp.states = states
	env.mcp.clients = map[string]*mcpsource.Client{}
	env.mcp.lists = map[string][]*mcp.Tool{}
	env.mcp.opts = map[string]mcpsource.Options{}
	opts := mcpsource.Options{Logger: env.log, Getenv: env.getenv, StartTimeout: c.StartTimeout, MaxMessageBytes: c.MaxMessageBytes,
		Recordings: mcpRecordings{env.Store}}
	// Start every server at once, then wait for each.
	for _, s := range servers {
		o := opts
		name := s.Name
		env.mcp.opts[name] = o
		o.OnToolsChanged = func(tools []*mcp.Tool) { env.mcpToolsChanged(name, tools) }
		if o.EpisodeDir, err = env.sharedEpisodeDir(s); err != nil {
			return nil, err
		}
		cl, err := mcpsource.Start(ctx, s, o)
		if err != nil {
			return nil, invalid("%v", err)
		}
		env.mcp.clients[name] = cl
		env.closers = append(env.closers, cl)
	}
	var out []loadedSource
	for _, s := range servers {
		cl := env.mcp.clients[s.Name]
		tools, err := cl.Ready(ctx)
		if err != nil {
			recorded, when, rerr := env.recordedMCPTools(ctx, s.Name)
			if rerr != nil || recorded == nil {
				msg := fmt.Sprintf("MCP server %s: %v", s, err)
				if rerr != nil {
					msg += fmt.Sprintf("; the store cannot be read for its recorded tool list: %v", rerr)
				} else {
					msg += "; no tool list of it is recorded in the store, so it cannot be served without it (start it once with the server reachable)"
				}
				return nil, errors.New(msg)
			}
			env.log.Warn("MCP server not reachable: serving the tool list recorded in the store; calls are answered from recordings and the simulator until it returns",
				"server", s.String(), "recorded", when.Format(time.RFC3339), "err", err)
			tools = recorded
		} else if err := env.recordMCPTools(ctx, s.Name, tools); err != nil {
			env.log.Warn("the MCP server's tool list could not be recorded in the store", "server", s.Name, "err", err)
		}
		env.mcp.lists[s.Name] = tools
		col, err := env.mcpCollection(s.Name, tools, mcpsource.CollectionOptions{Server: s})
		if err != nil {
			return nil, err
		}
		out = append(out, loadedSource{col: col, from: "MCP server " + s.String()})
		env.log.Info("loaded MCP server", "server", s.String(), "collection", col.Name, "tools", len(col.Tools))
	}
	for _, path := range c.Tools {
		lists, err := mcpsource.ReadToolsFile(path)
		if err != nil {
			return nil, invalid("%s: %v", env.option("mcp_sources.tools"), err)
		}
		for _, l := range lists {
			col, err := env.mcpCollection(l.Name, l.Tools, mcpsource.CollectionOptions{Category: l.Category, Description: l.Description})
			if err != nil {
				return nil, err
			}
			out = append(out, loadedSource{col: col, from: "MCP tools " + path})
			env.log.Info("loaded saved MCP tools (no server: answered from the cache and the simulator)", "file", path, "collection", col.Name, "tools", len(col.Tools))
		}
	}
	return out, nil
}

// mcpCollection makes a server's collection, logging the tools left out.
func (env *Environment) mcpCollection(name string, tools []*mcp.Tool, opts mcpsource.CollectionOptions) (*toolenv.Collection, error) {
	opts.State = env.mcp.states[name]
	col, skipped, err := mcpsource.NewCollection(name, tools, opts)
	if err != nil {
		return nil, invalid("%v", err)
	}
	for _, s := range skipped {
		env.log.Warn("MCP tool left out", "server", name, "tool", s.Tool, "reason", s.Reason)
	}
	return col, nil
}

// mcpServers reads the servers the flags and mcpServers documents name,
// with their headers.
func (env *Environment) mcpServers() ([]*mcpsource.Server, error) {
	c := &env.Config.MCPSources
	var servers []*mcpsource.Server
	for _, v := range c.Servers {
		s, err := mcpsource.ParseFlag(v)
		if err != nil {
			return nil, invalid("%v", err)
		}
		servers = append(servers, s)
	}
	for _, v := range c.Config {
		data := []byte(v)
		if t := strings.TrimSpace(v); !strings.HasPrefix(t, "{") {
			var err error
			if data, err = os.ReadFile(v); err != nil {
				return nil, invalid("%s: %v", env.option("mcp_sources.config"), err)
			}
		}
		ss, err := mcpsource.ParseConfig(data)
		if err != nil {
			return nil, invalid("%s %s: %v", env.option("mcp_sources.config"), shortValue(v), err)
		}
		servers = append(servers, ss...)
	}
	byName := map[string]*mcpsource.Server{}
	for _, s := range servers {
		if byName[s.Name] != nil {
			return nil, invalid("two MCP servers are named %s: each names its collection, so give them different names", s.Name)
		}
		byName[s.Name] = s
	}
	for _, h := range c.Headers {
		name, rest, ok := strings.Cut(h, "=")
		key, val, ok2 := strings.Cut(rest, ":")
		if !ok || !ok2 || strings.TrimSpace(key) == "" {
			return nil, invalid("%s %q: want NAME=Header: value", env.option("mcp_sources.headers"), shortValue(h))
		}
		s := byName[strings.TrimSpace(name)]
		if s == nil || s.URL == "" {
			return nil, invalid("%s: no MCP server over HTTP is named %q", env.option("mcp_sources.headers"), strings.TrimSpace(name))
		}
		if s.Headers == nil {
			s.Headers = map[string]string{}
		}
		s.Headers[strings.TrimSpace(key)] = strings.TrimSpace(val)
	}
	for _, s := range servers {
		if keys := s.Secrets(); len(keys) > 0 {
			env.log.Warn("an MCP server's configuration holds values that look like credentials written inline: write them as ${VAR} so that they stay in the environment", "server", s.Name, "keys", strings.Join(keys, ", "))
		}
	}
	return servers, nil
}

// shortValue cuts a value for a message (inline JSON may be long).
func shortValue(v string) string {
	if len(v) > 60 {
		return v[:60] + "…"
	}
	return v
}

// parseStateOverrides reads SERVER/TOOL=STATE values.
func parseStateOverrides(vals []string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, v := range vals {
		key, st, ok := strings.Cut(v, "=")
		server, tool, ok2 := strings.Cut(key, "/")
		if !ok || !ok2 || server == "" || tool == "" {
			return nil, fmt.Errorf("%q: want SERVER/TOOL=STATE (stateless, read or write)", v)
		}
		st = strings.TrimSpace(st)
		switch st {
		case toolenv.StateStateless, toolenv.StateRead, toolenv.StateWrite:
		default:
			return nil, fmt.Errorf("%q: state %q: want stateless, read or write", v, st)
		}
		if out[server] == nil {
			out[server] = map[string]string{}
		}
		out[server][tool] = st
	}
	return out, nil
}

// recordMCPTools keeps a server's tool list in the store.
func (env *Environment) recordMCPTools(ctx context.Context, server string, tools []*mcp.Tool) error {
	body, err := json.Marshal(map[string]any{"tools": tools})
	if err != nil {
		return err
	}
	_, err = env.Store.PutMany(ctx, []*store.Entry{{Tool: MCPToolsKey(server), Args: "{}", Status: toolenv.StatusOK, Body: body, Origin: string(toolenv.SourceUpstream)}}, true)
	return err
}

// recordedMCPTools reads the tool list the store keeps for a server; nil
// when none.
func (env *Environment) recordedMCPTools(ctx context.Context, server string) ([]*mcp.Tool, time.Time, error) {
	e, ok, err := env.Store.Get(ctx, MCPToolsKey(server), "{}")
	if err != nil || !ok {
		return nil, time.Time{}, err
	}
	var res struct {
		Tools []*mcp.Tool `json:"tools"`
	}
	if err := json.Unmarshal(e.Body, &res); err != nil {
		return nil, time.Time{}, fmt.Errorf("the recorded tool list of %s cannot be read: %w", server, err)
	}
	if res.Tools == nil {
		res.Tools = []*mcp.Tool{}
	}
	return res.Tools, e.Created, nil
}

// mcpToolsChanged serves a server's new tool list: the collection is
// replaced (MCP clients of toolenv are told), the backend kept.
func (env *Environment) mcpToolsChanged(server string, tools []*mcp.Tool) {
	env.reloadMu.Lock()
	defer env.reloadMu.Unlock()
	ctx := context.Background()
	old := env.Registry.Collection(server)
	backend := env.Registry.Backend(server)
	if old == nil || backend == nil || old.Kind != mcpsource.Kind {
		return
	}
	var cfg mcpsource.BackendConfig
	_ = json.Unmarshal(old.Backend.Config, &cfg)
	env.mcp.mu.Lock()
	cl := env.mcp.clients[server]
	env.mcp.mu.Unlock()
	opts := mcpsource.CollectionOptions{Description: old.Description}
	if cl != nil {
		opts.Server = cl.Server()
	}
	col, err := env.mcpCollection(server, tools, opts)
	if err != nil {
		env.log.Warn("the MCP server's new tool list cannot be served; keeping the last one", "server", server, "err", err)
		return
	}
	if _, err := env.Registry.Replace(col, backend); err != nil {
		env.log.Warn("the MCP server's new tool list cannot be served; keeping the last one", "server", server, "err", err)
		return
	}
	env.mcp.mu.Lock()
	env.mcp.lists[server] = tools
	env.mcp.mu.Unlock()
	if err := env.recordMCPTools(ctx, server, tools); err != nil {
		env.log.Warn("the MCP server's tool list could not be recorded in the store", "server", server, "err", err)
	}
	env.log.Info("serving the MCP server's new tool list", "server", server, "tools", len(col.Tools))
}

// newMCPBackend builds an MCP collection's backend: the server loaded
// with it, else the one its collection.json names (started now), else
// none (documentation only: the cache and the simulator).
func (env *Environment) newMCPBackend(ctx context.Context, c *toolenv.Collection) (toolenv.Handler, error) {
	var cfg mcpsource.BackendConfig
	if len(c.Backend.Config) > 0 {
		if err := json.Unmarshal(c.Backend.Config, &cfg); err != nil {
			return nil, invalid("collection %s: backend config: %v", c.Name, err)
		}
	}
	env.mcp.mu.Lock()
	cl := env.mcp.clients[c.Name]
	copts, ok := env.mcp.opts[c.Name]
	env.mcp.mu.Unlock()
	if !ok {
		copts = mcpsource.Options{Logger: env.log, Getenv: env.getenv,
			StartTimeout: env.Config.MCPSources.StartTimeout, MaxMessageBytes: env.Config.MCPSources.MaxMessageBytes,
			Recordings: mcpRecordings{env.Store}}
	}
	if cl == nil && cfg.Server != nil {
		s := *cfg.Server
		s.Name = c.Name
		if keys := s.Secrets(); len(keys) > 0 {
			env.log.Warn("the collection's MCP server configuration has hidden values (written as xxxxx); the server may refuse toolenv", "collection", c.Name, "keys", strings.Join(keys, ", "))
		}
		srv, err := env.isolate(&s)
		if err != nil {
			return nil, err
		}
		o := copts
		if o.EpisodeDir, err = env.sharedEpisodeDir(srv); err != nil {
			return nil, err
		}
		cl, err = mcpsource.Start(ctx, srv, o)
		if err != nil {
			return nil, invalid("collection %s: %v", c.Name, err)
		}
		env.closeMu.Lock()
		env.closers = append(env.closers, cl)
		env.closeMu.Unlock()
	}
	var pool *mcpsource.Pool
	if cl != nil {
		var err error
		if pool, err = env.mcpPool(cl.Server(), c.Tools, copts); err != nil {
			return nil, err
		}
	}
	cfgv := &env.Config
	vopts := virtual.Options{
		Model: cfgv.Simulator.Model, Prompt: cfgv.Simulator.Prompt,
		SimulatorBudget: cfgv.Simulator.Budget, OnSimulatorFailure: cfgv.Simulator.OnFailure,
		Breakers: virtual.BreakerOptions{Failures: cfgv.Breakers.Failures, Cooldown: cfgv.Breakers.Cooldown},
		Examples: env.Store, Tools: c.Tools, Logger: env.log,
	}
	if env.llm != nil {
		vopts.LLM = env.llm
	}
	b, err := mcpsource.NewBackend(mcpsource.BackendOptions{Client: cl, UpstreamTimeout: cfgv.Upstream.Timeout, Virtual: vopts,
		FailOnServerError: cfgv.MCPSources.OnFailure == "error", Pool: pool})
	if err != nil {
		if pool != nil {
			pool.Close()
		}
		return nil, invalid("%v", err)
	}
	return b, nil
}

// MCPClients returns the clients of the MCP servers served, by
// collection name.
func (env *Environment) MCPClients() map[string]*mcpsource.Client {
	env.mcp.mu.Lock()
	defer env.mcp.mu.Unlock()
	out := make(map[string]*mcpsource.Client, len(env.mcp.clients))
	for k, v := range env.mcp.clients {
		out[k] = v
	}
	return out
}

// MCPTools returns the tool list an MCP server's collection was made
// from: the server's last tools/list, or the one recorded in the store
// when the server could not be reached. Nil for a name that is not an
// MCP server served.
func (env *Environment) MCPTools(server string) []*mcp.Tool {
	env.mcp.mu.Lock()
	defer env.mcp.mu.Unlock()
	return env.mcp.lists[server]
}
