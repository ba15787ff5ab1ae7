package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/openai"
	"github.com/toolenv/toolenv/openapi"
)

// collectionInfo is one entry of GET /collections.
type collectionInfo struct {
	Name        string           `json:"name"`
	Kind        string           `json:"kind"`
	Version     string           `json:"version,omitempty"`
	Description string           `json:"description,omitempty"`
	Tools       int              `json:"tools"`
	Policy      CollectionPolicy `json:"policy"`
	Backend     string           `json:"backend"`
}

// CollectionPolicy is the policy in force for a collection's calls, as
// GET /collections reports it: its collection.json policy with what the
// server's configuration overrides (SetBy says which values, and by which
// option), and what the configuration adds (drift, faults, failover,
// repair, the simulator).
type CollectionPolicy struct {
	// Validation is "strict" or "lenient" (as collection.json says).
	Validation string `json:"validation,omitempty"`
	// Cache says successful results are cached and served from it.
	Cache bool `json:"cache"`
	// Feedback is how much a rejected call that does not ask
	// (?_feedback=) is told: none, terse or helpful.
	Feedback string `json:"feedback"`
	// Mode is a drifted collection's mode: strict or compat.
	Mode string `json:"mode,omitempty"`
	// Sessions says the backend keeps per-session state (SLOT/SEL).
	Sessions bool `json:"sessions,omitempty"`
	// Drift is a drifted collection's lineage.
	Drift *DriftPolicy `json:"drift,omitempty"`
	// Faults are the fault rules that may hit the collection's calls,
	// as configured, and their seed.
	Faults    []any   `json:"faults,omitempty"`
	FaultSeed *uint64 `json:"fault_seed,omitempty"`
	// Failover and Repair say calls may be re-routed to mapped
	// alternatives, or repaired from older documentation.
	Failover bool `json:"failover,omitempty"`
	Repair   bool `json:"repair,omitempty"`
	// Simulator is what answers a virtual collection's documented APIs.
	Simulator *SimulatorPolicy `json:"simulator,omitempty"`
	// Timeout bounds one call ("" for none).
	Timeout string `json:"timeout,omitempty"`
	// SetBy names the values the configuration sets over collection.json
	// (key → the option that sets it, e.g. "feedback": "--feedback").
	SetBy map[string]string `json:"set_by,omitempty"`
}

// DriftPolicy is a drifted collection's lineage.
type DriftPolicy struct {
	Version     string `json:"version"`
	BaseVersion string `json:"base_version"`
}

// SimulatorPolicy says what answers a virtual collection: the real API
// first (Upstream), then the LLM at Endpoint, then (OnFailure
// "synthesize") the offline synthesizer.
type SimulatorPolicy struct {
	Upstream  string `json:"upstream,omitempty"`
	Endpoint  string `json:"endpoint,omitempty"`
	Model     string `json:"model,omitempty"`
	Prompt    string `json:"prompt,omitempty"`
	OnFailure string `json:"on_failure,omitempty"`
}

// PolicyFromCollection is the policy collection.json gives c, with the
// default of an unset feedback (helpful) filled in: what is in force when
// no configuration overrides it.
func PolicyFromCollection(c *toolenv.Collection) CollectionPolicy {
	p := CollectionPolicy{Validation: c.Policy.Validation, Cache: c.Policy.Cache, Feedback: c.Policy.Feedback, Mode: c.Policy.Mode, Sessions: c.Policy.Sessions}
	if p.Feedback == "" {
		p.Feedback = toolenv.FeedbackHelpful
	}
	return p
}

