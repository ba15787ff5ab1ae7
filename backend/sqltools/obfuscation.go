package sqltools

import (
	"fmt"
	"os"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
)

// Obfuscation is the mapping file of an obfuscated collection (nl2api
// writes it beside the collection's folder, never inside it, so that
// nothing of the original names is served): each obfuscated tool's and
// argument's original name, the original REST paths, and each tool's
// original backend meta (operation, bound arguments, SQL template), which
// the obfuscated tools.json leaves out. Its Meta entries carry MetaArgMap,
// public argument name → original one ("ARG_3.ARG_9" for a property of an
// object argument).
type Obfuscation struct {
	Collection string                       `json:"collection"`
	Original   string                       `json:"original"`
	Seed       int64                        `json:"seed"`
	Tools      map[string]string            `json:"tools"`
	Arguments  map[string]string            `json:"arguments"`
	Paths      map[string]string            `json:"paths,omitempty"`
	Meta       map[string]map[string]string `json:"meta,omitempty"`
}

// ReadObfuscation reads a mapping file.
func ReadObfuscation(path string) (*Obfuscation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the obfuscation mapping: %w", err)
	}
	var o Obfuscation
	if err := toolenv.DecodeJSON(data, &o); err != nil {
		return nil, fmt.Errorf("read the obfuscation mapping %s: %w", path, err)
	}
	return &o, nil
}

// Deobfuscated returns c's tools with the backend meta of an obfuscation
// mapping file (path relative to c's folder) merged into theirs; without
// a file, c's tools.
func Deobfuscated(c *toolenv.Collection, file string) ([]*toolenv.Tool, error) {
	if file == "" {
		return c.Tools, nil
	}
	o, err := ReadObfuscation(rodb.ResolvePath(c.Dir, file))
	if err != nil {
		return nil, err
	}
	out := make([]*toolenv.Tool, len(c.Tools))
	for i, t := range c.Tools {
		m := o.Meta[t.Name]
		if len(m) == 0 {
			out[i] = t
			continue
		}
		nt := *t
		nt.Meta = map[string]string{}
		for k, v := range t.Meta {
			nt.Meta[k] = v
		}
		for k, v := range m {
			nt.Meta[k] = v
		}
		out[i] = &nt
	}
	return out, nil
}

// renameArgs renames a call's public argument names to the operation's
// through argMap (public → original; "A.B" renames property B of object
// argument A). An argument the map does not know is an error, except
// keep (the label argument, which keeps its name).
func renameArgs(in map[string]any, argMap map[string]string, keep string) (map[string]any, []toolenv.Problem) {
	out := make(map[string]any, len(in))
	var problems []toolenv.Problem
	for k, v := range in {
		name, ok := argMap[k]
		if !ok {
			if k == keep {
				out[k] = v
				continue
			}
			problems = append(problems, toolenv.Problem{Param: k, Code: "unknown_param", Message: fmt.Sprintf("unknown argument `%s`", k)})
			continue
		}
		if obj, isObj := v.(map[string]any); isObj {
			nested := map[string]any{}
			for nk, nv := range obj {
				if orig, ok := argMap[k+"."+nk]; ok {
					nested[strings.TrimPrefix(orig, name+".")] = nv
				} else {
					nested[nk] = nv // the operation reports unknown properties
				}
			}
			v = nested
		}
		out[name] = v
	}
	return out, problems
}
