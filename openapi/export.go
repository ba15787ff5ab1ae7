package openapi

import (
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// GenericPath is the REST route of a tool that has no HTTP binding of its
// own: POST with the arguments as a JSON object body (GET with query
// parameters is accepted too).
func GenericPath(collection, name string) string { return "/tools/" + collection + "/" + name }

// Document returns the OpenAPI 3.1 document of c, with serverURL (may be
// empty) as its server. Tools with a Binding appear at their own method and
// path, their parameters split into path, query, header and body as the
// binding says; the others at GenericPath with a JSON body. Hidden tools
// are left out. Output is deterministic.
func Document(c *toolenv.Collection, serverURL string) map[string]any {
	version := c.Version
	if version == "" {
		version = "1"
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       c.Name,
			"version":     version,
			"description": c.Description,
		},
	}
	if serverURL != "" {
		doc["servers"] = []any{map[string]any{"url": strings.TrimRight(serverURL, "/")}}
	}
	paths := map[string]map[string]any{}
	tools := c.Listed()
	sort.SliceStable(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	for _, t := range tools {
		path, method := GenericPath(c.Name, t.Name), "post"
		bound := t.Binding != nil && t.Binding.Path != ""
		if bound {
			path, method = t.Binding.Path, strings.ToLower(t.Binding.Method)
			if method == "" {
				method = "get"
			}
		}
		op := operation(t, bound, method)
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		paths[path][method] = op
	}
	p := make(map[string]any, len(paths))
	for k, v := range paths {
		p[k] = v
	}
	doc["paths"] = p
	return doc
}

func operation(t *toolenv.Tool, bound bool, method string) map[string]any {
	op := map[string]any{"operationId": t.Name}
	if t.Title != "" {
		op["summary"] = t.Title
	}
	if t.Description != "" {
		op["description"] = t.Description
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
	body := toolenv.ObjectSchema()
	var params []any
	for _, name := range in.Names() {
		ps := in.Properties[name]
		where := "body"
		if bound {
			where = t.Binding.ParamIn(name)
			if where == "body" && (method == "get" || method == "delete") {
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
		params = append(params, param)
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	if len(body.Properties) > 0 || !bound {
		op["requestBody"] = map[string]any{
			"required": len(body.Required) > 0,
			"content":  map[string]any{"application/json": map[string]any{"schema": body}},
		}
	}
	resp := map[string]any{"description": "The API's response."}
	if t.Output != nil {
		resp["content"] = map[string]any{"application/json": map[string]any{"schema": t.Output}}
	} else if len(t.OutputExample) > 0 {
		resp["content"] = map[string]any{"application/json": map[string]any{"example": t.OutputExample}}
	}
	op["responses"] = map[string]any{
		"200":     resp,
		"default": map[string]any{"description": "An error: {\"status\", \"error\", \"hint\", \"problems\"}."},
	}
	return op
}
