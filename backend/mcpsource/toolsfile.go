package mcpsource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolList is one server's saved tools: what ReadToolsFile finds.
type ToolList struct {
	// Name names the server (and the collection).
	Name string
	// Tools are the server's tools as tools/list gave them.
	Tools []*mcp.Tool
	// Server is how to reach the server, when the file says.
	Server *Server
	// Category and Description come with benchmark files.
	Category, Description string
}

// MaxToolsFileBytes bounds a tools file.
const MaxToolsFileBytes = 256 << 20

// ReadToolsFile reads saved tool lists from path ("NAME=PATH" names a
// single list). It reads:
//
//   - a tools/list result: {"tools": [...]} (or a JSON-RPC response
//     holding one in "result"), named after the file or NAME;
//   - an array of tools: [{"name", "description", "inputSchema"}, ...];
//   - an mcpServers document whose servers carry their tools:
//     {"mcpServers": {NAME: {"command"..., "tools": [...]}}};
//   - an object of servers: {NAME: {"tools": [...]}} (or NAME: [...]);
//   - LiveMCPBench's tools.json: [{"name", "category", "description",
//     "config": {"mcpServers": ...}, "tools": {NAME: {"tools": [...]}}}].
//
// Lists come back sorted by name. A document of none of these shapes is
// an error saying which shapes are read.
func ReadToolsFile(path string) ([]*ToolList, error) {
	name, file, named := strings.Cut(path, "=")
	if !named || strings.ContainsAny(name, `/\`) {
		name, file = "", path
	}
	st, err := os.Stat(file)
	if err != nil {
		return nil, fmt.Errorf("MCP tools file: %w", err)
	}
	if st.Size() > MaxToolsFileBytes {
		return nil, fmt.Errorf("MCP tools file %s: %d bytes, over the %d bytes read", file, st.Size(), MaxToolsFileBytes)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("MCP tools file: %w", err)
	}
	def := name
	if def == "" {
		def = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		if def == "tools" || def == "" {
			def = filepath.Base(filepath.Dir(file))
		}
		def = sanitizeServerName(def)
	}
	lists, err := ParseToolLists(data, def)
	if err != nil {
		return nil, fmt.Errorf("MCP tools file %s: %w", file, err)
	}
	if name != "" && len(lists) == 1 {
		lists[0].Name = name
	}
	return lists, nil
}

// ParseToolLists reads the shapes ReadToolsFile does from data; def names
// a list that does not name itself.
func ParseToolLists(data []byte, def string) ([]*ToolList, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, fmt.Errorf("empty file")
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	var lists []*ToolList
	var err error
	switch x := v.(type) {
	case []any:
		if looksLikeTools(x) {
			var tl *ToolList
			if tl, err = toolList(def, data); err == nil {
				lists = []*ToolList{tl}
			}
		} else {
			lists, err = benchEntries(x)
		}
	case map[string]any:
		lists, err = objectLists(x, def)
	default:
		err = fmt.Errorf("a JSON %s", kindName(v))
	}
	if err != nil {
		return nil, fmt.Errorf("%w; read are a tools/list result {\"tools\": [...]}, an array of tools, {\"mcpServers\": {NAME: {..., \"tools\": [...]}}}, {NAME: {\"tools\": [...]}} and LiveMCPBench's tools.json", err)
	}
	if len(lists) == 0 {
		return nil, fmt.Errorf("no tool lists found")
	}
	sort.Slice(lists, func(i, j int) bool { return lists[i].Name < lists[j].Name })
	for i := 1; i < len(lists); i++ {
		if lists[i].Name == lists[i-1].Name {
			return nil, fmt.Errorf("two tool lists are named %q", lists[i].Name)
		}
	}
	return lists, nil
}

func kindName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "number"
}

// looksLikeTools reports whether an array holds tools (objects with a
// name and an inputSchema), not server entries.
func looksLikeTools(a []any) bool {
	if len(a) == 0 {
		return true
	}
	m, ok := a[0].(map[string]any)
	if !ok {
		return false
	}
	_, hasSchema := m["inputSchema"]
	_, hasTools := m["tools"]
	return hasSchema || !hasTools
}

// objectLists reads an object: a tools/list result, a JSON-RPC response,
// an mcpServers document, or servers by name.
func objectLists(m map[string]any, def string) ([]*ToolList, error) {
	if r, ok := m["result"].(map[string]any); ok && m["jsonrpc"] != nil {
		m = r
	}
	if t, ok := m["tools"]; ok {
		if _, isList := t.([]any); isList {
			tl, err := toolList(def, mustJSON(m))
			if err != nil {
				return nil, err
			}
			return []*ToolList{tl}, nil
		}
	}
	servers := m
	var cfg map[string]any
	if s, ok := m["mcpServers"].(map[string]any); ok {
		servers, cfg = s, s
	}
	var out []*ToolList
	for name, v := range servers {
		var raw []byte
		switch x := v.(type) {
		case []any:
			raw = mustJSON(map[string]any{"tools": x})
		case map[string]any:
			if _, ok := x["tools"]; !ok {
				return nil, fmt.Errorf("server %q has no \"tools\" list", name)
			}
			raw = mustJSON(x)
		default:
			return nil, fmt.Errorf("%q is a JSON %s, not a server with tools", name, kindName(v))
		}
		tl, err := toolList(name, raw)
		if err != nil {
			return nil, err
		}
		if cfg != nil {
			if s, _, err := parseEntry(name, raw); err == nil {
				tl.Server = s
			}
		}
		out = append(out, tl)
	}
	return out, nil
}

// benchEntries reads LiveMCPBench's entries.
func benchEntries(a []any) ([]*ToolList, error) {
	var out []*ToolList
	for i, e := range a {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("entry %d is not an object", i)
		}
		tools, ok := m["tools"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("entry %d has no \"tools\" object of servers", i)
		}
		var servers map[string]any
		if c, ok := m["config"].(map[string]any); ok {
			servers, _ = c["mcpServers"].(map[string]any)
		}
		category, _ := m["category"].(string)
		desc, _ := m["description"].(string)
		for name, v := range tools {
			inner, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("entry %d: server %q is not an object", i, name)
			}
			tl, err := toolList(name, mustJSON(inner))
			if err != nil {
				return nil, fmt.Errorf("entry %d: %w", i, err)
			}
			tl.Category, tl.Description = category, desc
			if raw, ok := servers[name]; ok {
				if s, _, err := parseEntry(name, mustJSON(raw)); err == nil {
					tl.Server = s
				}
			}
			out = append(out, tl)
		}
	}
	return out, nil
}

// toolList decodes {"tools": [...]} or [...] into a named list.
func toolList(name string, raw []byte) (*ToolList, error) {
	var tools []*mcp.Tool
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		if err := json.Unmarshal(raw, &tools); err != nil {
			return nil, fmt.Errorf("server %q: tools: %v", name, typeError(err))
		}
	} else {
		var res struct {
			Tools []*mcp.Tool `json:"tools"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("server %q: tools: %v", name, typeError(err))
		}
		tools = res.Tools
	}
	if tools == nil {
		tools = []*mcp.Tool{}
	}
	return &ToolList{Name: sanitizeServerName(name), Tools: tools}, nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // decoded JSON always encodes
	}
	return b
}

// sanitizeServerName makes a name a collection may have.
func sanitizeServerName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.TrimLeft(b.String(), "_.-")
	if out == "" {
		out = "mcp"
	}
	if len(out) > 64 {
		out = out[:64]
	}
	return out
}
