package server

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/validate"
)

// DefaultMCPPageSize is how many tools one tools/list page holds unless
// MCPOptions.PageSize says otherwise: the go-sdk's own default.
const DefaultMCPPageSize = mcp.DefaultPageSize

// mcpCatalog is what the MCP server offers at one moment: every tool of
// the registry's collections under its MCP name. It is immutable; when a
// collection is hot-loaded a new catalog replaces it whole, so a request
// always sees one consistent generation.
//
// The catalog holds no rendered MCP tool definitions: tools/list renders
// the tools of the requested page only (input schema and description), so
// a server of 50,000 tools keeps no second copy of their schemas.
type mcpCatalog struct {
	entries []mcpEntry  // every tool, in registry order
	listed  []*mcpEntry // the listed tools sorted by MCP name
	// meta are the listed tools that help find and read the others
	// (search_tools, then each collection's get_api_documentation),
	// which open the first tools/list page: clients such as MCP
	// Inspector and the TypeScript SDK's listTools() read that page
	// only. paged are the other listed tools, in name order.
	meta, paged []*mcpEntry
	byName      map[string]*mcpEntry // by MCP name
	// alias holds the tool IDs and prefixed names ("<collection>__<name>")
	// that byID cannot derive from the MCP name (a tool renamed to
	// "<name>_2" on a collision, a sanitized or shortened name): few.
	alias        map[string]*mcpEntry
	instructions string
	search       *mcpEntry // the search_tools tool, or nil
	// renamed holds, by collection, its tools whose MCP name is not
	// their own (prefixed on a collision): the names a backend's error
	// or hint uses are rewritten to them (mcpRename).
	renamed map[*toolenv.Collection][]*mcpEntry
	// plain holds the tools whose own name is not their MCP name, by
	// own name, so that an unknown-tool error for that name lists them.
	plain map[string][]*mcpEntry
	// outputs holds each tool's compiled output schema (*mcpOutput, nil
	// for none), by *mcpEntry, built when first listed or called.
	outputs sync.Map
	log     *slog.Logger
}

// newMCPCatalog names the tools of colls. searchAbove is the number of
// listed tools above which the catalog offers search_tools (0: never).
func newMCPCatalog(colls []*toolenv.Collection, naming MCPNaming, searchAbove int) *mcpCatalog {
	cat := &mcpCatalog{log: slog.New(slog.DiscardHandler)}
	cat.entries, cat.byName = mcpEntries(colls, naming)
	cat.alias = map[string]*mcpEntry{}
	cat.renamed = map[*toolenv.Collection][]*mcpEntry{}
	cat.plain = map[string][]*mcpEntry{}
	cat.listed = make([]*mcpEntry, 0, len(cat.entries)+1)
	for i := range cat.entries {
		e := &cat.entries[i]
		if e.name != e.tool.Name {
			cat.renamed[e.coll] = append(cat.renamed[e.coll], e)
			cat.plain[e.tool.Name] = append(cat.plain[e.tool.Name], e)
		}
		if !e.tool.Hidden() {
			cat.listed = append(cat.listed, e)
		}
		if cat.byID(e.tool.ID) != e {
			cat.alias[e.tool.ID] = e
		}
		// The prefixed name "<collection>__<name>" reaches the tool
		// too: as itself when both names are valid and short, or
		// sanitized and fitted, then an alias.
		if !mcpPlainPrefix(e.coll.Name, e.tool.Name) {
			if p := mcpPrefixed(e.coll.Name, e.tool.Name); p != e.coll.Name+mcpNameSep+e.tool.Name {
				cat.alias[p] = e
			}
		}
	}
	if searchAbove > 0 && len(cat.listed) > searchAbove {
		name := mcpSearchTool
		for i := 2; cat.byName[name] != nil; i++ {
			name = fmt.Sprintf("%s_%d", mcpSearchTool, i)
		}
		cat.search = &mcpEntry{name: name}
		cat.byName[name] = cat.search
		cat.listed = append(cat.listed, cat.search)
	}
	slices.SortFunc(cat.listed, func(a, b *mcpEntry) int { return strings.Compare(a.name, b.name) })
	if cat.search != nil {
		cat.meta = append(cat.meta, cat.search)
	}
	cat.paged = make([]*mcpEntry, 0, len(cat.listed))
	for _, e := range cat.listed {
		switch {
		case e == cat.search:
		case e.tool.Meta[drift.MetaDocsTool] == "true":
			cat.meta = append(cat.meta, e)
		default:
			cat.paged = append(cat.paged, e)
		}
	}
	cat.instructions = mcpInstructions(colls, len(cat.listed), cat.search)
	return cat
}

