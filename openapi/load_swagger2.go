package openapi

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	toolenv "github.com/toolenv/toolenv"
	"go.yaml.in/yaml/v3"
)

// Swagger 2.0 documents (most published API descriptions still are) are
// converted to OpenAPI 3.0 with kin-openapi's openapi2conv and then read
// like any other document, so the same rules and errors apply. Before
// converting, fromSwagger2 refuses, naming the place, what the converter
// would silently change or drop:
//
//   - collectionFormat tsv (OpenAPI 3 has no tab-delimited style);
//   - a $ref to another file (the conversion works on one document: bundle
//     it first) or one that does not resolve;
//   - two body parameters, or body and formData parameters, in one
//     operation; a parameter of type file outside formData; a parameter
//     in a place Swagger 2.0 does not have;
//   - a host with a scheme or a path in it.
//
// An array parameter without collectionFormat is csv, as Swagger 2.0
// says (the converter would take OpenAPI 3's default, one value per
// repetition). The order of paths, methods, properties and form fields is
// the Swagger document's: its key tree is laid over the converted one.

// swagger2Document is a converted Swagger 2.0 document: OpenAPI 3.0 JSON
// and the key order to read it in.
type swagger2Document struct {
	json  []byte
	order *keyTree
}

// fromSwagger2 converts data, a Swagger 2.0 document (JSON or YAML).
func fromSwagger2(data []byte) (doc *swagger2Document, err error) {
	var root any
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, &toolenv.Error{Status: toolenv.StatusBadRequest, Message: "the Swagger 2.0 document is neither JSON nor YAML", Hint: "fix the syntax error the YAML parser reports", Err: err}
	}
	tree, err := jsonTree(root, 0)
	if err != nil {
		return nil, toolenv.Errorw(toolenv.StatusBadRequest, "write the document as JSON or YAML with string keys", "the Swagger 2.0 document: %v", err)
	}
	top, ok := tree.(map[string]any)
	if !ok {
		return nil, toolenv.Errorw(toolenv.StatusBadRequest, "a Swagger 2.0 document is an object with swagger: \"2.0\"", "the Swagger 2.0 document is not an object")
	}
	if v := fmt.Sprint(top["swagger"]); v != "2.0" && v != "2" {
		return nil, toolenv.Errorw(toolenv.StatusBadRequest, "toolenv reads Swagger 2.0 and OpenAPI 3.0/3.1", "unsupported Swagger version %q", v)
	}
	if err := checkSwagger2(top); err != nil {
		return nil, err
	}
	draft04Schemas(top)
	if where := brokenRef(data, ""); where != "" {
		return nil, toolenv.Errorw(toolenv.StatusBadRequest, "every $ref must point to something that exists, e.g. #/definitions/Pet", "%s", where)
	}
	raw, err := json.Marshal(top)
	if err != nil {
		return nil, toolenv.Errorw(toolenv.StatusBadRequest, "", "the Swagger 2.0 document does not encode as JSON: %v", err)
	}
	var doc2 openapi2.T
	if err := json.Unmarshal(raw, &doc2); err != nil {
		return nil, &toolenv.Error{Status: toolenv.StatusBadRequest, Message: "the Swagger 2.0 document does not load", Hint: "check it against the Swagger 2.0 specification", Err: err}
	}
	defer func() {
		if p := recover(); p != nil {
			doc, err = nil, toolenv.Errorw(toolenv.StatusBadRequest, "check it against the Swagger 2.0 specification", "the Swagger 2.0 converter failed on this document: %v", p)
		}
	}()
	doc3, err := openapi2conv.ToV3(&doc2)
	if err != nil {
		return nil, &toolenv.Error{Status: toolenv.StatusBadRequest, Message: "the Swagger 2.0 document does not convert to OpenAPI 3", Hint: "check it against the Swagger 2.0 specification", Err: err}
	}
	formBodies(doc3)
	out, err := json.Marshal(doc3)
	if err != nil {
		return nil, toolenv.Errorw(toolenv.StatusBadRequest, "", "the converted document does not encode: %v", err)
	}
	order := parseKeyTree(out)
	layOrder(order, parseKeyTree(data), top)
	return &swagger2Document{json: out, order: order}, nil
}

// jsonTree turns a YAML value into a JSON one: string keys (an unquoted
// response code such as 200 becomes "200"), numbers that JSON can hold.
func jsonTree(v any, depth int) (any, error) {
	if depth > maxTreeDepth {
		return nil, fmt.Errorf("it nests more than %d levels deep", maxTreeDepth)
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			t, err := jsonTree(val, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = t
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			t, err := jsonTree(val, depth+1)
			if err != nil {
				return nil, err
			}
			out[fmt.Sprint(k)] = t
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			t, err := jsonTree(val, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = t
		}
		return out, nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, fmt.Errorf("the number %v is not JSON", x)
		}
	}
	return v, nil
}

