package mcpsource

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/schemadraft"
)

// Kind is the Kind of a collection made from an MCP server's tools, and
// BackendType the Backend.Type that serves it.
const (
	Kind        = "mcp"
	BackendType = "mcp"
)

// Meta keys of the tools NewCollection makes.
const (
	// MetaName is the tool's name on the server, when toolenv's name
	// for it differs (a name with characters function-calling models
	// refuse, or longer than 64 bytes).
	MetaName = "mcp_name"
	// MetaAnnotations is the tool's annotations as the server sent them
	// (JSON).
	MetaAnnotations = "mcp_annotations"
	// MetaMeta is the tool's _meta as the server sent it (JSON).
	MetaMeta = "mcp_meta"
)

// Collection meta keys.
const (
	// MetaServer names the server (its name and command or URL, secrets
	// hidden).
	MetaServer = "mcp_server"
	// MetaSkipped lists the tools left out, with why (JSON object: name →
	// reason).
	MetaSkipped = "mcp_skipped"
)

// BackendConfig is the Backend.Config of an MCP collection: the server
// that answers it, or none for documentation only.
type BackendConfig struct {
	// Server is how to reach the server; nil serves the tools from the
	// cache and the simulator only.
	Server *Server `json:"server,omitempty"`
	// Name is the server's name in the configuration it came from.
	Name string `json:"name,omitempty"`
}

// CollectionOptions configure NewCollection.
type CollectionOptions struct {
	// Server is the server the tools come from; nil means documentation
	// only (ReadToolsFile).
	Server *Server
	// State overrides the state a tool's answers depend on (see
	// toolenv.MetaState), by the tool's name on the server:
	// "stateless", "read" or "write".
	State map[string]string
	// Description describes the collection; default names the server.
	Description string
	// Category is every tool's Category (a benchmark's category of the
	// server), if any.
	Category string
}

// Skipped is a tool NewCollection left out, and why.
type Skipped struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

func (s Skipped) Error() string { return fmt.Sprintf("tool %q left out: %s", s.Tool, s.Reason) }

// NewCollection turns a server's tools/list into a collection named name:
// each tool's name (made fit for function-calling models where it is not,
// the server's own kept in Meta[MetaName]), title, description,
// inputSchema (Input), outputSchema (Output) and annotations
// (Meta[MetaAnnotations]), and the state its answers depend on
// (Meta[toolenv.MetaState]; see States). A tool whose input schema does
// not compile as JSON Schema, is not an object schema or nests too deep is
// left out and reported in skipped; the rest are served. The collection
// is strict (calls are checked against the schemas) and cached.
func NewCollection(name string, tools []*mcp.Tool, opts CollectionOptions) (c *toolenv.Collection, skipped []Skipped, err error) {
	var out []*toolenv.Tool
	anns := map[string]*mcp.ToolAnnotations{}
	names := newNamer()
	seen := map[string]bool{}
	for i, t := range tools {
		if t == nil || t.Name == "" {
			skipped = append(skipped, Skipped{Tool: fmt.Sprintf("#%d", i), Reason: "it has no name"})
			continue
		}
		if seen[t.Name] {
			skipped = append(skipped, Skipped{Tool: t.Name, Reason: "the server lists the name twice; the first is served"})
			continue
		}
		seen[t.Name] = true
		tool, err := convertTool(t)
		if err != nil {
			skipped = append(skipped, Skipped{Tool: t.Name, Reason: err.Error()})
			continue
		}
		tool.Name = names.name(t.Name)
		if tool.Name != t.Name {
			tool.Meta[MetaName] = t.Name
		}
		tool.Category = opts.Category
		tool.Group = name
		anns[t.Name] = t.Annotations
		out = append(out, tool)
	}
	if err := applyStates(out, anns, opts.State); err != nil {
		return nil, skipped, err
	}
	c = toolenv.NewCollection(name, Kind, out)
	c.Version = "v1"
	c.Description = opts.Description
	if c.Description == "" {
		c.Description = "the tools of the MCP server " + name
	}
	c.Policy = toolenv.Policy{Validation: toolenv.ValidationStrict, Cache: true, Feedback: toolenv.FeedbackHelpful}
	cfg := BackendConfig{Name: name}
	c.Meta = map[string]string{}
	if opts.Server != nil {
		cfg.Server = opts.Server.Redacted()
		cfg.Server.Name = ""
		c.Meta[MetaServer] = opts.Server.String()
	}
	raw, _ := json.Marshal(cfg)
	c.Backend = toolenv.BackendSpec{Type: BackendType, Config: raw}
	if len(skipped) > 0 {
		m := map[string]string{}
		for _, s := range skipped {
			m[s.Tool] = s.Reason
		}
		b, _ := json.Marshal(m)
		c.Meta[MetaSkipped] = string(b)
	}
	if err := c.Validate(); err != nil {
		return nil, skipped, fmt.Errorf("MCP server %s: %w", name, err)
	}
	return c, skipped, nil
}