func (s *Server) handleCollections(w http.ResponseWriter, r *http.Request) {
	var out []collectionInfo
	for _, c := range s.opts.Registry.Collections() {
		p := PolicyFromCollection(c)
		if s.opts.Policy != nil {
			p = s.opts.Policy(c)
		}
		out = append(out, collectionInfo{Name: c.Name, Kind: c.Kind, Version: c.Version, Description: c.Description,
			Tools: len(c.Tools), Policy: p, Backend: c.Backend.Type})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) collection(w http.ResponseWriter, name string) *toolenv.Collection {
	c := s.opts.Registry.Collection(name)
	if c == nil {
		var names []string
		for _, c := range s.opts.Registry.Collections() {
			names = append(names, c.Name)
		}
		writeError(w, http.StatusNotFound, toolenv.Errorf(toolenv.StatusUnknownTool, fmt.Sprintf("loaded collections: %v", names), "no collection %q", name))
	}
	return c
}

// handleTools lists a collection's tools: ?format=toolenv (default),
// openai (function-calling "tools" array) or mcp (MCP tools/list shape).
// Hidden tools (a task's initialisation step) are left out unless
// ?hidden=true. Listings page (listPage): a collection of up to
// ListPageSize tools comes whole, a larger one in pages of ?limit= tools,
// the next page's cursor in X-Next-Cursor and a Link header (and in
// "nextCursor" for format=mcp), the count in X-Total-Count.
func (s *Server) handleTools(w http.ResponseWriter, r *http.Request) {
	c := s.collection(w, r.PathValue("name"))
	if c == nil {
		return
	}
	all := c.Listed()
	if r.URL.Query().Get("hidden") == "true" {
		all = c.Tools
	}
	f := r.URL.Query().Get("format")
	if f != "" && f != "toolenv" && f != "openai" && f != "mcp" {
		writeError(w, http.StatusBadRequest, toolenv.Errorf(toolenv.StatusBadRequest, "format is toolenv, openai or mcp", "unknown format %q", f))
		return
	}
	strict, res := strictParam(r)
	if res == nil && strict && f != "openai" {
		res = toolenv.Errorf(toolenv.StatusBadRequest, "strict=true goes with format=openai", "strict=true lists OpenAI functions, not format %q", f)
	}
	if res != nil {
		writeError(w, http.StatusBadRequest, res)
		return
	}
	tools, next, res := listPage(all, r.URL.Query())
	if res != nil {
		writeError(w, http.StatusBadRequest, res)
		return
	}
	setPageHeaders(w, r, len(all), next)
	switch f {
	case "", "toolenv":
		writeJSON(w, http.StatusOK, tools)
	case "openai":
		writeJSON(w, http.StatusOK, openaiTools(w, tools, nil, strict))
	case "mcp":
		type mcpTool struct {
			Name        string          `json:"name"`
			Title       string          `json:"title,omitempty"`
			Description string          `json:"description,omitempty"`
			InputSchema *toolenv.Schema `json:"inputSchema"`
		}
		out := make([]mcpTool, len(tools))
		for i, t := range tools {
			out[i] = mcpTool{Name: t.Name, Title: t.Title, Description: openai.Description(t), InputSchema: t.Input}
		}
		body := map[string]any{"tools": out}
		if next != "" {
			body["nextCursor"] = next
		}
		writeJSON(w, http.StatusOK, body)
	}
}

// handleOpenAPI serves a collection's OpenAPI 3.1 document; at
// /openapi.json the collection is ?collection=, or the only one loaded.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if name == "" {
		name = r.URL.Query().Get("collection")
	}
	if name == "" {
		cs := s.opts.Registry.Collections()
		if len(cs) != 1 {
			var names []string
			for _, c := range cs {
				names = append(names, c.Name)
			}
			writeError(w, http.StatusBadRequest, toolenv.Errorf(toolenv.StatusBadRequest,
				fmt.Sprintf("GET /collections/{name}/openapi.json or /openapi.json?collection=name; loaded: %v", names), "several collections are loaded"))
			return
		}
		name = cs[0].Name
	}
	c := s.collection(w, name)
	if c == nil {
		return
	}
	base := s.opts.BaseURL
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	writeJSON(w, http.StatusOK, openapi.DocumentWith(c, openapi.DocumentOptions{ServerURL: base, BearerAuth: s.guard.Authenticates(), Recorded: s.recorded(r.Context())}))
}

// handleToolCall serves the generic REST route of every tool: POST with a
// JSON object body, or GET with query parameters.
func (s *Server) handleToolCall(w http.ResponseWriter, r *http.Request) {
	tool, coll, res := s.opts.Registry.Resolve(r.PathValue("collection"), r.PathValue("name"))
	if res != nil {
		writeError(w, 0, res)
		return
	}
	call, res := s.restCall(w, r, tool, coll, nil, false)
	if res != nil {
		writeError(w, 0, res)
		return
	}
	s.serveCall(w, r, call)
}