// byID finds a tool by its ID ("collection/name") through the names
// mcpEntries gives: the tool's own name, else the prefixed one. (The
// catalog keeps no map of IDs; the few tools named otherwise are in
// alias.)
func (cat *mcpCatalog) byID(id string) *mcpEntry {
	coll, name, ok := toolenv.SplitToolID(id)
	if !ok {
		return nil
	}
	if e := cat.byName[mcpSanitize(name)]; e != nil && e.tool.ID == id {
		return e
	}
	if e := cat.byName[mcpPrefixed(coll, name)]; e != nil && e.tool.ID == id {
		return e
	}
	if e := cat.alias[id]; e != nil && e.tool.ID == id {
		return e
	}
	return nil
}

// resolve finds the tool a tools/call names: its MCP name, its ID, or its
// prefixed name. The MCP name wins over an alias.
func (cat *mcpCatalog) resolve(name string) *mcpEntry {
	if e := cat.byName[name]; e != nil {
		return e
	}
	if e := cat.byID(name); e != nil {
		return e
	}
	if e := cat.alias[name]; e != nil {
		return e
	}
	// "<collection>__<name>": the collection may itself hold "__",
	// or end in "_".
	for i := strings.Index(name, mcpNameSep); i >= 0; {
		if e := cat.byID(name[:i] + "/" + name[i+len(mcpNameSep):]); e != nil {
			return e
		}
		j := strings.Index(name[i+1:], mcpNameSep)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return nil
}

// unknownTool is the error text for a name that resolves to nothing,
// with the closest listed name (never a hidden one).
func (cat *mcpCatalog) unknownTool(name string) string {
	names := make([]string, len(cat.listed))
	for i, e := range cat.listed {
		names[i] = e.name
	}
	msg := fmt.Sprintf("unknown tool %q", name)
	if own := cat.plain[name]; len(own) > 0 {
		// A tool's own name that MCP names otherwise (prefixed where
		// collections share it), hidden tools included: name them.
		alts := make([]string, len(own))
		for i, e := range own {
			alts[i] = fmt.Sprintf("%s (collection %s)", e.name, e.coll.Name)
		}
		return msg + fmt.Sprintf(": over MCP that tool is named %s (a name shared by several collections is prefixed with the collection's)", strings.Join(alts, " or "))
	}
	if s := validate.Suggest(name, names); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	msg += fmt.Sprintf(" (this server has %d tools; tools/list names them", len(names))
	if cat.search != nil {
		msg += ", " + cat.search.name + " finds them by what they do"
	}
	return msg + ")"
}

// mcpCursorPrefix versions the cursor format.
const mcpCursorPrefix = "after:"

// encodeMCPCursor makes the opaque cursor of the page that follows the
// tool named last.
func encodeMCPCursor(last string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(mcpCursorPrefix + last))
}

// decodeMCPCursor reads a cursor made by encodeMCPCursor.
func decodeMCPCursor(cursor string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || !strings.HasPrefix(string(raw), mcpCursorPrefix) {
		return "", fmt.Errorf("cursor %q was not issued by this server: pass the nextCursor of the previous tools/list page, or none for the first page", cursor)
	}
	return string(raw[len(mcpCursorPrefix):]), nil
}

// page returns the listed tools of one tools/list page. The first page
// opens with the meta tools (search_tools, the documentation tools), then
// the other tools in name order; each later page holds those named after
// the cursor's tool. A cursor stays valid when the catalog changes
// between pages (tools are paged by name, as the go-sdk pages).
func (cat *mcpCatalog) page(cursor string, size int) ([]*mcpEntry, string, error) {
	var out []*mcpEntry
	start := 0
	if cursor != "" {
		last, err := decodeMCPCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		start = sort.Search(len(cat.paged), func(i int) bool { return cat.paged[i].name > last })
	} else if len(cat.meta) > 0 {
		out = make([]*mcpEntry, 0, min(len(cat.meta)+len(cat.paged), max(size, len(cat.meta))))
		out = append(out, cat.meta...)
		if size > 0 {
			size = max(size-len(cat.meta), 0)
		}
	}
	end := len(cat.paged)
	if size > 0 && end-start > size {
		end = start + size
	}
	var next string
	if end < len(cat.paged) {
		last := "" // no tool of paged yet: the next page starts with its first
		if end > 0 {
			last = cat.paged[end-1].name
		}
		next = encodeMCPCursor(last)
	}
	if out == nil {
		return cat.paged[start:end], next, nil
	}
	return append(out, cat.paged[start:end]...), next, nil
}

