package mcpsource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/redact"
)

// The isolation modes of a server (Isolation.Mode).
const (
	// IsolationAuto (or "") isolates a server that changes state: a
	// stdio server with a tool that writes (toolenv.StateWrite, from the
	// annotations or --mcp-state), an HTTP server with a tool that writes
	// and a reset configured; the others are shared.
	IsolationAuto = "auto"
	// IsolationShared is one instance for every session: a stateless
	// server, or one whose shared state is wanted.
	IsolationShared = "shared"
	// IsolationEpisode gives each episode (session) a fresh instance: a
	// process of its own in a folder of its own for a stdio server, an
	// MCP session of its own after the configured reset for an HTTP one.
	IsolationEpisode = "episode"
)

// EpisodeDirVar is the variable that names an instance's own folder:
// ${TOOLENV_EPISODE_DIR} in a server's command, args, env or cwd is that
// folder, and the server gets it in its environment too. A server that
// keeps its state in files (the memory server's MEMORY_FILE_PATH, the
// filesystem server's root) is pointed into it.
const EpisodeDirVar = "TOOLENV_EPISODE_DIR"

// Defaults of Isolation.
const (
	DefaultPool         = 2  // stdio instances kept started and ready
	DefaultMaxInstances = 32 // stdio instances at once, ready and in use
	// An HTTP server is one server whatever toolenv does: unless its
	// configuration says it keeps state per MCP session (a larger max),
	// one episode at a time holds it, from its reset to its end.
	defaultHTTPPool = 1
	defaultHTTPMax  = 1
)

// Isolation says how a server's state is kept apart between episodes.
// Its JSON form is the "isolation" key of an mcpServers entry: a mode
// ("episode") or an object.
type Isolation struct {
	// Mode is IsolationAuto (""), IsolationShared or IsolationEpisode.
	Mode string `json:"mode,omitempty"`
	// Pool is how many instances are kept started and ready, so that an
	// episode does not wait for a start (default DefaultPool for a stdio
	// server, 1 for HTTP).
	Pool int `json:"pool,omitempty"`
	// Max bounds the instances at once, ready and in use (default
	// DefaultMaxInstances for stdio, 1 for HTTP); an episode beyond it
	// waits for one to end, at most the start timeout.
	Max int `json:"max,omitempty"`
	// Dir is the folder the instances' own folders are made in (default
	// the system's temporary folder). Stdio only.
	Dir string `json:"dir,omitempty"`
	// Keep keeps an episode's folder when it ends, for inspection (its
	// path is logged). Stdio only.
	Keep bool `json:"keep,omitempty"`
	// SeedBeforeStart starts a seeded episode's instance after its
	// initial files are copied, for servers that read their files only
	// when they start (the episode then waits for the start). By default
	// instances start ahead, in empty folders, and an episode's files are
	// copied in before its first call. Stdio only.
	SeedBeforeStart bool `json:"seed_before_start,omitempty"`
	// Reset is made before each episode, on the instance the episode
	// gets: what makes an HTTP server's state fresh.
	Reset *Reset `json:"reset,omitempty"`
}

