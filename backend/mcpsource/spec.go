package mcpsource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/google/shlex"
	"github.com/toolenv/toolenv/internal/redact"
)

// Server says how to reach one MCP server: a command toolenv starts and
// speaks to over stdio, or the URL of a streamable HTTP endpoint. Its JSON
// form is an entry of the mcpServers object of Claude Desktop and Cursor
// ({"command", "args", "env"} or {"url", "headers"}).
type Server struct {
	// Name names the server; the collection of its tools takes it.
	Name string `json:"-"`
	// Command and Args start a stdio server.
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env is added to the environment of a stdio server (which inherits
	// toolenv's own).
	Env map[string]string `json:"env,omitempty"`
	// Dir is the stdio server's working folder; "" means toolenv's.
	Dir string `json:"cwd,omitempty"`
	// URL is a streamable HTTP endpoint (http:// or https://).
	URL string `json:"url,omitempty"`
	// Headers are sent with every HTTP request (an Authorization header
	// with a token, written "Bearer ${TOKEN}" so the token stays in the
	// environment).
	Headers map[string]string `json:"headers,omitempty"`
	// Type is what some clients write beside the url or command
	// ("stdio", "http", "streamable-http", "streamableHttp"); it is checked
	// against them. "sse" (the deprecated HTTP+SSE transport) is refused.
	Type string `json:"type,omitempty"`
	// Isolation says whether episodes share the server's state or each
	// gets a fresh instance (nil: IsolationAuto with the defaults).
	Isolation *Isolation `json:"isolation,omitempty"`
}

// Stdio reports whether the server is a command toolenv starts.
func (s *Server) Stdio() bool { return s.Command != "" }

// nameRE is what a server name may be: it names a collection.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// Validate checks s is complete: a valid name and exactly one of a
// command and an HTTP(S) URL.
func (s *Server) Validate() error {
	if !nameRE.MatchString(s.Name) {
		return fmt.Errorf("MCP server name %q: use letters, digits, '_', '.' and '-' (at most 64, starting with a letter or digit); it names the collection", s.Name)
	}
	switch {
	case s.Command != "" && s.URL != "":
		return fmt.Errorf("MCP server %s: give a command or a url, not both", s.Name)
	case s.Command == "" && s.URL == "":
		return fmt.Errorf("MCP server %s: give a command (a stdio server toolenv starts) or a url (a streamable HTTP endpoint)", s.Name)
	}
	switch strings.ToLower(s.Type) {
	case "", "stdio", "http", "streamable-http", "streamablehttp", "streamable_http":
	case "sse":
		return fmt.Errorf("MCP server %s: type sse (the HTTP+SSE transport of protocol 2024-11-05) is not supported: use its streamable HTTP endpoint (often the same URL ending in /mcp instead of /sse)", s.Name)
	default:
		return fmt.Errorf("MCP server %s: unknown type %q (want stdio or http)", s.Name, s.Type)
	}
	if s.URL != "" {
		u, err := url.Parse(expandNoEnv(s.URL))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("MCP server %s: url %s: want http:// or https:// and a host", s.Name, redact.URL(s.URL))
		}
		if strings.EqualFold(s.Type, "stdio") {
			return fmt.Errorf("MCP server %s: type stdio needs a command, not a url", s.Name)
		}
	}
	if s.Command != "" && s.Type != "" && !strings.EqualFold(s.Type, "stdio") {
		return fmt.Errorf("MCP server %s: type %s needs a url, not a command", s.Name, s.Type)
	}
	return s.Isolation.validate(s)
}

// String describes s for logs and messages, secrets hidden: the command
// line (env values and headers left out), or the URL redacted.
func (s *Server) String() string {
	if s.URL != "" {
		return s.Name + "=" + redact.URL(s.URL)
	}
	return s.Name + "=" + redact.Text(strings.Join(append([]string{s.Command}, s.Args...), " "))
}

// Redacted returns a copy of s fit to print or write into a file another
// machine reads: env and header values that are not ${VAR} references
// hidden, the URL's secrets hidden.
func (s *Server) Redacted() *Server {
	c := *s
	c.Env = redactValues(s.Env)
	c.Headers = redactValues(s.Headers)
	if c.URL != "" {
		c.URL = redact.URL(c.URL)
	}
	c.Isolation = s.Isolation.redacted()
	return &c
}