// listTools answers tools/list from the current catalog, rendering the
// page's tools only.
func (f *mcpFrontend) listTools(req *mcp.ListToolsRequest) (*mcp.ListToolsResult, error) {
	cat := f.current()
	var cursor string
	if req != nil && req.Params != nil {
		cursor = req.Params.Cursor
	}
	entries, next, err := cat.page(cursor, f.pageSize)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	res := &mcp.ListToolsResult{Tools: make([]*mcp.Tool, 0, len(entries)), NextCursor: next, Cacheable: mcpCacheable(f.listTTL)}
	for _, e := range entries {
		var t *mcp.Tool
		if e == cat.search {
			t = searchToolDef(e.name)
		} else if t, err = mcpTool(e); err != nil {
			f.log.Error("tool does not render for tools/list; left out", "tool", e.tool.ID, "err", err)
			continue
		} else if o := cat.output(e); o != nil {
			t.OutputSchema = o.schema
		}
		res.Tools = append(res.Tools, t)
	}
	return res, nil
}

// route is receiving middleware: it answers tools/list and tools/call
// from the catalog (the go-sdk's own tool set stays empty), puts the
// catalog's instructions in initialize and discover results, and passes
// everything else on.
func (f *mcpFrontend) route(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize", "server/discover":
			res, err := next(ctx, method, req)
			if err != nil {
				// The SDK answers a duplicate initialize with an error
				// and a typed nil result: nothing to fill in.
				return nil, err
			}
			switch r := res.(type) {
			case *mcp.InitializeResult:
				if r != nil {
					r.Instructions = f.current().instructions
				}
			case *mcp.DiscoverResult:
				if r != nil {
					r.Instructions = f.current().instructions
				}
			}
			return res, nil
		case "tools/list":
			lr, _ := req.(*mcp.ListToolsRequest)
			return f.listTools(lr)
		case "tools/call":
			ctr, ok := req.(*mcp.CallToolRequest)
			if !ok || ctr.Params == nil {
				return next(ctx, method, req)
			}
			cat := f.current()
			e := cat.resolve(ctr.Params.Name)
			switch {
			case e == nil:
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: cat.unknownTool(ctr.Params.Name)}
			case e == cat.search:
				return mcpTyped(f.searchTools(ctx, ctr, cat), mcpProtocolOf(ctr)), nil
			}
			if e.coll.Kind == mcpSourceKind {
				out, err := f.callSource(ctx, ctr, cat, e)
				if err != nil {
					return nil, err
				}
				return mcpTyped(out, mcpProtocolOf(ctr)), nil
			}
			return mcpTyped(f.call(ctx, ctr, cat, e), mcpProtocolOf(ctr)), nil
		}
		return next(ctx, method, req)
	}
}

// mcpRename rewrites the tool names of coll that MCP names otherwise in a
// backend's message (an error, a hint: "call initialize_active_data
// first") to their MCP names, so that the name a client is told to call
// is one it can call.
func (cat *mcpCatalog) mcpRename(coll *toolenv.Collection, text string) string {
	for _, e := range cat.renamed[coll] {
		text = replaceWord(text, e.tool.Name, e.name)
	}
	return text
}

// replaceWord replaces the occurrences of word in s that are not part of
// a longer name (no letter, digit or underscore either side).
func replaceWord(s, word, with string) string {
	if word == "" || !strings.Contains(s, word) {
		return s
	}
	nameByte := func(b byte) bool {
		return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
	}
	var b strings.Builder
	for {
		i := strings.Index(s, word)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + len(word)
		b.WriteString(s[:i])
		if (i > 0 && nameByte(s[i-1])) || (j < len(s) && nameByte(s[j])) {
			b.WriteString(word)
		} else {
			b.WriteString(with)
		}
		s = s[j:]
	}
}
