package drift

import (
	"encoding/json"
	"regexp"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// TranslateTasks translates tasks written against a step's From version
// into its To version: the tools offered and the relevant APIs by their
// new names, and every gold call through the manifest — its tool renamed,
// its arguments translated, and "$label.path$" references into earlier
// outputs rewritten through the response fields the step renamed. The
// input is not modified.
func TranslateTasks(tasks []*toolenv.Task, s *Step) []*toolenv.Task {
	var out []*toolenv.Task
	for _, t := range tasks {
		out = append(out, translateTask(t, s))
	}
	return out
}

func translateTask(t *toolenv.Task, s *Step) *toolenv.Task {
	nt := cloneTask(t)
	rename := func(name string) string {
		if tc := s.change(name); tc != nil {
			return tc.Name
		}
		return name
	}
	for i, n := range nt.Tools {
		nt.Tools[i] = rename(n)
	}
	if list, ok := nt.Meta["relevant_apis"].([]any); ok {
		for i, v := range list {
			if n, ok := v.(string); ok {
				list[i] = rename(n)
			}
		}
	}
	producers := map[string]string{} // label → tool (From name)
	for i := range nt.Gold {
		g := &nt.Gold[i]
		args := rewriteRefs(g.Args, s, producers).(map[string]any)
		if tc := s.change(g.Name); tc != nil {
			args = tc.forward(args)
		}
		if g.Label != "" {
			producers[strings.Trim(g.Label, "$")] = g.Name
		}
		g.Args, g.Name = args, rename(g.Name)
	}
	return nt
}

func cloneTask(t *toolenv.Task) *toolenv.Task {
	raw, err := json.Marshal(t)
	if err != nil {
		cp := *t
		return &cp
	}
	var nt toolenv.Task
	if toolenv.DecodeJSON(raw, &nt) != nil {
		cp := *t
		return &cp
	}
	return &nt
}

// refSyntax splits "$var1.results[0].isbn$" into its label and path.
var refSyntax = regexp.MustCompile(`^\$([A-Za-z0-9_\-]+)((?:\.[^.\[$]+|\[[0-9]+\])*)\$$`)
var refToken = regexp.MustCompile(`\.([^.\[$]+)|\[([0-9]+)\]`)

// rewriteRefs rewrites references to earlier outputs in v.
func rewriteRefs(v any, s *Step, producers map[string]string) any {
	switch x := v.(type) {
	case string:
		return rewriteRef(x, s, producers)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = rewriteRefs(e, s, producers)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = rewriteRefs(e, s, producers)
		}
		return out
	}
	return v
}

func rewriteRef(ref string, s *Step, producers map[string]string) string {
	m := refSyntax.FindStringSubmatch(ref)
	if m == nil || m[2] == "" {
		return ref
	}
	tc := s.change(producers[m[1]])
	if tc == nil {
		return ref
	}
	var b strings.Builder
	b.WriteString("$" + m[1])
	path := ""
	for _, tok := range refToken.FindAllStringSubmatch(m[2], -1) {
		if tok[1] == "" { // an index
			b.WriteString("[" + tok[2] + "]")
			path += "[]"
			continue
		}
		key := tok[1]
		for _, c := range tc.Changes {
			if c.Op == OpRenameField && c.Path == path && c.From == key {
				key = c.To
			}
		}
		b.WriteString("." + key)
		path = joinPath(path, key)
	}
	b.WriteString("$")
	return b.String()
}