// Secrets reports the env and header keys of s whose values are written
// inline rather than as ${VAR} references.
func (s *Server) Secrets() []string {
	var out []string
	maps := []map[string]string{s.Env, s.Headers}
	if s.Isolation != nil && s.Isolation.Reset != nil {
		maps = append(maps, s.Isolation.Reset.Headers)
	}
	for _, m := range maps {
		for k, v := range m {
			if !onlyRefs(v) {
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

func redactValues(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if onlyRefs(v) {
			out[k] = v
		} else {
			out[k] = redact.Mask
		}
	}
	return out
}

// refRE is a ${VAR} or ${env:VAR} reference.
var refRE = regexp.MustCompile(`\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}`)

// onlyRefs reports whether v holds no literal text that could be a
// secret: it is empty, or its secret part is a ${VAR} reference
// ("Bearer ${TOKEN}").
func onlyRefs(v string) bool {
	if v == "" || strings.Contains(v, "${"+EpisodeDirVar+"}") {
		return true // a path in an instance's own folder
	}
	rest := refRE.ReplaceAllString(v, "")
	if rest == v {
		return false
	}
	// What is left is a scheme word ("Bearer ", "token ") or nothing.
	return len(strings.TrimSpace(rest)) <= 16 && !strings.ContainsAny(strings.TrimSpace(rest), " \t")
}

// Expand replaces ${VAR} and ${env:VAR} in v with getenv(VAR). It
// reports the variables that are not set (getenv returned "").
func Expand(v string, getenv func(string) string) (string, []string) {
	var missing []string
	out := refRE.ReplaceAllStringFunc(v, func(m string) string {
		name := refRE.FindStringSubmatch(m)[1]
		val := getenv(name)
		if val == "" {
			missing = append(missing, name)
		}
		return val
	})
	return out, missing
}

// expandNoEnv replaces references with a placeholder, to check the shape
// of a value without reading the environment.
func expandNoEnv(v string) string { return refRE.ReplaceAllString(v, "x") }

// resolved returns a copy of s with every reference in its command,
// args, env, URL and headers expanded by getenv; an unset variable is an
// error naming it.
func (s *Server) resolved(getenv func(string) string) (*Server, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	c := *s
	var missing []string
	exp := func(v string) string {
		out, m := Expand(v, getenv)
		missing = append(missing, m...)
		return out
	}
	c.Command = exp(s.Command)
	c.Args = make([]string, len(s.Args))
	for i, a := range s.Args {
		c.Args[i] = exp(a)
	}
	c.URL = exp(s.URL)
	c.Dir = exp(s.Dir)
	expMap := func(m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[k] = exp(v)
		}
		return out
	}
	c.Env, c.Headers = expMap(s.Env), expMap(s.Headers)
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("MCP server %s: environment variable %s is not set (its configuration names it as ${%s})", s.Name, strings.Join(dedupe(missing), ", "), missing[0])
	}
	return &c, nil
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// ParseFlag reads the value of --mcp-server: NAME=URL for a streamable
// HTTP endpoint, NAME=COMMAND ARGS... for a stdio server (split as a
// POSIX shell splits words: quotes and backslashes, no expansions).
func ParseFlag(v string) (*Server, error) {
	name, rest, ok := strings.Cut(v, "=")
	name, rest = strings.TrimSpace(name), strings.TrimSpace(rest)
	if !ok || name == "" || rest == "" {
		return nil, fmt.Errorf("--mcp-server %q: want NAME=URL (streamable HTTP) or NAME=COMMAND [ARGS...] (a stdio server), e.g. memory='npx -y @modelcontextprotocol/server-memory'", redact.Text(v))
	}
	s := &Server{Name: name}
	if l := strings.ToLower(rest); strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
		s.URL = rest
	} else {
		words, err := shlex.Split(rest)
		if err != nil || len(words) == 0 {
			return nil, fmt.Errorf("--mcp-server %s: the command line does not split into words (%v): check its quotes", name, err)
		}
		s.Command, s.Args = words[0], words[1:]
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseConfig reads an mcpServers document: {"mcpServers": {NAME:
// {"command", "args", "env"} | {"url", "headers"}}} as Claude Desktop
// and Cursor write it (VS Code's "servers" key is read too). The servers
// come back sorted by name. Entries that are switched off ("disabled":
// true) are left out.
func ParseConfig(data []byte) ([]*Server, error) {
	var doc map[string]json.RawMessage
	if err := strictDecode(data, &doc); err != nil {
		return nil, fmt.Errorf("mcpServers document: %w", err)
	}
	raw, ok := doc["mcpServers"]
	if !ok {
		raw, ok = doc["servers"]
	}
	if !ok {
		keys := make([]string, 0, len(doc))
		for k := range doc {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return nil, fmt.Errorf("mcpServers document: no \"mcpServers\" object (its keys: %s); write {\"mcpServers\": {\"NAME\": {\"command\": ..., \"args\": [...]}}}", strings.Join(keys, ", "))
	}
	var entries map[string]json.RawMessage
	if err := strictDecode(raw, &entries); err != nil {
		return nil, fmt.Errorf("mcpServers: %w", err)
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []*Server
	for _, n := range names {
		s, disabled, err := parseEntry(n, entries[n])
		if err != nil {
			return nil, err
		}
		if !disabled {
			out = append(out, s)
		}
	}
	return out, nil
}

// parseEntry reads one server of an mcpServers object. Keys toolenv does
// not use (a client's own settings) are ignored; a key it uses with the
// wrong type is an error.
func parseEntry(name string, raw json.RawMessage) (*Server, bool, error) {
	var e struct {
		Server
		Disabled bool `json:"disabled"`
		// serverUrl is Windsurf's spelling of url.
		ServerURL string `json:"serverUrl"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, false, fmt.Errorf("mcpServers.%s: %v (want {\"command\": string, \"args\": [string], \"env\": {string: string}} or {\"url\": string, \"headers\": {string: string}})", name, typeError(err))
	}
	s := e.Server
	s.Name = name
	if s.URL == "" {
		s.URL = e.ServerURL
	}
	if e.Disabled {
		return &s, true, nil
	}
	if err := s.Validate(); err != nil {
		return nil, false, err
	}
	return &s, false, nil
}

func typeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s must be %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

func jsonKind(k string) string {
	switch k {
	case "slice":
		return "an array"
	case "map", "struct":
		return "an object"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	}
	return k
}

// strictDecode decodes one JSON value, rejecting trailing data.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not JSON of the right shape: %v", typeError(err))
	}
	if dec.More() {
		return fmt.Errorf("unexpected data after the JSON value")
	}
	return nil
}
