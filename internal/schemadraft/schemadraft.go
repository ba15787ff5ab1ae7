// Package schemadraft rewrites a JSON Schema written for an older draft
// (draft-03 to 2019-09) or in OpenAPI 3.0's dialect into JSON Schema
// 2020-12 with the same meaning, as real MCP clients accept such schemas
// (the TypeScript SDK and the MCP Inspector list and call a tool whose
// input schema uses draft-04's boolean exclusiveMinimum):
//
//   - exclusiveMinimum/exclusiveMaximum true (draft-04, OpenAPI 3.0) take
//     the value of minimum/maximum, which goes; false goes;
//   - items as an array (a tuple, up to 2019-09) becomes prefixItems, and
//     additionalItems becomes items;
//   - dependencies becomes dependentRequired (lists of names) and
//     dependentSchemas (schemas);
//   - draft-03's required: true on a property joins its object's required
//     list, divisibleBy becomes multipleOf, extends becomes allOf, type
//     "any" goes;
//   - OpenAPI 3.0's nullable: true (and x-nullable) adds "null" to the
//     type;
//   - a type that lists several types other than null becomes an anyOf of
//     one type each (so that a validator reading one type per schema keeps
//     them all);
//   - a $schema naming an older draft goes (a schema without one is read
//     as 2020-12, the MCP default).
//
// Nothing else changes, and a 2020-12 schema comes back as it is.
package schemadraft

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// NormalizeJSON rewrites the schema in raw (see the package comment). It
// returns raw itself when nothing changes or raw is not a JSON object.
func NormalizeJSON(raw []byte) []byte {
	if !bytes.Contains(raw, []byte(`"`)) {
		return raw
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return raw
	}
	out, changed := Normalize(v)
	if !changed {
		return raw
	}
	b, err := marshal(out)
	if err != nil {
		return raw
	}
	return b
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Normalize rewrites a decoded schema (map[string]any, as encoding/json
// decodes it) and reports whether anything changed. The input is not
// modified.
func Normalize(v any) (any, bool) {
	n := &normalizer{}
	out := n.schema(v, 0, true)
	return out, n.changed
}

type normalizer struct{ changed bool }

// maxDepth bounds the walk (toolenv refuses deeper schemas anyway).
const maxDepth = 256

// olderDrafts are the $schema URIs of drafts before 2020-12.
var olderDrafts = []string{"draft-03", "draft-04", "draft-05", "draft-06", "draft-07", "draft/2019-09", "draft/2019-09/"}

func (n *normalizer) schema(v any, depth int, root bool) any {
	m, ok := v.(map[string]any)
	if !ok || depth > maxDepth {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = x
	}
	if root {
		if s, ok := out["$schema"].(string); ok {
			for _, d := range olderDrafts {
				if strings.Contains(s, d) {
					delete(out, "$schema")
					n.changed = true
					break
				}
			}
		}
	}
	// Bounds: draft-04's booleans.
	for _, b := range []struct{ ex, bound string }{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		if flag, ok := out[b.ex].(bool); ok {
			n.changed = true
			delete(out, b.ex)
			if bound, has := out[b.bound]; flag && has {
				out[b.ex] = bound
				delete(out, b.bound)
			}
		}
	}
	// Tuples.
	if items, ok := out["items"].([]any); ok {
		n.changed = true
		out["prefixItems"] = items
		delete(out, "items")
		if add, has := out["additionalItems"]; has {
			out["items"] = add
			delete(out, "additionalItems")
		}
	} else if _, has := out["additionalItems"]; has {
		// Ignored beside a single items schema (or none) before 2020-12.
		n.changed = true
		delete(out, "additionalItems")
	}
	if deps, ok := out["dependencies"].(map[string]any); ok {
		n.changed = true
		delete(out, "dependencies")
		req, sch := map[string]any{}, map[string]any{}
		for k, d := range deps {
			switch x := d.(type) {
			case []any:
				req[k] = x
			case string: // draft-03: one name
				req[k] = []any{x}
			default:
				sch[k] = x
			}
		}
		if len(req) > 0 {
			out["dependentRequired"] = req
		}
		if len(sch) > 0 {
			out["dependentSchemas"] = sch
		}
	}
	// Draft-03.
	if d, ok := out["divisibleBy"]; ok {
		n.changed = true
		out["multipleOf"] = d
		delete(out, "divisibleBy")
	}
	if e, ok := out["extends"]; ok {
		n.changed = true
		delete(out, "extends")
		list, isList := e.([]any)
		if !isList {
			list = []any{e}
		}
		all, _ := out["allOf"].([]any)
		out["allOf"] = append(append([]any(nil), all...), list...)
	}
	if _, ok := out["required"].(bool); ok {
		// A draft-03 property's own flag, which its object lifts into
		// its required list (below); alone (at the root) it means nothing.
		n.changed = true
		delete(out, "required")
	}
	// Types.
	nullable := false
	for _, k := range []string{"nullable", "x-nullable"} {
		if b, ok := out[k].(bool); ok {
			n.changed = true
			delete(out, k)
			nullable = nullable || b
		}
	}
	switch t := out["type"].(type) {
	case string:
		if t == "any" {
			n.changed = true
			delete(out, "type")
		} else if nullable && t != "null" {
			out["type"] = []any{t, "null"}
		}
	case []any:
		types, hasNull, plain := typeList(t)
		hasNull = hasNull || nullable
		if !plain {
			break
		}
		if len(types) > 1 {
			n.changed = true
			delete(out, "type")
			var alts []any
			for _, s := range types {
				alts = append(alts, map[string]any{"type": s})
			}
			if hasNull {
				alts = append(alts, map[string]any{"type": "null"})
			}
			if prev, has := out["anyOf"]; has {
				// Both must hold: keep the old anyOf beside the new one.
				all, _ := out["allOf"].([]any)
				out["allOf"] = append(append([]any(nil), all...), map[string]any{"anyOf": prev})
			}
			out["anyOf"] = alts
		} else if nullable && len(types) == 1 {
			out["type"] = []any{types[0], "null"}
		}
	}
	// Sub-schemas.
	for _, k := range []string{"additionalProperties", "items", "contains", "propertyNames", "not", "if", "then", "else",
		"unevaluatedItems", "unevaluatedProperties", "additionalItems"} {
		if x, ok := out[k]; ok {
			out[k] = n.schema(x, depth+1, false)
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "prefixItems"} {
		if list, ok := out[k].([]any); ok {
			c := make([]any, len(list))
			for i, x := range list {
				c[i] = n.schema(x, depth+1, false)
			}
			out[k] = c
		}
	}
	for _, k := range []string{"properties", "patternProperties", "definitions", "$defs", "dependentSchemas"} {
		if props, ok := out[k].(map[string]any); ok {
			c := make(map[string]any, len(props))
			var lifted []string
			for name, x := range props {
				if k == "properties" {
					if pm, ok := x.(map[string]any); ok {
						if r, isBool := pm["required"].(bool); isBool {
							n.changed = true
							pm2 := make(map[string]any, len(pm))
							for kk, vv := range pm {
								pm2[kk] = vv
							}
							delete(pm2, "required")
							x = pm2
							if r {
								lifted = append(lifted, name)
							}
						}
					}
				}
				c[name] = n.schema(x, depth+1, false)
			}
			out[k] = c
			if len(lifted) > 0 {
				sort.Strings(lifted)
				req, _ := out["required"].([]any)
				req = append([]any(nil), req...)
				for _, l := range lifted {
					if !containsAny(req, l) {
						req = append(req, l)
					}
				}
				out["required"] = req
			}
		}
	}
	return out
}

// typeList reads a list of types: the types other than null (each once),
// whether null is one, and whether the list holds type names only (not
// draft-03's schemas or "any").
func typeList(t []any) (types []string, hasNull, plain bool) {
	for _, x := range t {
		s, ok := x.(string)
		switch {
		case !ok || s == "any":
			return nil, false, false
		case s == "null":
			hasNull = true
		case !contains(types, s):
			types = append(types, s)
		}
	}
	return types, hasNull, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsAny(list []any, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