// serveCall invokes a call made by a REST request and writes the result:
// the response body itself on success, an error object otherwise.
func (s *Server) serveCall(w http.ResponseWriter, r *http.Request, call *toolenv.Call) {
	if pv := r.Header.Values("Prefer"); len(pv) > 0 {
		p, ok, res := parsePrefer(pv)
		if res != nil {
			writeError(w, http.StatusBadRequest, res)
			return
		}
		if ok && (p.example != "" || p.code != http.StatusOK) {
			s.servePreferred(w, r, call, p)
			return
		}
	}
	call.RequestID = s.newRequestID()
	release, res := s.callSession(w, r, call)
	if res != nil {
		writeError(w, 0, res)
		return
	}
	defer release()
	if fb := r.URL.Query().Get("_feedback"); fb != "" {
		call.Options.Feedback = fb
	}
	res = s.invoke(r.Context(), call)
	res = s.noteOutputMismatch(call.Tool, res)
	setResultHeaders(w.Header(), res)
	if !res.OK() {
		writeError(w, 0, res)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	body := res.Body
	if len(body) == 0 {
		body = json.RawMessage("null")
	}
	w.Write(body)
}

// restCall returns the call of tool with the request's arguments
// (requestArgsText), or the error result.
func (s *Server) restCall(w http.ResponseWriter, r *http.Request, tool *toolenv.Tool, coll *toolenv.Collection, pathParams map[string]string, bound bool) (*toolenv.Call, *toolenv.Result) {
	args, parsed, res := s.requestArgsText(w, r, tool, pathParams, bound)
	if res != nil {
		return nil, res
	}
	call := &toolenv.Call{Tool: tool, Collection: coll, Args: args, Frontend: "rest"}
	call.ArgsFromParse(parsed) // the cache key from the body's parse
	return call, nil
}

// requestArgsText collects a REST request's arguments: path parameters,
// the query string (converted to each parameter's declared type) and a
// JSON object body. At a tool's own bound route, parameters its binding
// puts in headers or cookies are read from them too, and a tool whose
// body is one argument (Meta["body_param"]: an array, a string) takes the
// raw JSON body as that argument. It returns the body's parse too when
// the arguments are the body's object alone (nothing from the path,
// query, headers or cookies joined it).
func (s *Server) requestArgsText(w http.ResponseWriter, r *http.Request, tool *toolenv.Tool, pathParams map[string]string, bound bool) (map[string]any, *toolenv.ParsedArgs, *toolenv.Result) {
	args := map[string]any{}
	for k, vs := range r.URL.Query() {
		if strings.HasPrefix(k, "_") { // toolenv's own options (_feedback)
			continue
		}
		args[k] = convertParam(tool.Input.Prop(k), splitArray(tool, k, vs))
	}
	for k, v := range pathParams { // the path names the resource: it wins over a query parameter of the same name
		args[k] = convertParam(tool.Input.Prop(k), splitArray(tool, k, []string{v}))
	}
	if bound && tool.Binding != nil {
		for name, in := range tool.Binding.In {
			switch in {
			case "header":
				if vs := r.Header.Values(name); len(vs) > 0 {
					args[name] = convertParam(tool.Input.Prop(name), splitArray(tool, name, vs))
				}
			case "cookie":
				if c, err := r.Cookie(name); err == nil {
					args[name] = convertParam(tool.Input.Prop(name), []string{c.Value})
				}
			}
		}
		if form, ok, res := formArgs(w, r, tool, s.opts.MaxBodyBytes); res != nil {
			return nil, nil, res
		} else if ok {
			for k, vs := range form {
				args[k] = convertParam(tool.Input.Prop(k), splitArray(tool, k, vs))
			}
			return args, nil, nil
		}
	}
	if r.Body != nil && r.Method != http.MethodGet {
		var buf []byte
		if n := r.ContentLength; n > 0 && n <= s.opts.MaxBodyBytes {
			buf = make([]byte, 0, n+1) // read in one go, not grown by copies
		}
		body, err := readAllInto(buf, http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, nil, toolenv.Errorf(toolenv.StatusTooLarge, "send a smaller body", "request body over the server's limit of %d bytes", s.opts.MaxBodyBytes)
			}
			return nil, nil, toolenv.Errorf(toolenv.StatusBadRequest, "", "reading the request body: %v", err)
		}
		if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 {
			if bp := tool.Meta["body_param"]; bound && bp != "" {
				v, err := toolenv.ParseJSON(trimmed)
				if err != nil {
					return nil, nil, toolenv.Errorf(toolenv.StatusBadRequest, "the body must be JSON", "the request body is not JSON: %v", err)
				}
				args[bp] = v
				return args, nil, nil
			}
			pa, err := toolenv.ParseArgsText(trimmed, tool.Input, true) // body is this request's, never written again
			if err != nil {
				return nil, nil, toolenv.Errorf(toolenv.StatusBadRequest, "the body must be a JSON object of arguments", "the request body is not a JSON object: %v", err)
			}
			m := pa.Args
			// The body's arguments win over the query's and the path's,
			// which are few: they join the body's map (copying a body of
			// many arguments would be a pass of its own).
			if len(args) == 0 {
				return m, pa, nil
			}
			for k, v := range args {
				if _, ok := m[k]; !ok {
					m[k] = v
				}
			}
			args = m
		}
	}
	return args, nil, nil
}

