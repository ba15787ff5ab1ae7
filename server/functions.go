package server

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/openai"
	"github.com/toolenv/toolenv/validate"
)

// The OpenAI function listing of several collections at once, for one
// chat request that offers tools of several collections (SLOT and SEL
// both have a group_data_by): GET /functions lists the tools of every
// collection served (or of those named by ?collection=, repeatable) as
// one OpenAI "tools" array, named by MCP's rule (MCPNamesAuto: a tool
// keeps its name unless another collection served has a tool of the same
// name, and then both are "<collection>__<name>"), so the names are
// unique and the same as over MCP. POST /functions/{name} calls the tool
// a listed name (or its prefixed form) names, with the arguments a model
// produced as the JSON body.

// functionNames are the names of every tool served, as MCP gives them.
type functionNames struct {
	once    sync.Once
	entries []mcpEntry
	byName  map[string]*mcpEntry
}

func (f *functionNames) build(reg *invoke.Registry) {
	f.once.Do(func() { f.entries, f.byName = mcpEntries(reg.Collections(), MCPNamesAuto) })
}

// strictNotesHeader carries, on a strict listing, one note per tool that
// is listed without strict (naming it and saying why) or narrowed (a
// parameter of any type offered as scalars or lists), at most
// maxNoteHeaders; strictCountHeader the number of tools of the page
// listed without strict.
const (
	strictNotesHeader = "X-Toolenv-Note"
	strictCountHeader = "X-Toolenv-Not-Strict"
	maxNoteHeaders    = 200
)

// openaiTools converts tools for a listing: strict when asked (the notes
// of those that cannot be go in headers), named by names (nil: their own
// names).
func openaiTools(w http.ResponseWriter, tools []*toolenv.Tool, names []string, strict bool) []openai.Tool {
	out := make([]openai.Tool, len(tools))
	notes, loose := 0, 0
	for i, t := range tools {
		if strict {
			var note string
			out[i], note = openai.StrictTool(t)
			if note != "" {
				if notes < maxNoteHeaders {
					w.Header().Add(strictNotesHeader, note)
				}
				notes++
			}
			if !out[i].Function.Strict {
				loose++
			}
		} else {
			out[i] = openai.FromTool(t)
		}
		if names != nil {
			out[i].Function.Name = names[i]
		}
	}
	if strict {
		w.Header().Set(strictCountHeader, strconv.Itoa(loose))
	}
	return out
}

// strictParam reads ?strict= (true/false, default false).
func strictParam(r *http.Request) (bool, *toolenv.Result) {
	v := r.URL.Query().Get("strict")
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, toolenv.Errorf(toolenv.StatusBadRequest, "strict=true lists the tools as OpenAI's strict mode takes them", "strict=%q is not true or false", v)
	}
	return b, nil
}

// handleFunctions serves GET /functions.
func (s *Server) handleFunctions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	strict, res := strictParam(r)
	if res != nil {
		writeError(w, http.StatusBadRequest, res)
		return
	}
	want := map[string]bool{}
	for _, name := range q["collection"] {
		if s.collection(w, name) == nil {
			return
		}
		want[name] = true
	}
	fn := s.views.Load().functions(s.opts.Registry)
	hidden := q.Get("hidden") == "true"
	var tools []*toolenv.Tool
	var names []string
	for _, e := range fn.entries {
		if (len(want) > 0 && !want[e.coll.Name]) || (e.tool.Hidden() && !hidden) {
			continue
		}
		tools = append(tools, e.tool)
		names = append(names, e.name)
	}
	start, end, next, res := pageOf(names, q)
	if res != nil {
		writeError(w, http.StatusBadRequest, res)
		return
	}
	setPageHeaders(w, r, len(names), next)
	writeJSON(w, http.StatusOK, openaiTools(w, tools[start:end], names[start:end], strict))
}

// handleFunctionCall serves POST /functions/{name}: a call of the tool a
// /functions name names, its arguments the JSON object body.
func (s *Server) handleFunctionCall(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	fn := s.views.Load().functions(s.opts.Registry)
	e := fn.byName[name]
	if e == nil {
		names := make([]string, 0, len(fn.entries))
		for _, x := range fn.entries {
			if !x.tool.Hidden() {
				names = append(names, x.name)
			}
		}
		msg := fmt.Sprintf("no function %q", name)
		if sug := validate.Suggest(name, names); sug != "" {
			msg += fmt.Sprintf("; did you mean %q?", sug)
		}
		writeError(w, http.StatusNotFound, &toolenv.Result{Status: toolenv.StatusUnknownTool, Error: msg,
			Hint: fmt.Sprintf("GET /functions lists the %d functions served and their names", len(names)), Source: toolenv.SourcePipeline})
		return
	}
	call, res := s.restCall(w, r, e.tool, e.coll, nil, false)
	if res != nil {
		writeError(w, 0, res)
		return
	}
	s.serveCall(w, r, call)
}

// pageOf pages a listing by unique names as listPage does by tool names:
// ?limit=N (or all) and ?cursor= (the X-Next-Cursor of the page before).
func pageOf(names []string, q map[string][]string) (start, end int, next string, res *toolenv.Result) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	limit := ListPageSize
	switch l := get("limit"); l {
	case "":
	case "all":
		limit = len(names)
	default:
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > ListMaxPageSize {
			return 0, 0, "", toolenv.Errorf(toolenv.StatusBadRequest, fmt.Sprintf("limit is a number of tools from 1 to %d, or all", ListMaxPageSize), "bad limit %q", l)
		}
		limit = n
	}
	if c := get("cursor"); c != "" {
		raw, err := base64.RawURLEncoding.DecodeString(c)
		after, ok := strings.CutPrefix(string(raw), listCursorPrefix)
		if err != nil || !ok {
			return 0, 0, "", toolenv.Errorf(toolenv.StatusBadRequest, "pass the X-Next-Cursor of the previous page, or no cursor for the first", "cursor %q was not issued by this server", c)
		}
		start = -1
		for i, n := range names {
			if n == after {
				start = i + 1
				break
			}
		}
		if start < 0 {
			return 0, 0, "", toolenv.Errorf(toolenv.StatusBadRequest, "list again from the first page", "the cursor's function %q is no longer served (a new version was loaded)", after)
		}
	}
	end = min(start+limit, len(names))
	if end < len(names) && end > start {
		next = base64.RawURLEncoding.EncodeToString([]byte(listCursorPrefix + names[end-1]))
	}
	return start, end, next, nil
}
