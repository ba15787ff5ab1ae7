package openapi

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// oasGen generates API descriptions in the shapes published ones take
// (APIs.guru's Swagger 2.0 and OpenAPI 3.0/3.1 documents), combined
// adversarially: draft-04 schema idioms (array-form items, boolean
// exclusive bounds), $ref everywhere it may stand (under
// additionalProperties, items, allOf, parameters, responses, request
// bodies, path items), recursive and oddly named definitions, every
// parameter place and type with collection formats, form and file
// uploads, vendor extensions, nullable and type lists, discriminators,
// callbacks, links, webhooks, servers with variables.
type oasGen struct {
	rng  *rand.Rand
	defs map[string]any // definitions / components.schemas
	n    int
	v    string // "2.0", "3.0.3", "3.1.0"

	doc2Params, doc2Responses, compParams, compResponses map[string]any
	recursive                                            bool // the document may hold recursive maps
}

func (g *oasGen) pick(xs ...string) string { return xs[g.rng.IntN(len(xs))] }
func (g *oasGen) coin(p int) bool          { return g.rng.IntN(100) < p }

// defName is an oddly named definition (dots, spaces, unicode in Swagger
// 2.0, whose definitions may have any name; OpenAPI 3 allows
// [a-zA-Z0-9._-]).
func (g *oasGen) defName() string {
	g.n++
	base := g.pick("Pet", "Order", "User", "Error", "Page", "Item", "Result", "Node", "Money", "Tag")
	r := g.rng.IntN(6)
	if g.v != "2.0" && (r == 1 || r == 3) {
		r = 2
	}
	switch r {
	case 0:
		return fmt.Sprintf("%s.%d", base, g.n)
	case 1:
		return fmt.Sprintf("%s %d", base, g.n)
	case 2:
		return fmt.Sprintf("v1_%s_%d", strings.ToLower(base), g.n)
	case 3:
		return fmt.Sprintf("%sÉté%d", base, g.n)
	}
	return fmt.Sprintf("%s%d", base, g.n)
}

// ref returns a $ref to a definition, made now.
func (g *oasGen) ref(depth int) map[string]any {
	name := g.defName()
	g.defs[name] = nil // taken
	g.defs[name] = g.schema(depth + 1)
	prefix := "#/definitions/"
	if g.v != "2.0" {
		prefix = "#/components/schemas/"
	}
	return map[string]any{"$ref": prefix + strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")}
}

func (g *oasGen) scalar() map[string]any {
	switch g.rng.IntN(8) {
	case 0:
		s := map[string]any{"type": "integer", "format": g.pick("int32", "int64")}
		if g.coin(40) {
			s["minimum"] = 0
			if g.v != "3.1.0" {
				s["exclusiveMinimum"] = g.coin(50)
			} else {
				s["exclusiveMinimum"] = 0
				delete(s, "minimum")
			}
		}
		if g.coin(30) {
			s["maximum"] = 1000
		}
		return s
	case 1:
		return map[string]any{"type": "number", "format": g.pick("float", "double"), "multipleOf": 0.01}
	case 2:
		return map[string]any{"type": "boolean", "default": false}
	case 3:
		return map[string]any{"type": "string", "enum": []any{"available", "pending", "sold"}}
	case 4:
		return map[string]any{"type": "string", "format": g.pick("date-time", "date", "byte", "binary", "email", "uri", "uuid", "password")}
	case 5:
		return map[string]any{"type": "string", "pattern": g.pick(`^[A-Z]{3}$`, `^\d+$`, `^[a-z0-9-]+$`), "minLength": 1, "maxLength": 64}
	case 6:
		if g.v == "3.1.0" {
			return map[string]any{"type": []any{"string", "null"}, "examples": []any{"a"}}
		}
		if g.v != "2.0" {
			return map[string]any{"type": "string", "nullable": true, "example": "a"}
		}
		return map[string]any{"type": "string", "x-nullable": true, "example": "a"}
	}
	return map[string]any{"type": "string", "description": "a string; with \"quotes\" and <html>"}
}

func (g *oasGen) schema(depth int) map[string]any {
	if depth > 3 {
		return g.scalar()
	}
	switch g.rng.IntN(15) {
	case 0, 1:
		return g.object(depth)
	case 2: // array-form items (draft-04), or one schema
		a := map[string]any{"type": "array"}
		if g.v == "2.0" && g.coin(60) {
			items := []any{g.schema(depth + 1)}
			if g.coin(30) {
				items = append(items, g.schema(depth+1))
			}
			a["items"] = items
		} else if g.v == "3.1.0" && g.coin(30) {
			a["prefixItems"] = []any{g.scalar(), g.scalar()}
		} else {
			a["items"] = g.schema(depth + 1)
		}
		if g.coin(30) {
			a["minItems"] = 1
			a["uniqueItems"] = true
		}
		return a
	case 3: // $ref under additionalProperties
		o := map[string]any{"type": "object", "additionalProperties": g.ref(depth)}
		if g.coin(40) {
			o["description"] = "a map of ids to records"
		}
		return o
	case 4:
		return map[string]any{"type": "object", "additionalProperties": g.pick("true", "false", "schema") == "schema" || g.coin(50)}
	case 5:
		return g.ref(depth)
	case 6: // allOf composition over a $ref
		return map[string]any{"allOf": []any{g.ref(depth), g.object(depth + 1)}}
	case 7: // $ref with sibling keywords (ignored before 3.1, applied in 3.1)
		r := g.ref(depth)
		r["description"] = "see the definition"
		return r
	case 8:
		if g.v == "2.0" {
			return map[string]any{"type": "object", "properties": map[string]any{"kind": map[string]any{"type": "string"}}, "required": []any{"kind"}, "discriminator": "kind"}
		}
		return map[string]any{"oneOf": []any{g.ref(depth), g.ref(depth)}}
	case 9:
		if g.v == "2.0" {
			return map[string]any{"type": "array", "items": g.ref(depth), "x-collection": true}
		}
		return map[string]any{"anyOf": []any{g.scalar(), g.object(depth + 1)}}
	case 10: // additionalProperties of additionalProperties, with $ref
		return map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "object", "additionalProperties": g.ref(depth)}}
	case 11: // a $ref into another definition (its property, its map's values, its items)
		return g.deepRef(depth)
	case 12: // a recursive map: its values are itself (swagger-parser refuses most such documents)
		if !g.recursive {
			return g.scalar()
		}
		name := g.defName()
		self := g.prefix() + name
		g.defs[name] = map[string]any{"type": "object", "properties": map[string]any{"label": g.scalar()},
			"additionalProperties": map[string]any{"$ref": self, "description": "a child"}}
		return map[string]any{"$ref": self}
	}
	return g.scalar()
}

