package drift

import (
	"encoding/json"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// maxFieldRenames bounds the response fields renamed per tool and step.
const maxFieldRenames = 3

// envelopeFields are the fields of the NL2SQL result envelope
// (docs/nl2sql.md): harnesses read answers from them, so they are the
// protocol rather than an API's payload, and are never renamed.
var envelopeFields = map[string]bool{"label": true, "type": true, "columns": true, "rows": true, "row_count": true,
	"preview": true, "values": true, "value": true, "count": true, "key_name": true, "group_by": true, "group_count": true}

// planResponse renames fields of the documented response: the output
// schema's properties, else the keys of the output example (ToolBench's
// template_response), else those of the first documented response. A
// renamed field must not collide with a sibling.
func planResponse(p *planner, t *toolenv.Tool) []Change {
	fields := documentedFields(t)
	var out []Change
	siblings := map[string]map[string]bool{}
	for _, f := range fields {
		if siblings[f.path] == nil {
			siblings[f.path] = map[string]bool{}
		}
		siblings[f.path][normName(f.key)] = true
	}
	for _, f := range fields {
		if len(out) == maxFieldRenames {
			break
		}
		if strings.HasPrefix(p.kind, "nl2sql") && envelopeFields[f.key] {
			continue
		}
		if !p.hit() {
			continue
		}
		sib := siblings[f.path]
		to, rule := p.newName(f.key, func(n string) bool { return !sib[normName(n)] })
		if to == "" {
			continue
		}
		sib[normName(to)] = true
		out = append(out, Change{Op: OpRenameField, Rule: rule, Path: f.path, From: f.key, To: to})
		// Fields below the renamed one are now found under its new name.
		oldPrefix, newPrefix := joinPath(f.path, f.key), joinPath(f.path, to)
		for j := range fields {
			fields[j].path = rebase(fields[j].path, oldPrefix, newPrefix)
		}
		rebased := make(map[string]map[string]bool, len(siblings))
		for k, m := range siblings {
			rebased[rebase(k, oldPrefix, newPrefix)] = m
		}
		siblings = rebased
	}
	return out
}

// rebase replaces the leading path old of path by nw.
func rebase(path, old, nw string) string {
	if path == old {
		return nw
	}
	for _, sep := range []string{".", "["} {
		if strings.HasPrefix(path, old+sep) {
			return nw + path[len(old):]
		}
	}
	return path
}

// field is a documented response field: key in the objects at path.
type field struct{ path, key string }

// documentedFields lists the response fields a tool documents, in
// document order, at most three levels deep.
func documentedFields(t *toolenv.Tool) []field {
	var out []field
	if t.Output != nil {
		walkSchema(t.Output, "", 0, &out)
		if len(out) > 0 {
			return out
		}
	}
	raw := t.OutputExample
	if len(raw) == 0 {
		for _, e := range t.Examples {
			if len(e.Response) > 0 {
				raw = e.Response
				break
			}
		}
	}
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	v, _, err := pyfmt.OrderedDecoder{MaxDepth: 64}.DecodePrefix(string(raw))
	if err != nil {
		return nil
	}
	walkValue(v, "", 0, &out)
	return out
}

func walkSchema(s *toolenv.Schema, path string, depth int, out *[]field) {
	if s == nil || depth > 2 {
		return
	}
	switch s.Type {
	case "array":
		walkSchema(s.Items, path+"[]", depth+1, out)
	case "object", "":
		for _, n := range s.Names() {
			*out = append(*out, field{path: path, key: n})
			walkSchema(s.Properties[n], joinPath(path, n), depth+1, out)
		}
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// walkValue lists the fields of a JSON value as an OrderedDecoder reads
// it: the keys of its objects in document order (a repeated key each
// time), following the first item of arrays.
func walkValue(v any, path string, depth int, out *[]field) {
	if depth > 2 {
		return
	}
	switch x := v.(type) {
	case []any:
		if len(x) > 0 {
			walkValue(x[0], path+"[]", depth+1, out)
		}
	case pyfmt.Dict:
		for _, it := range x {
			if !validIdent(it.Key) {
				continue
			}
			*out = append(*out, field{path: path, key: it.Key})
			walkValue(it.Value, joinPath(path, it.Key), depth+1, out)
		}
	}
}