// swagger2Methods are the operations of a Swagger 2.0 path item.
var swagger2Methods = []string{"get", "put", "post", "delete", "options", "head", "patch"}

// checkSwagger2 refuses what the conversion would lose, naming where it
// is; it sets collectionFormat csv on array parameters without one.
func checkSwagger2(top map[string]any) error {
	if host, ok := top["host"].(string); ok && strings.ContainsAny(host, "/") {
		return toolenv.Errorw(toolenv.StatusBadRequest, "host is the host name (and port) only: put the scheme in schemes and the path in basePath",
			"#/host %q is not a host name", host)
	}
	var errs []error
	walkRefs(top, place{}, func(ref string, at place) {
		if !strings.HasPrefix(ref, "#") && len(errs) == 0 {
			errs = append(errs, toolenv.Errorw(toolenv.StatusBadRequest, "bundle the document into one file first (for example with swagger-cli bundle), or convert it to OpenAPI 3",
				"%s: $ref %q names another file: toolenv converts Swagger 2.0 documents of one file", at, ref))
		}
	}, 0)
	if len(errs) > 0 {
		return errs[0]
	}
	params, _ := top["parameters"].(map[string]any)
	resolve := func(p any) map[string]any {
		m, _ := p.(map[string]any)
		if ref, ok := m["$ref"].(string); ok {
			name, found := strings.CutPrefix(ref, "#/parameters/")
			if found {
				m, _ = params[pointerUnescaper.Replace(name)].(map[string]any)
			}
		}
		return m
	}
	checkParam := func(p map[string]any, at place) error {
		in, _ := p["in"].(string)
		switch in {
		case "query", "header", "path", "formData", "body":
		default:
			return toolenv.Errorw(toolenv.StatusBadRequest, "in is one of query, header, path, formData, body",
				"%s: parameter %q is in %q, which Swagger 2.0 does not have", at, p["name"], in)
		}
		if p["type"] == "file" && in != "formData" {
			return toolenv.Errorw(toolenv.StatusBadRequest, "a file is uploaded as a formData parameter (consumes: multipart/form-data)",
				"%s: parameter %q of type file is in %s", at, p["name"], in)
		}
		for q, sub := p, at; q != nil; q, sub = asMap(q["items"]), sub.child("items") {
			cf, _ := q["collectionFormat"].(string)
			if cf == "tsv" {
				return toolenv.Errorw(toolenv.StatusBadRequest, "use csv, ssv, pipes or multi: OpenAPI 3 has no tab-separated style",
					"%s: collectionFormat tsv of parameter %q has no OpenAPI 3 equivalent", sub, p["name"])
			}
			if q["type"] == "array" && cf == "" && (in == "query" || in == "formData") {
				q["collectionFormat"] = "csv" // Swagger 2.0's default
			}
			if q["type"] != "array" {
				break
			}
		}
		return nil
	}
	for name, p := range params {
		if m, ok := p.(map[string]any); ok {
			if err := checkParam(m, place{ptr: []string{"parameters", name}}); err != nil {
				return err
			}
		}
	}
	paths, _ := top["paths"].(map[string]any)
	for _, path := range sortedKeys(paths) {
		item, _ := paths[path].(map[string]any)
		itemAt := place{ptr: []string{"paths", path}}
		shared, _ := item["parameters"].([]any)
		for i, p := range shared {
			if m := resolve(p); m != nil {
				if err := checkParam(m, itemAt.index("parameters", i)); err != nil {
					return err
				}
			}
		}
		for _, method := range swagger2Methods {
			op, ok := item[method].(map[string]any)
			if !ok {
				continue
			}
			opAt := itemAt.child(method)
			list, _ := op["parameters"].([]any)
			var bodies, forms []string
			seen := map[string]bool{}
			count := func(m map[string]any, at place) {
				key := fmt.Sprint(m["in"], " ", m["name"])
				if seen[key] {
					return
				}
				seen[key] = true
				switch m["in"] {
				case "body":
					bodies = append(bodies, at.String())
				case "formData":
					forms = append(forms, at.String())
				}
			}
			for i, p := range list {
				if m := resolve(p); m != nil {
					if err := checkParam(m, opAt.index("parameters", i)); err != nil {
						return err
					}
					count(m, opAt.index("parameters", i))
				}
			}
			for i, p := range shared {
				if m := resolve(p); m != nil {
					count(m, itemAt.index("parameters", i))
				}
			}
			switch {
			case len(bodies) > 1:
				return toolenv.Errorw(toolenv.StatusBadRequest, "an operation has at most one body parameter: merge them into one object schema",
					"%s %s: %d body parameters (%s)", strings.ToUpper(method), path, len(bodies), strings.Join(bodies, ", "))
			case len(bodies) > 0 && len(forms) > 0:
				return toolenv.Errorw(toolenv.StatusBadRequest, "an operation takes a body parameter or formData parameters, not both",
					"%s %s: a body parameter (%s) beside formData parameters (%s)", strings.ToUpper(method), path, bodies[0], forms[0])
			}
		}
	}
	return nil
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

// draft04Schemas rewrites, in every schema of a Swagger 2.0 document,
// what the converter cannot read as Swagger 2.0's own JSON Schema allows
// it:
//
//   - items given as a list (a draft-04 tuple) becomes the schema of the
//     list's items: its one schema, or the one all its schemas are; a
//     tuple of different schemas takes any items (OpenAPI 3.0 has no
//     tuples). API descriptions write "items": [{"type": "string"}] for a
//     list of strings;
//   - under additionalProperties, which the converter reads as OpenAPI 3
//     already (and so neither converts nor resolves), the schema is made
//     OpenAPI 3: $refs to #/definitions/… point to #/components/schemas/…
//     (nested under properties, items or allOf, they were left pointing
//     nowhere), a discriminator names its property ({"propertyName": …}),
//     type file is a binary string and x-nullable is nullable.
func draft04Schemas(top map[string]any) {
	var schema func(v any, depth int, v3 bool)
	schema = func(v any, depth int, v3 bool) {
		m := asMap(v)
		if m == nil || depth > maxTreeDepth {
			return
		}
		if list, ok := m["items"].([]any); ok {
			var one any = map[string]any{}
			if len(list) > 0 {
				one = list[0]
				first, _ := json.Marshal(list[0])
				for _, x := range list[1:] {
					if b, _ := json.Marshal(x); string(b) != string(first) {
						one = map[string]any{}
						break
					}
				}
			}
			m["items"] = one
		}
		if v3 {
			if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#/definitions/") {
				m["$ref"] = "#/components/schemas/" + strings.TrimPrefix(ref, "#/definitions/")
			}
			if d, ok := m["discriminator"].(string); ok {
				m["discriminator"] = map[string]any{"propertyName": d}
			}
			if m["type"] == "file" {
				m["type"], m["format"] = "string", "binary"
			}
			if n, ok := m["x-nullable"].(bool); ok {
				delete(m, "x-nullable")
				m["nullable"] = n
			}
		}
		schema(m["items"], depth+1, v3)
		schema(m["not"], depth+1, v3)
		schema(m["additionalProperties"], depth+1, true)
		for _, x := range asList(m["allOf"]) {
			schema(x, depth+1, v3)
		}
		for _, x := range asMap(m["properties"]) {
			schema(x, depth+1, v3)
		}
	}
	params := func(v any) {
		for _, p := range asList(v) {
			schema(asMap(p)["schema"], 0, false)
		}
	}
	responses := func(v any) {
		for _, r := range asMap(v) {
			schema(asMap(r)["schema"], 0, false)
		}
	}
	for _, d := range asMap(top["definitions"]) {
		schema(d, 0, false)
	}
	for _, p := range asMap(top["parameters"]) {
		schema(asMap(p)["schema"], 0, false)
	}
	responses(top["responses"])
	for _, item := range asMap(top["paths"]) {
		params(asMap(item)["parameters"])
		for _, m := range swagger2Methods {
			op := asMap(asMap(item)[m])
			params(op["parameters"])
			responses(op["responses"])
		}
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// walkRefs calls fn for every $ref string of the tree, with its place.
func walkRefs(v any, at place, fn func(ref string, at place), depth int) {
	if depth > maxTreeDepth {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			fn(ref, at)
		}
		for _, k := range sortedKeys(x) {
			walkRefs(x[k], at.child(k), fn, depth+1)
		}
	case []any:
		for i, item := range x {
			walkRefs(item, at.child(strconv.Itoa(i)), fn, depth+1)
		}
	}
}

// layOrder puts the converted document's keys in the Swagger document's
// order: paths and methods, the definitions (now components/schemas), the
// shared parameters and responses, and in each operation its body
// parameter's schema (now the request body's), its form fields (now the
// request body's properties) and its responses' schemas.
func layOrder(dst, src *keyTree, top map[string]any) {
	if dst == nil || src == nil {
		return
	}
	overlay(dst, src)
	comps := dst.kid("components")
	overlay(comps.kid("schemas"), src.kid("definitions"))
	overlay(comps.kid("parameters"), src.kid("parameters"))
	for _, name := range src.kid("parameters").keysOrNil() {
		for _, mt := range comps.kid("requestBodies").kid(name).kid("content").keysOrNil() {
			overlay(comps.kid("requestBodies").kid(name).kid("content").kid(mt).kid("schema"), src.kid("parameters").kid(name).kid("schema"))
		}
	}
	for _, name := range src.kid("responses").keysOrNil() {
		for _, mt := range comps.kid("responses").kid(name).kid("content").keysOrNil() {
			overlay(comps.kid("responses").kid(name).kid("content").kid(mt).kid("schema"), src.kid("responses").kid(name).kid("schema"))
		}
	}
	paths, _ := top["paths"].(map[string]any)
	for _, path := range src.kid("paths").keysOrNil() {
		sItem, dItem := src.kid("paths").kid(path), dst.kid("paths").kid(path)
		item, _ := paths[path].(map[string]any)
		for _, method := range swagger2Methods {
			sOp, dOp := sItem.kid(method), dItem.kid(method)
			if sOp == nil || dOp == nil {
				continue
			}
			op, _ := item[method].(map[string]any)
			list, _ := op["parameters"].([]any)
			shared, _ := item["parameters"].([]any)
			body := dOp.kid("requestBody").kid("content")
			var fields []string
			for i, p := range append(append([]any(nil), list...), shared...) {
				m := asMap(p)
				var sSchema *keyTree
				if i < len(list) {
					sSchema = sOp.kid("parameters").item(i).kid("schema")
				} else {
					sSchema = sItem.kid("parameters").item(i - len(list)).kid("schema")
				}
				switch m["in"] {
				case "body":
					for _, mt := range body.keysOrNil() {
						overlay(body.kid(mt).kid("schema"), sSchema)
					}
				case "formData":
					if name, ok := m["name"].(string); ok {
						fields = append(fields, name)
					}
				}
			}
			if len(fields) > 0 {
				for _, mt := range body.keysOrNil() {
					overlay(body.kid(mt).kid("schema").kid("properties"), &keyTree{keys: fields})
				}
			}
			for _, code := range sOp.kid("responses").keysOrNil() {
				for _, mt := range dOp.kid("responses").kid(code).kid("content").keysOrNil() {
					overlay(dOp.kid("responses").kid(code).kid("content").kid(mt).kid("schema"), sOp.kid("responses").kid(code).kid("schema"))
				}
			}
		}
	}
}

// overlay orders dst's keys as src lists them (the others after, as they
// were) and does the same below every key both have.
func overlay(dst, src *keyTree) {
	if dst == nil || src == nil || dst.kids == nil {
		return
	}
	dst.keys = ordered(setOf(dst.keys), src.keys)
	for _, k := range dst.keys {
		if s := src.kid(k); s != nil {
			overlay(dst.kids[k], s)
		}
	}
}

func setOf(keys []string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// kid returns the subtree under key k, or nil.
func (t *keyTree) kid(k string) *keyTree {
	if t == nil || t.kids == nil {
		return nil
	}
	return t.kids[k]
}

// item returns the i-th item of a sequence, or nil.
func (t *keyTree) item(i int) *keyTree {
	if t == nil || i < 0 || i >= len(t.items) {
		return nil
	}
	return t.items[i]
}

// keysOrNil returns a mapping's keys, nil for anything else.
func (t *keyTree) keysOrNil() []string {
	if t == nil {
		return nil
	}
	return t.keys
}

// formBodies finishes what the converter leaves of formData parameters:
// a form with a required field is a required body (Swagger 2.0 marks the
// fields, OpenAPI 3 the body), and the converter's x-formData-name marks
// on the fields go.
func formBodies(doc *openapi3.T) {
	if doc.Paths == nil {
		return
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			rb := op.RequestBody.Value
			for mt, media := range rb.Content {
				if !strings.HasPrefix(mt, "application/x-www-form-urlencoded") && !strings.HasPrefix(mt, "multipart/form-data") {
					continue
				}
				if media == nil || media.Schema == nil || media.Schema.Value == nil {
					continue
				}
				if len(media.Schema.Value.Required) > 0 {
					rb.Required = true
				}
				for _, p := range media.Schema.Value.Properties {
					if p != nil && p.Ref == "" && p.Value != nil {
						delete(p.Value.Extensions, "x-formData-name")
					}
				}
			}
		}
	}
}