func (g *oasGen) prefix() string {
	if g.v == "2.0" {
		return "#/definitions/"
	}
	return "#/components/schemas/"
}

// deepRef makes a definition and returns a $ref to a schema inside it.
func (g *oasGen) deepRef(depth int) map[string]any {
	name := g.defName()
	inner := g.object(depth + 2)
	var def map[string]any
	var tail string
	switch g.rng.IntN(3) {
	case 0:
		def = map[string]any{"type": "object", "properties": map[string]any{"part": inner}}
		tail = "/properties/part"
	case 1:
		def = map[string]any{"type": "object", "additionalProperties": inner}
		tail = "/additionalProperties"
	default:
		def = map[string]any{"type": "array", "items": inner}
		tail = "/items"
	}
	g.defs[name] = def
	return map[string]any{"$ref": g.prefix() + strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1") + tail}
}

func (g *oasGen) object(depth int) map[string]any {
	props := map[string]any{}
	var req []any
	for i := range 1 + g.rng.IntN(5) {
		name := g.pick("id", "name", "status", "tags", "created", "self", "meta", "x", "data", "_links", "$type", "a.b", "@id", "kebab-case")
		if i > 0 && g.coin(30) {
			name = fmt.Sprintf("%s%d", name, i)
		}
		p := g.schema(depth + 1)
		if g.coin(20) {
			p["readOnly"] = true
		}
		if g.coin(10) {
			p["x-internal-note"] = map[string]any{"any": []any{1, "two"}}
		}
		if _, dup := props[name]; dup {
			continue
		}
		props[name] = p
		if g.coin(40) {
			req = append(req, name)
		}
	}
	o := map[string]any{"type": "object", "properties": props}
	if len(req) > 0 {
		o["required"] = req
	}
	if g.coin(15) {
		o["additionalProperties"] = g.ref(depth)
	}
	if g.coin(10) {
		o["title"] = "Record"
		o["x-go-name"] = "Record"
	}
	return o
}

// param makes a parameter of a Swagger 2.0 or OpenAPI 3 operation.
func (g *oasGen) param(in, name string, required bool) map[string]any {
	p := map[string]any{"name": name, "in": in, "description": "the " + name}
	if required {
		p["required"] = true
	}
	if g.v == "2.0" {
		if in == "body" {
			p["schema"] = g.schema(1)
			return p
		}
		s := g.scalar()
		if t, ok := s["type"].(string); !ok || t == "" {
			s = map[string]any{"type": "string"}
		}
		delete(s, "x-nullable")
		for k, v := range s {
			if k != "example" {
				p[k] = v
			}
		}
		if in != "path" && g.coin(30) {
			p["type"] = "array"
			p["items"] = map[string]any{"type": g.pick("string", "integer")}
			delete(p, "format")
			delete(p, "pattern")
			delete(p, "enum")
			delete(p, "minLength")
			delete(p, "maxLength")
			delete(p, "minimum")
			delete(p, "maximum")
			delete(p, "exclusiveMinimum")
			delete(p, "multipleOf")
			delete(p, "default")
			cf := []string{"csv", "ssv", "pipes"}
			if in == "query" || in == "formData" {
				cf = append(cf, "multi")
			}
			p["collectionFormat"] = cf[g.rng.IntN(len(cf))]
		}
		if p["type"] == "file" || p["format"] == "binary" && in != "formData" {
			p["type"] = "string"
			delete(p, "format")
		}
		return p
	}
	if g.coin(15) && in == "query" {
		p["content"] = map[string]any{"application/json": map[string]any{"schema": g.object(2)}}
		return p
	}
	p["schema"] = g.scalar()
	if in == "query" && g.coin(20) {
		p["style"] = g.pick("form", "spaceDelimited", "pipeDelimited", "deepObject")
		if p["style"] == "deepObject" {
			p["schema"] = g.object(3)
		} else if p["style"] != "form" {
			p["schema"] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
		}
		p["explode"] = g.coin(50)
	}
	return p
}

// operation makes an operation with the path's parameters.
func (g *oasGen) operation(method string, pathParams []string, i int) map[string]any {
	op := map[string]any{"operationId": fmt.Sprintf("op_%d_%s", i, method), "summary": "does " + method}
	if g.coin(20) {
		delete(op, "operationId") // named from method and path
	}
	if g.coin(10) {
		op["deprecated"] = true
	}
	if g.coin(20) {
		op["tags"] = []any{g.pick("pets", "store", "users")}
	}
	var params []any
	for _, pp := range pathParams {
		params = append(params, g.param("path", pp, true))
	}
	for j := range g.rng.IntN(4) {
		params = append(params, g.param(g.pick("query", "header", "query"), fmt.Sprintf("q%d", j), g.coin(30)))
	}
	if g.coin(15) {
		params = append(params, map[string]any{"$ref": g.sharedParam()})
	}
	hasBody := method == "post" || method == "put" || method == "patch"
	if g.v == "2.0" {
		if hasBody {
			if g.coin(25) {
				params = append(params, g.param("formData", "field", true))
				if g.coin(50) {
					params = append(params, map[string]any{"name": "upload", "in": "formData", "type": "file"})
					op["consumes"] = []any{"multipart/form-data"}
				} else {
					op["consumes"] = []any{"application/x-www-form-urlencoded"}
				}
			} else {
				params = append(params, g.param("body", "body", g.coin(70)))
			}
		}
	} else if hasBody {
		content := map[string]any{}
		switch g.rng.IntN(5) {
		case 0:
			content["application/x-www-form-urlencoded"] = map[string]any{"schema": g.object(2)}
		case 1:
			content["multipart/form-data"] = map[string]any{"schema": map[string]any{"type": "object", "properties": map[string]any{
				"file": map[string]any{"type": "string", "format": "binary"}, "note": map[string]any{"type": "string"}}}}
		case 2:
			content["application/octet-stream"] = map[string]any{"schema": map[string]any{"type": "string", "format": "binary"}}
		default:
			content[g.pick("application/json", "application/vnd.api+json", "application/json; charset=utf-8", "*/*")] = map[string]any{"schema": g.schema(1)}
		}
		op["requestBody"] = map[string]any{"content": content, "required": g.coin(60)}
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	resp := map[string]any{}
	for _, code := range []string{"200", "201", "default", "404"}[:1+g.rng.IntN(4)] {
		r := map[string]any{"description": "the " + code + " answer"}
		if g.v == "2.0" {
			if g.coin(80) {
				r["schema"] = g.schema(1)
			}
			if g.coin(10) {
				r["headers"] = map[string]any{"X-Rate-Limit": map[string]any{"type": "integer"}}
			}
		} else if g.coin(80) {
			r["content"] = map[string]any{g.pick("application/json", "application/xml", "text/plain", "application/hal+json"): map[string]any{"schema": g.schema(1)}}
		}
		resp[code] = r
	}
	if g.coin(15) {
		resp["500"] = map[string]any{"$ref": g.sharedResponse()}
	}
	op["responses"] = resp
	if g.v != "2.0" && g.coin(10) {
		op["callbacks"] = map[string]any{"onEvent": map[string]any{"{$request.body#/callbackUrl}": map[string]any{"post": map[string]any{
			"requestBody": map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": g.object(2)}}},
			"responses":   map[string]any{"200": map[string]any{"description": "ok"}}}}}}
	}
	return op
}

func (g *oasGen) sharedParam() string {
	name := fmt.Sprintf("limit%d", g.rng.IntN(3))
	p := g.param("query", name, false)
	if g.v == "2.0" {
		g.doc2Params[name] = p
		return "#/parameters/" + name
	}
	g.compParams[name] = p
	return "#/components/parameters/" + name
}

func (g *oasGen) sharedResponse() string {
	name := "ServerError"
	if g.v == "2.0" {
		g.doc2Responses[name] = map[string]any{"description": "server error", "schema": g.ref(1)}
		return "#/responses/" + name
	}
	g.compResponses[name] = map[string]any{"description": "server error", "content": map[string]any{"application/json": map[string]any{"schema": g.ref(1)}}}
	return "#/components/responses/" + name
}

// document makes one document of version v ("2.0", "3.0.3" or "3.1.0").
func (g *oasGen) document(v string, i int) map[string]any {
	g.v, g.n = v, 0
	g.recursive = g.coin(5)
	g.defs = map[string]any{}
	g.doc2Params, g.doc2Responses, g.compParams, g.compResponses = map[string]any{}, map[string]any{}, map[string]any{}, map[string]any{}
	paths := map[string]any{}
	ops := 0
	for p := range 1 + g.rng.IntN(6) {
		var segs, pathParams []string
		for s := range 1 + g.rng.IntN(3) {
			if g.coin(35) {
				name := g.pick("id", "petId", "user-name", "org.name", "v")
				name = fmt.Sprintf("%s%d", name, s)
				pathParams = append(pathParams, name)
				segs = append(segs, "{"+name+"}")
			} else {
				segs = append(segs, g.pick("pets", "store", "v1", "users", "a.b", "files", "~me", "über"))
			}
		}
		path := "/" + strings.Join(segs, "/")
		if g.coin(10) {
			path += "/"
		}
		if g.coin(5) {
			path += fmt.Sprintf(":action%d", p)
		}
		item := map[string]any{}
		for _, m := range []string{"get", "post", "put", "delete", "patch", "head", "options"} {
			if g.coin(35) || m == "get" && len(item) == 0 && g.coin(70) {
				item[m] = g.operation(m, pathParams, ops)
				ops++
			}
		}
		if g.coin(15) {
			item["x-extension"] = "ignored"
		}
		if len(item) > 0 {
			paths[path] = item
		}
	}
	doc := map[string]any{"info": map[string]any{"title": fmt.Sprintf("Generated API %d", i), "version": "1.0", "x-origin": []any{map[string]any{"url": "https://example.com/spec"}}}}
	if v == "2.0" {
		doc["swagger"] = "2.0"
		doc["host"] = g.pick("api.example.com", "api.example.com:8443", "localhost")
		doc["basePath"] = g.pick("/", "/v2", "/api/v1")
		doc["schemes"] = []any{g.pick("https", "http")}
		if g.coin(60) {
			doc["consumes"] = []any{"application/json"}
			doc["produces"] = []any{"application/json", "application/xml"}
		}
		if len(g.doc2Params) > 0 {
			doc["parameters"] = g.doc2Params
		}
		if len(g.doc2Responses) > 0 {
			doc["responses"] = g.doc2Responses
		}
		if len(g.defs) > 0 {
			doc["definitions"] = g.defs
		}
		if g.coin(40) {
			doc["securityDefinitions"] = map[string]any{"key": map[string]any{"type": "apiKey", "name": "X-Key", "in": "header"},
				"oauth": map[string]any{"type": "oauth2", "flow": "implicit", "authorizationUrl": "https://example.com/auth", "scopes": map[string]any{"read": "read"}}}
			doc["security"] = []any{map[string]any{"key": []any{}}}
		}
	} else {
		if v == "3.1.0" && g.coin(20) {
			doc["webhooks"] = map[string]any{"newPet": map[string]any{"post": map[string]any{"requestBody": map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": g.object(2)}}},
				"responses": map[string]any{"200": map[string]any{"description": "ok"}}}}}
		}
		doc["openapi"] = v
		doc["servers"] = []any{map[string]any{"url": g.pick("https://api.example.com/v1", "{scheme}://example.com/{base}", "/relative"),
			"variables": map[string]any{"scheme": map[string]any{"default": "https"}, "base": map[string]any{"default": "api"}}}}
		comps := map[string]any{}
		if len(g.defs) > 0 {
			comps["schemas"] = g.defs
		}
		if len(g.compParams) > 0 {
			comps["parameters"] = g.compParams
		}
		if len(g.compResponses) > 0 {
			comps["responses"] = g.compResponses
		}
		if g.coin(40) {
			comps["securitySchemes"] = map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}
			doc["security"] = []any{map[string]any{"bearer": []any{}}}
		}
		if len(comps) > 0 {
			doc["components"] = comps
		}
	}
	if len(paths) > 0 || v != "3.1.0" {
		doc["paths"] = paths
	}
	return doc
}
