package drift

import (
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// planDeprecate retires a tool: a successor takes its place under a new
// name (its verb renamed, else the version appended) and, when it has an
// HTTP path, a new endpoint; the old tool stays documented, marked
// deprecated, and answers 410 Gone pointing to its successor (strict mode)
// or forwards to it with a warning (compat mode).
func planDeprecate(p *planner, t *toolenv.Tool) []Change {
	if !p.hit() {
		return nil
	}
	rc, verb, repl := p.actionRename(t)
	if rc == nil {
		rc = p.versionedName(t)
	} else {
		rc.Rule = "successor"
	}
	if rc == nil {
		return nil
	}
	p.toolNames[rc.To] = true
	p.renamed = true
	out := []Change{*rc}
	if b := t.Binding; b != nil && strings.HasPrefix(b.Path, "/") {
		old := Endpoint{Method: b.Method, Path: b.Path, BaseURL: b.BaseURL}
		nw := old
		var rule string
		nw.Path, rule = p.evolvePath(b.Path, verb, repl)
		if nw != old {
			out = append(out, Change{Op: OpEndpoint, Rule: rule, OldEndpoint: &old, NewEndpoint: &nw})
		}
	}
	return append(out, Change{Op: OpDeprecate, Rule: "successor", To: rc.To})
}