// Reset is a request that makes a server's state fresh: an HTTP request
// (URL) or a call of one of the server's tools (Tool). Values may hold
// ${VAR} references, read from the environment.
type Reset struct {
	// URL is an HTTP endpoint that resets the server; the reset succeeds
	// on a 2xx answer.
	URL string `json:"url,omitempty"`
	// Method is the request's method (default POST).
	Method string `json:"method,omitempty"`
	// Headers are sent with the request.
	Headers map[string]string `json:"headers,omitempty"`
	// Body is the request's JSON body (none when absent).
	Body json.RawMessage `json:"body,omitempty"`
	// Tool is a tool of the server that resets it, called with Arguments
	// on the episode's own session; the reset fails when the tool answers
	// isError.
	Tool      string         `json:"tool,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// UnmarshalJSON reads a mode ("episode") or an object; unknown keys of
// the object are an error naming them.
func (iso *Isolation) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var mode string
		if err := json.Unmarshal(data, &mode); err != nil {
			return err
		}
		*iso = Isolation{Mode: mode}
		return nil
	}
	type plain Isolation
	var p plain
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("isolation: %v (want \"episode\", \"shared\", \"auto\" or {\"mode\", \"pool\", \"max\", \"dir\", \"keep\", \"seed_before_start\", \"reset\"})", typeError(err))
	}
	*iso = Isolation(p)
	return nil
}

// validate checks iso for server s.
func (iso *Isolation) validate(s *Server) error {
	if iso == nil {
		return nil
	}
	where := "MCP server " + s.Name + ": isolation"
	switch iso.Mode {
	case "", IsolationAuto, IsolationShared, IsolationEpisode:
	default:
		return fmt.Errorf("%s: mode %q: want episode (a fresh instance per episode), shared (one for all) or auto (episode when the server has tools that write)", where, iso.Mode)
	}
	if iso.Pool < 0 || iso.Max < 0 {
		return fmt.Errorf("%s: pool and max count instances: give 0 (the default) or more", where)
	}
	if iso.Max > 0 && iso.Pool > iso.Max {
		return fmt.Errorf("%s: pool %d is more than max %d: the ready instances count within max", where, iso.Pool, iso.Max)
	}
	if !s.Stdio() && (iso.Dir != "" || iso.Keep || iso.SeedBeforeStart) {
		return fmt.Errorf("%s: dir, keep and seed_before_start are about the folders of stdio servers' instances; %s is an HTTP server", where, s.Name)
	}
	if r := iso.Reset; r != nil {
		switch {
		case r.URL != "" && r.Tool != "":
			return fmt.Errorf("%s: reset: give a url (an HTTP request) or a tool (a call of the server's tool), not both", where)
		case r.URL == "" && r.Tool == "":
			return fmt.Errorf("%s: reset: give a url (an HTTP request that resets the server) or a tool (the server's tool that resets it)", where)
		case r.Tool != "" && (r.Method != "" || len(r.Headers) > 0 || len(r.Body) > 0):
			return fmt.Errorf("%s: reset: method, headers and body go with a url; a tool takes arguments", where)
		case r.URL == "" && len(r.Arguments) > 0 && r.Tool == "":
			return fmt.Errorf("%s: reset: arguments go with a tool", where)
		}
		if r.URL != "" {
			u, err := url.Parse(expandNoEnv(r.URL))
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("%s: reset url %s: want http:// or https:// and a host", where, redact.URL(r.URL))
			}
			switch strings.ToUpper(r.Method) {
			case "", "POST", "PUT", "DELETE", "PATCH", "GET":
			default:
				return fmt.Errorf("%s: reset method %q: want POST (the default), PUT, DELETE, PATCH or GET", where, r.Method)
			}
			if len(r.Body) > 0 && !json.Valid(r.Body) {
				return fmt.Errorf("%s: reset body is not JSON", where)
			}
		}
	}
	return nil
}

// IsolationMode is the mode s is served in, given its collection's tools
// (their states after overrides): Isolation.Mode when set, else
// IsolationAuto's rule.
func (s *Server) IsolationMode(tools []*toolenv.Tool) string {
	if s.Isolation != nil && s.Isolation.Mode != "" && s.Isolation.Mode != IsolationAuto {
		return s.Isolation.Mode
	}
	writes := false
	for _, t := range tools {
		writes = writes || t.State() == toolenv.StateWrite
	}
	switch {
	case !writes:
		return IsolationShared
	case s.Stdio(), s.Isolation != nil && s.Isolation.Reset != nil:
		return IsolationEpisode
	}
	return IsolationShared
}

// NamesEpisodeDir reports whether s's configuration names
// ${TOOLENV_EPISODE_DIR}: its instances then keep their state in their own
// folders.
func (s *Server) NamesEpisodeDir() bool {
	ref := func(v string) bool {
		for _, m := range refRE.FindAllStringSubmatch(v, -1) {
			if m[1] == EpisodeDirVar {
				return true
			}
		}
		return false
	}
	if ref(s.Command) || ref(s.Dir) {
		return true
	}
	for _, a := range s.Args {
		if ref(a) {
			return true
		}
	}
	for _, v := range s.Env {
		if ref(v) {
			return true
		}
	}
	return false
}

// withDefaults returns iso's settings with the defaults for s filled in.
func (iso *Isolation) withDefaults(s *Server) Isolation {
	var out Isolation
	if iso != nil {
		out = *iso
	}
	pool, maxN := DefaultPool, DefaultMaxInstances
	if !s.Stdio() {
		pool, maxN = defaultHTTPPool, defaultHTTPMax
	}
	if out.Max == 0 {
		out.Max = max(maxN, out.Pool)
	}
	if out.Pool == 0 {
		out.Pool = min(pool, out.Max)
	}
	return out
}

// episodeGetenv reads ${TOOLENV_EPISODE_DIR} as dir, the rest with
// getenv.
func episodeGetenv(getenv func(string) string, dir string) func(string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if dir == "" {
		return getenv
	}
	return func(name string) string {
		if name == EpisodeDirVar {
			return dir
		}
		return getenv(name)
	}
}

// withEpisodeDir makes dir the server's working folder (unless its
// configuration names one) and gives it TOOLENV_EPISODE_DIR. Since the
// server then runs elsewhere than toolenv, a relative command path, and
// relative args that name files in toolenv's folder (a script,
// node_modules/.bin/...), are made absolute first.
func (s *Server) withEpisodeDir(dir string) {
	if dir == "" || !s.Stdio() {
		return
	}
	if s.Dir == "" {
		if strings.ContainsRune(s.Command, filepath.Separator) && !filepath.IsAbs(s.Command) {
			if abs, err := filepath.Abs(s.Command); err == nil {
				s.Command = abs
			}
		}
		args := make([]string, len(s.Args))
		for i, a := range s.Args {
			args[i] = a
			if a == "" || strings.HasPrefix(a, "-") || filepath.IsAbs(a) {
				continue
			}
			if _, err := os.Stat(a); err == nil {
				if abs, err := filepath.Abs(a); err == nil {
					args[i] = abs
				}
			}
		}
		s.Args = args
		s.Dir = dir
	}
	env := make(map[string]string, len(s.Env)+1)
	for k, v := range s.Env {
		env[k] = v
	}
	env[EpisodeDirVar] = dir
	s.Env = env
}

// redacted returns a copy of iso fit to print: the reset's header values
// that are not ${VAR} references and its URL's secrets hidden.
func (iso *Isolation) redacted() *Isolation {
	if iso == nil {
		return nil
	}
	c := *iso
	if r := iso.Reset; r != nil {
		rc := *r
		rc.Headers = redactValues(r.Headers)
		if rc.URL != "" {
			rc.URL = redact.URL(rc.URL)
		}
		c.Reset = &rc
	}
	return &c
}
