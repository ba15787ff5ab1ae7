package openapi

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// GenericPath is the REST route of a tool that has no HTTP binding of its
// own: POST with the arguments as a JSON object body (GET with query
// parameters is accepted too).
func GenericPath(collection, name string) string { return "/tools/" + collection + "/" + name }

// SessionHeader is the request and response header that carries a task
// session id (SLOT/SEL state) on REST and /virtual requests.
const SessionHeader = "X-Toolenv-Session"

// DocumentOptions say what the server a document describes asks of its
// clients.
type DocumentOptions struct {
	// ServerURL is the server's URL (may be empty: no servers entry).
	ServerURL string
	// BearerAuth says the server asks every request for a bearer token
	// (toolenv serve --auth-token-env): the document then declares an
	// HTTP bearer security scheme and requires it everywhere; without it
	// the document says that no security is required (security: []).
	BearerAuth bool
	// Recorded, when set, gives recorded answers of a tool (calls the
	// cache holds) to show as examples beside the documented ones. It
	// may return nil.
	Recorded func(t *toolenv.Tool) []toolenv.Example
}

// Document returns the OpenAPI 3.1 document of c, with serverURL (may be
// empty) as its server and no security required: DocumentWith with
// DocumentOptions{ServerURL: serverURL}.
func Document(c *toolenv.Collection, serverURL string) map[string]any {
	return DocumentWith(c, DocumentOptions{ServerURL: serverURL})
}

