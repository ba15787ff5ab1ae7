package server

import (
	"fmt"
	"hash/fnv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// MCPNaming says how the registry's tools are named over MCP, where one
// server offers the tools of every collection in a single flat list.
type MCPNaming int

const (
	// MCPNamesAuto gives each tool its own name, except that a name used
	// by more than one collection becomes "<collection>__<name>" in every
	// collection that uses it. With one collection loaded (the usual
	// case) the MCP names are exactly the tool names models see over
	// OpenAI function calling and /virtual.
	MCPNamesAuto MCPNaming = iota
	// MCPNamesPrefixed names every tool "<collection>__<name>", so a
	// tool's name does not change when another collection is loaded.
	MCPNamesPrefixed
)

// ParseMCPNaming reads "auto" or "prefixed".
func ParseMCPNaming(s string) (MCPNaming, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return MCPNamesAuto, nil
	case "prefixed", "prefix":
		return MCPNamesPrefixed, nil
	}
	return MCPNamesAuto, fmt.Errorf("MCP tool naming %q: want auto or prefixed", s)
}

// String returns "auto" or "prefixed".
func (n MCPNaming) String() string {
	if n == MCPNamesPrefixed {
		return "prefixed"
	}
	return "auto"
}

// mcpNameSep joins a collection and a tool name. A double underscore
// keeps the name within the characters every model API accepts
// ([A-Za-z0-9_-]), which '/' and '.' are not.
const mcpNameSep = "__"

// mcpMaxName is the longest MCP name produced. MCP allows 128
// characters, but the name is handed on to model APIs, which mostly stop
// at 64.
const mcpMaxName = 64

// mcpEntry is one tool as MCP offers it.
type mcpEntry struct {
	name string
	tool *toolenv.Tool
	coll *toolenv.Collection
}

// MCPToolNames returns the MCP name of every tool of colls, by tool ID,
// under the given naming scheme. NewMCPServer names tools the same way
// (with colls in registry order: sorted by name).
func MCPToolNames(colls []*toolenv.Collection, naming MCPNaming) map[string]string {
	entries, _ := mcpEntries(colls, naming)
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		out[e.tool.ID] = e.name
	}
	return out
}

// mcpEntries names every tool of colls. Names are valid MCP and model
// function names ([A-Za-z0-9_-], at most 64 bytes) and unique: a name that
// still collides after prefixing (a tool literally named "a__b" beside
// collection a's tool b) gets a numeric suffix, first come first served in
// collection order.
func mcpEntries(colls []*toolenv.Collection, naming MCPNaming) (entries []mcpEntry, byName map[string]*mcpEntry) {
	total := 0
	for _, c := range colls {
		total += len(c.Tools)
	}
	// A name is prefixed when another collection uses it too: with one
	// collection (the usual case) none is, and nothing need be counted.
	var uses map[string]int
	if naming == MCPNamesAuto && len(colls) > 1 {
		uses = make(map[string]int, total)
		for _, c := range colls {
			seen := make(map[string]bool, len(c.Tools))
			for _, t := range c.Tools {
				n := mcpSanitize(t.Name)
				if !seen[n] {
					uses[n]++
					seen[n] = true
				}
			}
		}
	}
	// entries never grows beyond total, so the pointers in byName stay.
	entries = make([]mcpEntry, 0, total)
	byName = make(map[string]*mcpEntry, total)
	for _, c := range colls {
		for _, t := range c.Tools {
			n := mcpSanitize(t.Name)
			if naming == MCPNamesPrefixed || uses[n] > 1 {
				n = mcpFit(mcpSanitize(c.Name) + mcpNameSep + n)
			}
			if byName[n] != nil {
				base := n
				for i := 2; byName[n] != nil; i++ {
					suffix := fmt.Sprintf("_%d", i)
					n = mcpFit(base[:min(len(base), mcpMaxName-len(suffix))] + suffix)
				}
			}
			entries = append(entries, mcpEntry{name: n, tool: t, coll: c})
			byName[n] = &entries[len(entries)-1]
		}
	}
	return entries, byName
}

// mcpPrefixed is the prefixed MCP name of tool in coll,
// "<collection>__<name>" sanitized and fitted.
func mcpPrefixed(coll, tool string) string {
	return mcpFit(mcpSanitize(coll) + mcpNameSep + mcpSanitize(tool))
}

// mcpPlainPrefix reports whether mcpPrefixed(coll, tool) is coll + "__" +
// tool as it stands: both valid names, short enough together.
func mcpPlainPrefix(coll, tool string) bool {
	return len(coll)+len(mcpNameSep)+len(tool) <= mcpMaxName && mcpValid(coll) && mcpValid(tool)
}

// mcpValid reports whether s is a non-empty name of [A-Za-z0-9_-] only.
func mcpValid(s string) bool {
	valid := s != ""
	for i := 0; i < len(s) && valid; i++ {
		c := s[i]
		valid = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
	}
	return valid
}

// mcpSanitize replaces every character outside [A-Za-z0-9_-] with '_' and
// fits the result into mcpMaxName bytes.
func mcpSanitize(s string) string {
	if mcpValid(s) {
		return mcpFit(s) // the common case: no copy
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return mcpFit(b.String())
}

// mcpFit shortens a name longer than mcpMaxName to a prefix plus a hash of
// the whole name, so that distinct long names stay distinct.
func mcpFit(s string) string {
	if len(s) <= mcpMaxName {
		return s
	}
	h := fnv.New32a()
	h.Write([]byte(s))
	suffix := fmt.Sprintf("_%08x", h.Sum32())
	return s[:mcpMaxName-len(suffix)] + suffix
}
