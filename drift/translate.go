package drift

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// copyArgs returns a shallow copy of args (never nil).
func copyArgs(args map[string]any) map[string]any {
	out := make(map[string]any, len(args)+1)
	for k, v := range args {
		out[k] = v
	}
	return out
}

// forwardArgs rewrites args (a call to the tool in the step's From
// version) into the To version's form, in place.
func (c *Change) forwardArgs(args map[string]any) {
	switch c.Op {
	case OpRenameParam:
		renameArg(args, c.Param, c.To)
	case OpRetype:
		if v, ok := args[c.Param]; ok {
			args[c.Param] = convertValue(v, c.FromType, c.ToType)
		}
	case OpEnumCase:
		d := c.values()
		mapEnumArg(args, c.Param, d.fromKey, d.to)
	case OpMakeRequired, OpFlipDefault:
		// An absent argument meant the old default: say so explicitly,
		// since the new version has no default (or another one).
		if _, ok := args[c.Param]; !ok {
			args[c.Param] = c.values().old
		}
	case OpNest:
		obj := map[string]any{}
		for _, m := range c.Members {
			if v, ok := args[m.Param]; ok {
				obj[m.Key] = v
				delete(args, m.Param)
			}
		}
		if len(obj) > 0 {
			args[c.Param] = obj
		}
	}
}

// backwardArgs rewrites args (a call in the step's To version) into the
// From version's form, in place. With keepDefaults, arguments equal to
// the old default are kept rather than dropped (the alternative form a
// recorded old call may have used).
func (c *Change) backwardArgs(args map[string]any, keepDefaults bool) {
	switch c.Op {
	case OpRenameParam:
		renameArg(args, c.To, c.Param)
	case OpRetype:
		if v, ok := args[c.Param]; ok {
			args[c.Param] = convertValue(v, c.ToType, c.FromType)
		}
	case OpEnumCase:
		d := c.values()
		mapEnumArg(args, c.Param, d.toKey, d.from)
	case OpMakeOptional:
		if _, ok := args[c.Param]; !ok {
			args[c.Param] = c.values().new
		}
	case OpMakeRequired:
		if v, ok := args[c.Param]; ok && !keepDefaults && canonKey(v) == c.values().oldKey {
			delete(args, c.Param)
		}
	case OpFlipDefault:
		v, ok := args[c.Param]
		switch {
		case !ok:
			args[c.Param] = c.values().new
		case !keepDefaults && canonKey(v) == c.values().oldKey:
			delete(args, c.Param)
		}
	case OpNest:
		obj, ok := args[c.Param].(map[string]any)
		if !ok {
			return // not an object: validation rejects it before this
		}
		delete(args, c.Param)
		for _, m := range c.Members {
			if v, ok := obj[m.Key]; ok {
				args[m.Param] = v
			}
		}
	}
}

// renameArg moves the argument from to to, when there is one.
func renameArg(args map[string]any, from, to string) {
	if v, ok := args[from]; ok {
		delete(args, from)
		args[to] = v
	}
}

// mapEnumArg replaces the argument param by vals[i] when its canonical
// JSON is keys[i]: an enum value by the one it has in the other version.
func mapEnumArg(args map[string]any, param string, keys []string, vals []any) {
	v, ok := args[param]
	if !ok {
		return
	}
	k := canonKey(v)
	for i := range keys {
		if keys[i] == k {
			args[param] = vals[i]
			return
		}
	}
}

// ambiguous reports whether backwardArgs has a keepDefaults alternative.
func (c *Change) ambiguous() bool { return c.Op == OpMakeRequired || c.Op == OpFlipDefault }

// convertValue converts v from type from to type to when it has the
// from type's shape (a JSON number, boolean, or a string holding one);
// anything else is returned unchanged for validation to judge.
func convertValue(v any, from, to string) any {
	if to == "string" {
		switch x := v.(type) {
		case json.Number:
			if s, err := toolenv.CanonicalNumber(string(x)); err == nil {
				return s
			}
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64)
		case int:
			return strconv.Itoa(x)
		case int64:
			return strconv.FormatInt(x, 10)
		case bool:
			return strconv.FormatBool(x)
		}
		return v
	}
	s, ok := v.(string)
	if !ok {
		return v
	}
	switch to {
	case "integer", "number":
		// Only a literal JSON itself can write: "007" stays a string (its
		// zeros would be lost, and encoding/json refuses such a Number).
		if toolenv.IsJSONNumber(s) {
			return json.Number(s)
		}
	case "boolean":
		switch s {
		case "true":
			return true
		case "false":
			return false
		}
	}
	return v
}

// forwardBody rewrites a response body of the From version into the To
// version's format.
func (c *Change) forwardBody(body json.RawMessage) json.RawMessage {
	if c.Op != OpRenameField {
		return body
	}
	return renameBodyField(body, c.Path, c.From, c.To)
}

// backwardBody rewrites a response body of the To version into the From
// version's format.
func (c *Change) backwardBody(body json.RawMessage) json.RawMessage {
	if c.Op != OpRenameField {
		return body
	}
	return renameBodyField(body, c.Path, c.To, c.From)
}