// DocumentWith returns the OpenAPI 3.1 document of c. Tools with a
// Binding appear at their own method and path, their parameters split
// into path, query, header and body as the binding says; the others at
// GenericPath with a JSON body. Hidden tools are left out, except in a
// collection with task sessions (SLOT/SEL), whose document describes the
// whole session protocol a client follows: POST /sessions, the session
// header on every operation, the hidden initialisation tool, DELETE
// /sessions/{id}.
//
// Every operation has a summary, its documented examples (and recorded
// ones, see DocumentOptions.Recorded) as named examples, and a response
// per error status toolenv answers with (ErrorResponses), each with the
// JSON problem body as its schema (components/schemas/Problem). Schema
// keywords that are not JSON Schema (ToolBench's example_value, optional)
// are written as x- extensions, example_value also as an example. The
// document lints clean with Redocly's recommended rules. Output is
// deterministic.
func DocumentWith(c *toolenv.Collection, opts DocumentOptions) map[string]any {
	version := c.Version
	if version == "" {
		version = "1"
	}
	info := map[string]any{"title": c.Name, "version": version}
	if c.Description != "" {
		info["description"] = c.Description
	}
	doc := map[string]any{"openapi": "3.1.0", "info": info}
	if opts.ServerURL != "" {
		doc["servers"] = []any{map[string]any{"url": strings.TrimRight(opts.ServerURL, "/")}}
	}
	components := map[string]any{}
	if opts.BearerAuth {
		components["securitySchemes"] = map[string]any{"bearerAuth": map[string]any{
			"type": "http", "scheme": "bearer",
			"description": "The token in the variable named by the server's --auth-token-env, as Authorization: Bearer <token>.",
		}}
		doc["security"] = []any{map[string]any{"bearerAuth": []any{}}}
	} else {
		doc["security"] = []any{}
	}
	sessions := c.Policy.Sessions
	tools := c.Listed()
	if sessions {
		tools = append([]*toolenv.Tool(nil), c.Tools...)
	}
	routes := boundRoutes(c, tools)
	sort.SliceStable(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	paths := map[string]map[string]any{}
	used := usage{codes: map[int]bool{}, params: map[string]bool{}, arg: &exampleArg{}}
	groups := map[string]string{}
	for _, t := range tools {
		path, method := GenericPath(c.Name, t.Name), "post"
		rt, bound := routes[t]
		if bound {
			path, method = rt[0], rt[1]
		}
		var recorded []toolenv.Example
		if opts.Recorded != nil {
			recorded = opts.Recorded(t)
		}
		op := operation(t, bound, method, path, sessions, recorded, used)
		if !t.Hidden() {
			used.noteArg(t.Input)
		}
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		paths[path][method] = op
		if t.Group != "" && t.GroupDescription != "" {
			groups[t.Group] = t.GroupDescription
		}
	}
	if sessions {
		sessionPaths(paths, used)
		if groups["sessions"] == "" {
			groups["sessions"] = "Task sessions: the state of SLOT/SEL tasks (the starting table and every labelled result)."
		}
		if ps := sessionParameters(used); len(ps) > 0 {
			components["parameters"] = ps
		}
		components["headers"] = map[string]any{"Session": sessionHeaderObject()}
	}
	p := make(map[string]any, len(paths))
	for k, v := range paths {
		p[k] = v
	}
	doc["paths"] = p
	if len(used.codes) > 0 {
		components["schemas"] = problemSchemas()
		components["responses"] = used.responses()
	}
	if len(components) > 0 {
		doc["components"] = components
	}
	if len(groups) > 0 {
		names := make([]string, 0, len(groups))
		for g := range groups {
			names = append(names, g)
		}
		sort.Strings(names)
		tags := make([]any, len(names))
		for i, g := range names {
			tags[i] = map[string]any{"name": g, "description": groups[g]}
		}
		doc["tags"] = tags
	}
	return doc
}

// boundRoutes returns the route (path, lowercase method) each tool is
// described at when it is not its generic route: its binding's, as the
// server mounts it (toolenv serve's bound routes: not for ToolBench
// collections, whose documented URLs are RapidAPI's; a path matched
// without its trailing slash; the first tool of the collection keeps a
// route two bind). A tool whose route differs from another's only in its
// parameters' names (GET /items/{id} beside DELETE /items/{itemId}) is
// described at its generic route, where it is served too, since one
// path of a document has one spelling.
func boundRoutes(c *toolenv.Collection, tools []*toolenv.Tool) map[*toolenv.Tool][2]string {
	out := map[*toolenv.Tool][2]string{}
	if c.Kind == "toolbench" {
		return out
	}
	shapes := map[string]string{} // path with placeholders blanked → path as written
	taken := map[string]bool{}
	for _, t := range tools {
		if t.Binding == nil || !strings.HasPrefix(t.Binding.Path, "/") || strings.ContainsAny(t.Binding.Path, "?#") {
			continue
		}
		p := "/" + strings.Trim(t.Binding.Path, "/")
		m := strings.ToLower(t.Binding.Method)
		if m == "" {
			m = "get"
		}
		shape := placeholder.ReplaceAllString(p, "{}")
		if other, ok := shapes[shape]; ok && other != p || taken[m+" "+shape] {
			continue
		}
		shapes[shape] = p
		taken[m+" "+shape] = true
		out[t] = [2]string{p, m}
	}
	return out
}

// placeholder matches a path template's parameters.
var placeholder = regexp.MustCompile(`\{[^{}/]*\}`)

func operation(t *toolenv.Tool, bound bool, method, path string, sessions bool, recorded []toolenv.Example, used usage) map[string]any {
	op := map[string]any{"operationId": t.Name, "summary": summary(t)}
	desc := t.Description
	if t.Hidden() {
		desc = strings.TrimSpace("Session set-up (hidden from agents' tool lists): call it first in a task's session, with the arguments of the task's meta.init calls; called without " +
			SessionHeader + " it opens a new session and answers its id in that header. " + desc)
		op["x-toolenv-hidden"] = true
	}
	if desc != "" {
		op["description"] = desc
	}
	if t.Group != "" {
		op["tags"] = []string{t.Group}
	}
	if t.Deprecated != nil {
		op["deprecated"] = true
		if t.Deprecated.Successor != "" {
			op["x-successor"] = t.Deprecated.Successor
		}
	}
	op["x-toolenv-id"] = t.ID
	in := t.Input
	if in == nil {
		in = toolenv.ObjectSchema()
	}
	in = exportSchema(in)
	body := toolenv.ObjectSchema()
	var params []any
	declared := map[string]bool{}
	for _, name := range in.Names() {
		ps := in.Properties[name]
		where := "body"
		if bound {
			where = t.Binding.ParamIn(name)
			if where == "path" && !strings.Contains(path, "{"+name+"}") {
				where = "query" // the path has no place for it
			}
			if where == "body" && (method == "get" || method == "delete" || method == "head") {
				where = "query"
			}
		}
		if where == "body" {
			body.SetProp(name, ps)
			if in.IsRequired(name) {
				body.Required = append(body.Required, name)
			}
			continue
		}
		param := map[string]any{
			"name":     name,
			"in":       where,
			"required": where == "path" || in.IsRequired(name),
			"schema":   ps,
		}
		if ps != nil && ps.Description != "" {
			param["description"] = ps.Description
		}
		if ex, ok := firstArg(t.Examples, name); ok && conforms(ex, ps) {
			param["example"] = ex
		}
		declared[where+" "+name] = true
		params = append(params, param)
	}
	if bound {
		// A placeholder no argument fills still names a path parameter.
		for _, m := range placeholder.FindAllString(path, -1) {
			name := m[1 : len(m)-1]
			if !declared["path "+name] {
				params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
				declared["path "+name] = true
			}
		}
	}
	if sessions {
		name := "Session"
		if t.Hidden() {
			name = "SessionOptional"
		}
		used.params[name] = true
		params = append(params, map[string]any{"$ref": "#/components/parameters/" + name})
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	hasBody := len(body.Properties) > 0 || !bound
	if hasBody {
		if in.AdditionalProperties != nil && !bound {
			body.AdditionalProperties = in.AdditionalProperties
		}
		media := map[string]any{"schema": body}
		if exs := requestExamples(t, body); len(exs) > 0 {
			media["examples"] = exs
		}
		op["requestBody"] = map[string]any{
			"required": len(body.Required) > 0,
			"content":  map[string]any{"application/json": media},
		}
	}
	resp := map[string]any{"description": "The API's response."}
	media := map[string]any{}
	if t.Output != nil {
		media["schema"] = exportSchema(t.Output)
	}
	if exs := responseExamples(t, recorded); len(exs) > 0 {
		media["examples"] = exs
	} else if len(t.OutputExample) > 0 && json.Valid(t.OutputExample) {
		media["example"] = t.OutputExample
	}
	if len(media) > 0 {
		resp["content"] = map[string]any{"application/json": media}
	}
	if sessions {
		resp["headers"] = map[string]any{SessionHeader: map[string]any{"$ref": "#/components/headers/Session"}}
	}
	responses := map[string]any{"200": resp}
	for _, e := range ErrorResponsesOf(t) {
		responses[fmt.Sprint(e.Code)] = map[string]any{"$ref": "#/components/responses/" + e.Name}
		used.codes[e.Code] = true
	}
	op["responses"] = responses
	return op
}

// summary is an operation's one-line summary: the tool's title, else its
// name.
func summary(t *toolenv.Tool) string {
	if s := strings.TrimSpace(t.Title); s != "" {
		return s
	}
	return t.Name
}

// exampleName is the name of a tool's i-th example (from 0), unique
// among its examples.
func exampleName(i int) string { return fmt.Sprintf("example%d", i+1) }

// recordedName is the name of the i-th recorded answer shown.
func recordedName(i int) string { return fmt.Sprintf("recorded%d", i+1) }

// ExampleNames returns the names under which DocumentWith shows t's
// documented answers and then the recorded ones, in that order: the
// names a Prefer: example=NAME header selects.
func ExampleNames(t *toolenv.Tool, recorded []toolenv.Example) []string {
	var out []string
	for i, ex := range t.Examples {
		if answerExample(ex) {
			out = append(out, exampleName(i))
		}
	}
	for i, ex := range recorded {
		if answerExample(ex) {
			out = append(out, recordedName(i))
		}
	}
	return out
}

// ExampleAnswer returns the answer DocumentWith shows under name for t,
// or false.
func ExampleAnswer(t *toolenv.Tool, recorded []toolenv.Example, name string) (json.RawMessage, bool) {
	for i, ex := range t.Examples {
		if answerExample(ex) && exampleName(i) == name {
			return ex.Response, true
		}
	}
	for i, ex := range recorded {
		if answerExample(ex) && recordedName(i) == name {
			return ex.Response, true
		}
	}
	return nil, false
}

// answerExample reports whether ex documents a successful answer.
func answerExample(ex toolenv.Example) bool {
	return ex.Error == "" && len(ex.Response) > 0 && json.Valid(ex.Response)
}

func responseExamples(t *toolenv.Tool, recorded []toolenv.Example) map[string]any {
	out := map[string]any{}
	for i, ex := range t.Examples {
		if answerExample(ex) {
			out[exampleName(i)] = map[string]any{"summary": exampleSummary(ex.Args), "value": ex.Response}
		}
	}
	for i, ex := range recorded {
		if answerExample(ex) {
			out[recordedName(i)] = map[string]any{"summary": "recorded: " + exampleSummary(ex.Args), "value": ex.Response}
		}
	}
	return out
}

// requestExamples are the documented calls' arguments that go in the body
// (those body declares), under the names of their answers.
func requestExamples(t *toolenv.Tool, body *toolenv.Schema) map[string]any {
	out := map[string]any{}
	for i, ex := range t.Examples {
		if len(ex.Args) == 0 {
			continue
		}
		v := map[string]any{}
		for k, a := range ex.Args {
			if body.Properties[k] != nil {
				v[k] = a
			}
		}
		if len(v) == 0 {
			continue
		}
		out[exampleName(i)] = map[string]any{"summary": exampleSummary(ex.Args), "value": v}
	}
	return out
}

// exampleSummary shows a call's arguments in one short line.
func exampleSummary(args map[string]any) string {
	if len(args) == 0 {
		return "no arguments"
	}
	b, err := toolenv.MarshalJSONNoHTML(args)
	if err != nil {
		return "a documented call"
	}
	s := string(b)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// firstArg returns the value the first documented call gives argument
// name.
func firstArg(exs []toolenv.Example, name string) (any, bool) {
	for _, ex := range exs {
		if v, ok := ex.Args[name]; ok && v != nil {
			return v, true
		}
	}
	return nil, false
}

// sessionPaths adds the routes that open and end a task session.
func sessionPaths(paths map[string]map[string]any, used usage) {
	errs := func(codes ...int) map[string]any {
		m := map[string]any{}
		for _, code := range codes {
			for _, e := range ErrorResponses {
				if e.Code == code {
					m[fmt.Sprint(code)] = map[string]any{"$ref": "#/components/responses/" + e.Name}
					used.codes[code] = true
				}
			}
		}
		return m
	}
	create := errs(400, 503)
	create["201"] = map[string]any{
		"description": "A new task session: send its id in " + SessionHeader + " on every call of the task.",
		"headers":     map[string]any{SessionHeader: map[string]any{"$ref": "#/components/headers/Session"}},
		"content": map[string]any{"application/json": map[string]any{
			"schema": map[string]any{
				"type":     "object",
				"required": []string{"session"},
				"properties": map[string]any{
					"session":              map[string]any{"type": "string", "description": "The session id."},
					"idle_timeout_seconds": map[string]any{"type": "integer", "description": "The session ends after this long without a call."},
				},
			},
			"example": map[string]any{"session": "ts-5f0c1d7e9a2b4c6d8e0f1a2b3c4d5e6f", "idle_timeout_seconds": 1800},
		}},
	}
	paths["/sessions"] = map[string]any{"post": map[string]any{
		"operationId": "create_session",
		"summary":     "Open a task session",
		"description": "Opens a task session (SLOT/SEL state: the starting table and every labelled result) for the caller. Then call the initialisation tool with the task's meta.init arguments, then the task's tools, each with the id in " + SessionHeader + "; end it with DELETE /sessions/{id}.",
		"tags":        []string{"sessions"},
		"requestBody": map[string]any{
			"required":    true,
			"description": "An empty JSON object: the server refuses state-changing requests that are not JSON (unless they carry a bearer token), so that no web page can open sessions.",
			"content": map[string]any{"application/json": map[string]any{
				"schema":  map[string]any{"type": "object", "additionalProperties": false},
				"example": map[string]any{},
			}},
		},
		"responses": create,
	}}
	end := errs(400, 404)
	end["204"] = map[string]any{"description": "The session ended; what it held is freed."}
	paths["/sessions/{id}"] = map[string]any{"delete": map[string]any{
		"operationId": "end_session",
		"summary":     "End a task session",
		"description": "Ends the session and frees what it holds.",
		"tags":        []string{"sessions"},
		"parameters":  []any{map[string]any{"name": "id", "in": "path", "required": true, "description": "The id POST /sessions answered.", "schema": map[string]any{"type": "string"}}},
		"responses":   end,
	}}
}

func sessionParameters(used usage) map[string]any {
	param := func(required bool) map[string]any {
		d := "The task session of the call: an id from POST /sessions (or from the " + SessionHeader + " header of the initialisation tool's answer)."
		if !required {
			d = "The task session to initialise; without it, a new session is opened and its id answered in the " + SessionHeader + " response header."
		}
		return map[string]any{"name": SessionHeader, "in": "header", "required": required, "description": d, "schema": map[string]any{"type": "string"}}
	}
	out := map[string]any{}
	if used.params["Session"] {
		out["Session"] = param(true)
	}
	if used.params["SessionOptional"] {
		out["SessionOptional"] = param(false)
	}
	return out
}

func sessionHeaderObject() map[string]any {
	return map[string]any{"description": "The task session's id.", "schema": map[string]any{"type": "string"}}
}