// convertParam turns query-string values into the JSON value the
// parameter's schema declares: numbers and booleans parse when they can
// (else stay strings, for validation to report), arrays take every value,
// objects parse as JSON.
func convertParam(ps *toolenv.Schema, vs []string) any {
	if len(vs) == 0 {
		return nil
	}
	typ := ""
	if ps != nil {
		typ = ps.Type
	}
	one := func(t, v string) any {
		switch t {
		case "integer", "number":
			if toolenv.IsJSONNumber(v) {
				return json.Number(v)
			}
			// "07" in a URL means 7; json.Number("07") is not JSON.
			if c, err := toolenv.CanonicalNumber(v); err == nil {
				return json.Number(c)
			}
		case "boolean":
			if b, err := strconv.ParseBool(v); err == nil {
				return b
			}
		case "object":
			var m map[string]any
			if toolenv.DecodeJSON([]byte(v), &m) == nil {
				return m
			}
		case "null":
			if v == "" || v == "null" {
				return nil
			}
		}
		return v
	}
	if typ == "array" {
		itemType := ""
		if ps.Items != nil {
			itemType = ps.Items.Type
		}
		if len(vs) == 1 && strings.HasPrefix(vs[0], "[") {
			var a []any
			if toolenv.DecodeJSON([]byte(vs[0]), &a) == nil {
				return a
			}
		}
		out := make([]any, len(vs))
		for i, v := range vs {
			out[i] = one(itemType, v)
		}
		return out
	}
	return one(typ, vs[len(vs)-1])
}

// splitArray splits the one value of an array parameter whose items are
// written in it (openapi.MetaArrayFormat: csv, ssv, pipes: a Swagger 2.0
// collectionFormat) into its items; other values are returned as they
// are.
func splitArray(tool *toolenv.Tool, name string, vs []string) []string {
	sep := ""
	switch tool.Meta[openapi.MetaArrayFormat+name] {
	case "csv":
		sep = ","
	case "ssv":
		sep = " "
	case "pipes":
		sep = "|"
	default:
		return vs
	}
	if len(vs) != 1 || strings.HasPrefix(vs[0], "[") {
		return vs
	}
	if vs[0] == "" {
		return []string{}
	}
	parts := strings.Split(vs[0], sep)
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// formArgs reads the arguments of a form body (application/x-www-form-
// urlencoded or multipart/form-data) sent to the bound route of a tool
// that takes one (Meta["content_type"], a Swagger 2.0 document's formData
// parameters): ok is false when the request's body is not a form.
// Uploaded files are taken as their content, as text.
func formArgs(w http.ResponseWriter, r *http.Request, tool *toolenv.Tool, max int64) (form map[string][]string, ok bool, res *toolenv.Result) {
	ct := tool.Meta["content_type"]
	if r.Method == http.MethodGet || (!strings.HasPrefix(ct, "application/x-www-form-urlencoded") && !strings.HasPrefix(ct, "multipart/form-data")) {
		return nil, false, nil
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/x-www-form-urlencoded" && mt != "multipart/form-data" {
		return nil, false, nil
	}
	r.Body = http.MaxBytesReader(w, r.Body, max)
	var err error
	if mt == "multipart/form-data" {
		err = r.ParseMultipartForm(max)
	} else {
		err = r.ParseForm()
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, false, toolenv.Errorf(toolenv.StatusTooLarge, "send a smaller body", "request body over the server's limit of %d bytes", max)
		}
		return nil, false, toolenv.Errorf(toolenv.StatusBadRequest, "send the form as "+mt, "the form body does not parse: %v", err)
	}
	form = map[string][]string{}
	for k, vs := range r.PostForm {
		form[k] = vs
	}
	if r.MultipartForm != nil {
		for k, files := range r.MultipartForm.File {
			for _, fh := range files {
				f, err := fh.Open()
				if err != nil {
					return nil, false, toolenv.Errorf(toolenv.StatusBadRequest, "", "reading the uploaded file %q: %v", k, err)
				}
				b, err := io.ReadAll(f)
				f.Close()
				if err != nil {
					return nil, false, toolenv.Errorf(toolenv.StatusBadRequest, "", "reading the uploaded file %q: %v", k, err)
				}
				form[k] = append(form[k], string(b))
			}
		}
	}
	return form, true, nil
}