// convertTool converts one tool, checking its schemas.
func convertTool(t *mcp.Tool) (*toolenv.Tool, error) {
	tool := &toolenv.Tool{Description: t.Description, Title: t.Title, Meta: map[string]string{}}
	if tool.Title == "" && t.Annotations != nil {
		tool.Title = t.Annotations.Title
	}
	in, err := schemaOf(t.InputSchema, "inputSchema")
	if err != nil {
		return nil, err
	}
	if in == nil {
		in = toolenv.ObjectSchema()
	}
	if in.Type != "" && in.Type != "object" {
		return nil, fmt.Errorf("its inputSchema is of type %q: MCP requires an object schema", in.Type)
	}
	tool.Input = in
	if t.OutputSchema != nil {
		out, err := schemaOf(t.OutputSchema, "outputSchema")
		if err != nil {
			return nil, err
		}
		tool.Output = out
	}
	if t.Annotations != nil {
		raw, err := json.Marshal(t.Annotations)
		if err == nil {
			tool.Meta[MetaAnnotations] = string(raw)
		}
	}
	if len(t.Meta) > 0 {
		if raw, err := json.Marshal(t.Meta); err == nil {
			tool.Meta[MetaMeta] = string(raw)
		}
	}
	return tool, nil
}

// schemaOf decodes a schema the server sent, after compiling it as JSON
// Schema: a schema that does not compile, or nests deeper than
// toolenv.MaxSchemaDepth, is an error saying why.
func schemaOf(v any, what string) (*toolenv.Schema, error) {
	if v == nil {
		return nil, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("its %s is not JSON: %v", what, err)
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	raw = schemadraft.NormalizeJSON(raw) // older drafts, as clients accept them
	if err := compiles(raw); err != nil {
		return nil, fmt.Errorf("its %s does not compile as JSON Schema: %v", what, err)
	}
	var s toolenv.Schema
	if err := s.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("its %s cannot be read: %v", what, err)
	}
	if err := s.CheckDepth(); err != nil {
		return nil, fmt.Errorf("its %s: %v", what, err)
	}
	return &s, nil
}

// compiles compiles a schema with a JSON Schema compiler that fetches
// nothing (a $ref to another document does not resolve) and takes any
// pattern (ECMA regular expressions are not Go's).
func compiles(raw []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	if _, ok := doc.(map[string]any); !ok {
		if _, isBool := doc.(bool); !isBool {
			return fmt.Errorf("a schema is an object or a boolean, not %s", jsonKindOf(doc))
		}
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.UseRegexpEngine(func(string) (jsonschema.Regexp, error) { return anyRegexp{}, nil })
	const loc = "toolenv:///schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return oneLine(err)
	}
	if _, err := c.Compile(loc); err != nil {
		return oneLine(err)
	}
	return nil
}

func jsonKindOf(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case nil:
		return "null"
	}
	return "a number"
}