// renameBodyField renames the key from to to in the objects at path of a
// JSON body, or of the JSON text a JSON string body holds (how
// StableToolBench answers). Anything else is returned unchanged.
func renameBodyField(body json.RawMessage, path, from, to string) json.RawMessage {
	trimmed := strings.TrimSpace(string(body))
	if trimmed == "" {
		return body
	}
	if trimmed[0] == '"' {
		var inner string
		if err := json.Unmarshal([]byte(trimmed), &inner); err != nil {
			return body
		}
		t := strings.TrimSpace(inner)
		if t == "" || (t[0] != '{' && t[0] != '[') {
			return body
		}
		out, ok := renameKeys([]byte(inner), path, from, to)
		if !ok {
			return body
		}
		enc, err := toolenv.MarshalJSONNoHTML(string(out))
		if err != nil {
			return body
		}
		return enc
	}
	out, ok := renameKeys(body, path, from, to)
	if !ok {
		return body
	}
	return out
}

// forward translates args of a call to tool tc.Tool (From version) into
// a call to tc.Name (To version).
func (tc *ToolChange) forward(args map[string]any) map[string]any {
	out := copyArgs(args)
	for i := range tc.Changes {
		tc.Changes[i].forwardArgs(out)
	}
	return out
}

// backward translates args of a call to tc.Name (To version) into a call
// to tc.Tool (From version).
func (tc *ToolChange) backward(args map[string]any, keepDefaults bool) map[string]any {
	out := copyArgs(args)
	for i := len(tc.Changes) - 1; i >= 0; i-- {
		tc.Changes[i].backwardArgs(out, keepDefaults)
	}
	return out
}

func (tc *ToolChange) ambiguous() bool {
	for i := range tc.Changes {
		if tc.Changes[i].ambiguous() {
			return true
		}
	}
	return false
}

// Forward translates a call to tool name with args, written against
// version from, into the current version: the tool's current name and
// the arguments in its current form. A tool the chain never changed keeps
// its name and arguments. It fails when from is not a version of the
// chain.
func (m *Manifest) Forward(from, name string, args map[string]any) (string, map[string]any, error) {
	i := m.VersionIndex(from)
	if i < 0 {
		return "", nil, fmt.Errorf("drift: %q is not a version of %s (versions: %s)", from, m.Collection, strings.Join(m.Versions(), ", "))
	}
	out := copyArgs(args)
	for _, s := range m.Steps[i:] {
		if tc := s.change(name); tc != nil {
			out = tc.forward(out)
			name = tc.Name
		}
	}
	return name, out, nil
}

// Backward translates a call to the current version's tool name with
// args into a call to the base version: the tool's base name and the
// arguments in their base form (the form answers recorded before the
// drift are cached under).
func (m *Manifest) Backward(name string, args map[string]any) (string, map[string]any) {
	return m.backward(name, args, false)
}

func (m *Manifest) backward(name string, args map[string]any, keepDefaults bool) (string, map[string]any) {
	out := copyArgs(args)
	for i := len(m.Steps) - 1; i >= 0; i-- {
		if tc := m.Steps[i].changeTo(name); tc != nil {
			out = tc.backward(out, keepDefaults)
			name = tc.Tool
		}
	}
	return name, out
}

// BackwardAlternatives returns the base-version forms of a current call:
// Backward's first, then, when a change is ambiguous (a default made
// explicit), the form that keeps old defaults spelled out. A recorded
// answer may be cached under either.
func (m *Manifest) BackwardAlternatives(name string, args map[string]any) (string, []map[string]any) {
	base, primary := m.backward(name, args, false)
	out := []map[string]any{primary}
	amb := false
	n := name
	for i := len(m.Steps) - 1; i >= 0; i-- {
		if tc := m.Steps[i].changeTo(n); tc != nil {
			amb = amb || tc.ambiguous()
			n = tc.Tool
		}
	}
	if amb {
		_, alt := m.backward(name, args, true)
		if a, b := mustCanon(alt), mustCanon(primary); a != b {
			out = append(out, alt)
		}
	}
	return base, out
}

func mustCanon(v any) string {
	b, _ := toolenv.Canonical(v)
	return string(b)
}

// ForwardBody translates a response body of base tool name into the
// current version's format (response field renames).
func (m *Manifest) ForwardBody(name string, body json.RawMessage) json.RawMessage {
	for _, s := range m.Steps {
		if tc := s.change(name); tc != nil {
			for i := range tc.Changes {
				body = tc.Changes[i].forwardBody(body)
			}
			name = tc.Name
		}
	}
	return body
}

// BackwardBody translates a response body of the current tool name into
// the format of version to (for compat-mode clients written against it).
func (m *Manifest) BackwardBody(to, name string, body json.RawMessage) json.RawMessage {
	stop := m.VersionIndex(to)
	if stop < 0 {
		stop = 0
	}
	for i := len(m.Steps) - 1; i >= stop; i-- {
		if tc := m.Steps[i].changeTo(name); tc != nil {
			for j := len(tc.Changes) - 1; j >= 0; j-- {
				body = tc.Changes[j].backwardBody(body)
			}
			name = tc.Tool
		}
	}
	return body
}

// NameAt returns the name that the current tool name had in version v
// (following renames back), or "" when v is not a version of the chain.
func (m *Manifest) NameAt(v, name string) string {
	stop := m.VersionIndex(v)
	if stop < 0 {
		return ""
	}
	for i := len(m.Steps) - 1; i >= stop; i-- {
		if tc := m.Steps[i].changeTo(name); tc != nil {
			name = tc.Tool
		}
	}
	return name
}
