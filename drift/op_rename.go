package drift

import toolenv "github.com/toolenv/toolenv"

// planRename renames parameters: by a synonym ("city" → "town"), an
// abbreviation ("page_number" → "page_num") or a change of case style
// ("sortBy" → "sort_by"), never onto a name the tool uses or used.
func planRename(p *planner, t *toolenv.Tool) []Change {
	var out []Change
	taken := map[string]bool{}
	for _, name := range t.Input.Names() {
		if p.protected(name) || !p.hit() {
			continue
		}
		okName := p.paramNameOK(t, name)
		to, rule := p.newName(name, func(n string) bool { return okName(n) && !taken[normName(n)] })
		if to == "" {
			continue
		}
		taken[normName(to)] = true
		if p.refs[name] {
			// A parameter that takes references keeps taking them under
			// its new name: later operators must leave it alone too.
			if p.refs == nil {
				p.refs = map[string]bool{}
			}
			p.refs[to] = true
		}
		out = append(out, Change{Op: OpRenameParam, Rule: rule, Param: name, To: to})
	}
	return out
}
