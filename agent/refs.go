package agent

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// refPattern matches a whole-string NESTful reference to an earlier
// output, "$label$" or "$label.path$", where path is a run of ".key" and
// "[index]" steps: "$var1.results[0].isbn$".
var refPattern = regexp.MustCompile(`^\$([A-Za-z0-9_\-]+)((?:\.[^.\[\]$]+|\[[0-9]+\])*)\$$`)

// refStep matches one step of a reference's path.
var refStep = regexp.MustCompile(`\.([^.\[\]$]+)|\[([0-9]+)\]`)

// RefError says which reference in which argument could not be resolved
// and why.
type RefError struct {
	// Param is the argument holding the reference ("isbn", "filter.ids[1]").
	Param string
	// Ref is the reference as written ("$var1.results[3].isbn$").
	Ref string
	// Reason says what was missing ("$var1.results has 1 element; index 3 is out of range").
	Reason string
}

// Error implements error.
func (e *RefError) Error() string {
	return fmt.Sprintf("argument %s: reference %s: %s", e.Param, e.Ref, e.Reason)
}

// ResolveRefs returns args with every NESTful reference to an earlier
// output replaced by the value it points at: a string argument (at any
// depth of objects and arrays) that is exactly "$label$" or
// "$label.path$", whose label is one of outputs' keys, becomes the JSON
// value at path in that output's body ("$label$" alone: the whole body;
// a body that is not JSON resolves only as a whole, as its text). The
// value keeps its JSON type: a number stays a number.
//
// A string whose label is not in outputs is not a reference to this
// sequence and stays as written (an argument may well be "$5$"). A path
// that does not exist in the output is an error (*RefError) naming the
// argument, the reference and the step that is missing. args is not
// modified.
func ResolveRefs(args map[string]any, outputs map[string]json.RawMessage) (map[string]any, error) {
	if len(outputs) == 0 || len(args) == 0 {
		return args, nil
	}
	r := refResolver{outputs: outputs, parsed: map[string]any{}}
	out := make(map[string]any, len(args))
	for k, v := range args {
		nv, err := r.value(k, v)
		if err != nil {
			return nil, err
		}
		out[k] = nv
	}
	return out, nil
}

type refResolver struct {
	outputs map[string]json.RawMessage
	parsed  map[string]any // label → decoded body (refNotJSON when it is not JSON)
}

// refNotJSON marks an output whose body is not JSON.
type refNotJSON struct{ text string }

func (r *refResolver) value(param string, v any) (any, error) {
	switch x := v.(type) {
	case string:
		return r.ref(param, x)
	case toolenv.RawJSON: // an argument kept as text: its references too
		return r.value(param, toolenv.Decoded(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			nv, err := r.value(param+"["+strconv.Itoa(i)+"]", e)
			if err != nil {
				return nil, err
			}
			out[i] = nv
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			nv, err := r.value(param+"."+k, e)
			if err != nil {
				return nil, err
			}
			out[k] = nv
		}
		return out, nil
	}
	return v, nil
}

func (r *refResolver) ref(param, s string) (any, error) {
	m := refPattern.FindStringSubmatch(s)
	if m == nil {
		return s, nil
	}
	label, path := m[1], m[2]
	body, ok := r.outputs[label]
	if !ok {
		return s, nil
	}
	cur, done := r.parsed[label]
	if !done {
		var v any
		if err := toolenv.DecodeJSON(body, &v); err != nil {
			cur = refNotJSON{text: string(body)}
		} else {
			cur = toolResultValue(v)
		}
		r.parsed[label] = cur
	}
	if nj, isText := cur.(refNotJSON); isText {
		if path == "" {
			return nj.text, nil
		}
		return nil, &RefError{Param: param, Ref: s, Reason: fmt.Sprintf("the output of $%s is not JSON, so it has no %s", label, path)}
	}
	at := "$" + label
	for _, step := range refStep.FindAllStringSubmatch(path, -1) {
		key, index := step[1], step[2]
		switch c := cur.(type) {
		case map[string]any:
			if index != "" {
				return nil, &RefError{Param: param, Ref: s, Reason: fmt.Sprintf("%s is an object, not an array; write .key instead of [%s] (its keys: %s)", at, index, keyList(c))}
			}
			next, ok := c[key]
			if !ok {
				return nil, &RefError{Param: param, Ref: s, Reason: fmt.Sprintf("%s has no key %q (its keys: %s)", at, key, keyList(c))}
			}
			cur, at = next, at+"."+key
		case []any:
			if index == "" {
				index = key // "$var1.results.0$" indexes an array too
			}
			i, err := strconv.Atoi(index)
			if err != nil {
				return nil, &RefError{Param: param, Ref: s, Reason: fmt.Sprintf("%s is an array of %d element(s), not an object; write [N] instead of .%s", at, len(c), key)}
			}
			if i >= len(c) {
				return nil, &RefError{Param: param, Ref: s, Reason: fmt.Sprintf("%s has %d element(s); index %d is out of range", at, len(c), i)}
			}
			cur, at = c[i], at+"["+strconv.Itoa(i)+"]"
		default:
			step := "." + key
			if index != "" {
				step = "[" + index + "]"
			}
			return nil, &RefError{Param: param, Ref: s, Reason: fmt.Sprintf("%s is %s, which has no %s", at, describeJSON(cur), step)}
		}
	}
	return cur, nil
}

// keyList lists an object's keys, sorted, for an error message.
func keyList(m map[string]any) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > 12 {
		keys = append(keys[:12], "…")
	}
	return strings.Join(keys, ", ")
}

// describeJSON names the kind of a decoded JSON scalar.
func describeJSON(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// toolResultValue is what a reference reads of an MCP CallToolResult
// (an answer of an MCP server, recorded whole: {"content": [...],
// "structuredContent": ..., "isError": ...}): its structured content, else
// its one text content (as JSON when it is JSON). Any other value is
// read as it is.
func toolResultValue(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	content, ok := m["content"].([]any)
	if !ok {
		return v
	}
	for k := range m {
		if k != "content" && k != "structuredContent" && k != "isError" {
			return v
		}
	}
	for _, c := range content {
		cm, ok := c.(map[string]any)
		if _, typed := cm["type"].(string); !ok || !typed {
			return v
		}
	}
	if sc, ok := m["structuredContent"]; ok && sc != nil {
		return sc
	}
	if len(content) == 1 {
		if text, ok := content[0].(map[string]any)["text"].(string); ok {
			var parsed any
			if toolenv.DecodeJSON([]byte(text), &parsed) == nil {
				return parsed
			}
			return refNotJSON{text: text}
		}
	}
	return v
}