func oneLine(err error) error {
	s := strings.ReplaceAll(err.Error(), "\n", "; ")
	s = strings.ReplaceAll(s, "toolenv:///schema.json", "the schema")
	return fmt.Errorf("%s", s)
}

// noLoader refuses every document a $ref names.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("refers to %s, which toolenv does not fetch (inline it under $defs)", url)
}

// anyRegexp accepts every pattern: patterns are the server's to check.
type anyRegexp struct{}

func (anyRegexp) MatchString(string) bool { return true }
func (anyRegexp) String() string          { return "" }

// applyStates sets each tool's Meta[MetaState] (and MetaIdempotent): an
// override where one names the tool, else from its annotations
// (readOnlyHint: read; otherwise write, as MCP's defaults say); a read
// tool of a server none of whose tools writes is stateless.
func applyStates(tools []*toolenv.Tool, anns map[string]*mcp.ToolAnnotations, overrides map[string]string) error {
	byServerName := map[string]*toolenv.Tool{}
	for _, t := range tools {
		byServerName[ServerName(t)] = t
	}
	for name, st := range overrides {
		if byServerName[name] == nil {
			var known []string
			for n := range byServerName {
				known = append(known, n)
			}
			sort.Strings(known)
			return fmt.Errorf("state override for %q: the server has no such tool (its tools: %s)", name, strings.Join(known, ", "))
		}
		if !validState(st) {
			return fmt.Errorf("state override %s=%s: want stateless, read or write", name, st)
		}
	}
	writes := false
	for _, t := range tools {
		a := anns[ServerName(t)]
		st, ok := overrides[ServerName(t)]
		if !ok {
			st = toolenv.StateWrite
			if a != nil && a.ReadOnlyHint {
				st = toolenv.StateRead
			}
		}
		t.Meta[toolenv.MetaState] = st
		if a != nil && a.IdempotentHint {
			t.Meta[toolenv.MetaIdempotent] = "true"
		}
		if st == toolenv.StateWrite {
			writes = true
		}
	}
	if !writes {
		for _, t := range tools {
			if _, ok := overrides[ServerName(t)]; !ok && t.Meta[toolenv.MetaState] == toolenv.StateRead {
				t.Meta[toolenv.MetaState] = toolenv.StateStateless
			}
		}
	}
	return nil
}

func validState(s string) bool {
	for _, v := range toolenv.States {
		if s == v {
			return true
		}
	}
	return false
}

// ServerName returns the tool's name on its MCP server.
func ServerName(t *toolenv.Tool) string {
	if n := t.Meta[MetaName]; n != "" {
		return n
	}
	return t.Name
}

// Annotations returns the tool's MCP annotations, nil when it has none.
func Annotations(t *toolenv.Tool) *mcp.ToolAnnotations {
	raw := t.Meta[MetaAnnotations]
	if raw == "" {
		return nil
	}
	var a mcp.ToolAnnotations
	if json.Unmarshal([]byte(raw), &a) != nil {
		return nil
	}
	return &a
}

// namer gives each server name a toolenv name: letters, digits, '_' and
// '-', at most 64 bytes, unique in the collection.
type namer struct{ used map[string]bool }

func newNamer() *namer { return &namer{used: map[string]bool{}} }

func (n *namer) name(s string) string {
	out := sanitize(s)
	if !n.used[out] {
		n.used[out] = true
		return out
	}
	for i := 2; ; i++ {
		suffix := fmt.Sprintf("_%d", i)
		c := out
		if len(c)+len(suffix) > 64 {
			c = c[:64-len(suffix)]
		}
		c += suffix
		if !n.used[c] {
			n.used[c] = true
			return c
		}
	}
}

// sanitize maps a name to [A-Za-z0-9_-]{1,64}: other characters become
// '_', and a longer name keeps its first 55 bytes and a hash of the
// whole.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" {
		out = "_"
	}
	if len(out) > 64 {
		h := sha256.Sum256([]byte(s))
		out = out[:55] + "_" + hex.EncodeToString(h[:4])
	}
	return out
}
