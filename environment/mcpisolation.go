package environment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/mcpsource"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/server"
)

// parseIsolation reads SERVER=MODE values (mcp_sources.isolation).
func parseIsolation(vals []string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range vals {
		name, mode, ok := strings.Cut(v, "=")
		name, mode = strings.TrimSpace(name), strings.TrimSpace(mode)
		if !ok || name == "" {
			return nil, fmt.Errorf("%q: want SERVER=episode, SERVER=shared or SERVER=auto", v)
		}
		switch mode {
		case mcpsource.IsolationEpisode, mcpsource.IsolationShared, mcpsource.IsolationAuto:
		default:
			return nil, fmt.Errorf("%q: mode %q: want episode (a fresh instance per episode), shared (one for all) or auto", v, mode)
		}
		out[name] = mode
	}
	return out, nil
}

// isolationModes reads mcp_sources.isolation once.
func (env *Environment) isolationModes() (map[string]string, error) {
	env.mcp.mu.Lock()
	defer env.mcp.mu.Unlock()
	if env.mcp.modes == nil {
		m, err := parseIsolation(env.Config.MCPSources.Isolation)
		if err != nil {
			return nil, invalid("%s: %v", env.option("mcp_sources.isolation"), err)
		}
		env.mcp.modes = m
	}
	return env.mcp.modes, nil
}

// isolate applies the isolation flags to server s (a copy of it when it
// changes).
func (env *Environment) isolate(s *mcpsource.Server) (*mcpsource.Server, error) {
	modes, err := env.isolationModes()
	if err != nil {
		return nil, err
	}
	mode, ok := modes[s.Name]
	if !ok {
		return s, nil
	}
	cp := *s
	iso := mcpsource.Isolation{}
	if s.Isolation != nil {
		iso = *s.Isolation
	}
	iso.Mode = mode
	cp.Isolation = &iso
	if err := cp.Validate(); err != nil {
		return nil, invalid("%v", err)
	}
	return &cp, nil
}

// checkIsolationNames refuses mcp_sources.isolation values that name no
// MCP collection served.
func (env *Environment) checkIsolationNames() error {
	modes, err := env.isolationModes()
	if err != nil || len(modes) == 0 {
		return err
	}
	var served []string
	for _, c := range env.Registry.Collections() {
		if c.Kind == mcpsource.Kind {
			served = append(served, c.Name)
		}
	}
	for name := range modes {
		if !slices.Contains(served, name) {
			return invalid("%s: no MCP server is served as %q (the MCP collections are: %s)", env.option("mcp_sources.isolation"), name, strings.Join(served, ", "))
		}
	}
	return nil
}

// sharedEpisodeDir gives the shared instance of a server whose
// configuration names ${TOOLENV_EPISODE_DIR} a folder of its own (removed
// when the environment closes): calls without a session keep their state
// there.
func (env *Environment) sharedEpisodeDir(s *mcpsource.Server) (string, error) {
	if !s.NamesEpisodeDir() || !s.Stdio() {
		return "", nil
	}
	parent := env.Config.MCPSources.EpisodeDirs
	if parent != "" {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return "", fmt.Errorf("MCP server %s: %s: %w", s.Name, env.option("mcp_sources.episode_dirs"), err)
		}
	}
	dir, err := os.MkdirTemp(parent, "toolenv-mcp-"+s.Name+"-shared-")
	if err != nil {
		return "", fmt.Errorf("MCP server %s: a folder for its shared instance: %w", s.Name, err)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	env.closeMu.Lock()
	env.closers = append(env.closers, closerFunc(func() error { return os.RemoveAll(dir) }))
	env.closeMu.Unlock()
	return dir, nil
}

// mcpPool returns the pool of a server isolated per episode, nil for a
// shared one: the server's own isolation settings, the configuration's
// defaults for what they leave out.
func (env *Environment) mcpPool(s *mcpsource.Server, tools []*toolenv.Tool, opts mcpsource.Options) (*mcpsource.Pool, error) {
	mode := s.IsolationMode(tools)
	if mode != mcpsource.IsolationEpisode {
		return nil, nil
	}
	c := &env.Config.MCPSources
	iso := mcpsource.Isolation{}
	if s.Isolation != nil {
		iso = *s.Isolation
	}
	if s.Stdio() {
		if iso.Pool == 0 && c.Pool > 0 {
			iso.Pool = c.Pool
		}
		if iso.Max == 0 && c.MaxInstances > 0 {
			iso.Max = c.MaxInstances
		}
		if iso.Max > 0 && iso.Pool > iso.Max {
			iso.Pool = iso.Max
		}
		if iso.Dir == "" {
			iso.Dir = c.EpisodeDirs
		}
		iso.Keep = iso.Keep || c.KeepDirs
		if !s.NamesEpisodeDir() {
			env.log.Warn("each episode gets its own instance of this MCP server, run in a folder of its own; if the server keeps its state in a file elsewhere (a path in its env or args), point that path into ${TOOLENV_EPISODE_DIR} or the episodes will share it",
				"server", s.String())
		}
	} else if iso.Reset == nil {
		env.log.Warn("each episode gets an MCP session of its own on this HTTP server, with no reset configured: its state is fresh only if the server keeps state per session (configure isolation.reset otherwise)", "server", s.String())
	}
	opts.Once, opts.OnToolsChanged = true, nil
	p, err := mcpsource.NewPool(s, opts, iso)
	if err != nil {
		return nil, invalid("%v", err)
	}
	st := p.Isolation()
	env.log.Info("MCP server isolated per episode: each episode gets a fresh instance from a pool", "server", s.String(), "pool", st.Pool, "max", st.Max)
	return p, nil
}

// StartSession starts session id (an RL episode, an evaluation task) of
// collection coll from init: a backend that gives sessions states of
// their own (an MCP server isolated per episode) prepares the session's
// now, so that its first call does not wait; init's paths are resolved
// already. Backends that keep no such state ignore it, and refuse an
// init they cannot honour.
func (env *Environment) StartSession(ctx context.Context, coll, id string, init *toolenv.InitialState) error {
	if s, ok := invoke.BackendAs[interface {
		StartSession(ctx context.Context, id string, init *toolenv.InitialState) error
	}](env.Registry.Backend(coll)); ok {
		return s.StartSession(ctx, id, init)
	}
	return nil
}

// WarmSessions starts what backends keep ready for sessions of their
// own (the pools of MCP servers isolated per episode), so that the first
// episodes do not wait either: front-ends that serve episodes call it.
// It returns at once.
func (env *Environment) WarmSessions() {
	for _, c := range env.Registry.Collections() {
		if w, ok := invoke.BackendAs[interface{ Warm() }](env.Registry.Backend(c.Name)); ok {
			w.Warm()
		}
	}
}

// EndSession drops what every backend holds of session id: its task
// session's state, its MCP instances (server.DropSessions).
func (env *Environment) EndSession(id string) {
	server.DropSessions(env.Registry)(id)
}
