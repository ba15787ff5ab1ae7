package drift

import (
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// planNest groups related flat parameters into one object parameter, by
// the nesting groups of the rules: street/city/zip into an address,
// latitude/longitude into coordinates, page/limit/offset into pagination,
// start/end dates into a date range. Members must be scalar, sent in the
// query or body (not the path), and not take "$label$" references.
func planNest(p *planner, t *toolenv.Tool) []Change {
	var out []Change
	used := map[string]bool{}
	for _, g := range p.rules.NestGroups {
		var members []Member
		for _, m := range g.Members {
			if name := p.findMember(t, m.Names, used); name != "" {
				members = append(members, Member{Param: name, Key: m.Key})
			}
		}
		if len(members) < g.Min || len(members) < 2 || (g.All && len(members) < len(g.Members)) {
			continue
		}
		into := ""
		for _, n := range g.Into {
			if p.paramNameOK(t, "")(n) && !used[n] {
				into = n
				break
			}
		}
		if into == "" || !p.hit() {
			continue
		}
		for _, m := range members {
			used[m.Param] = true
		}
		used[into] = true
		out = append(out, Change{Op: OpNest, Rule: g.Name, Param: into, Members: members})
	}
	return out
}

// findMember returns the tool's parameter that one of names designates, or "".
func (p *planner) findMember(t *toolenv.Tool, names []string, used map[string]bool) string {
	for _, want := range names {
		for _, name := range t.Input.Names() {
			if used[name] || strings.ToLower(name) != want {
				continue
			}
			s := t.Input.Properties[name]
			if s == nil || p.protected(name) || p.refs[name] {
				continue
			}
			switch s.Type {
			case "string", "integer", "number", "boolean":
			default:
				continue
			}
			if t.Binding != nil {
				if strings.Contains(t.Binding.Path, "{"+name+"}") {
					continue
				}
				if w := t.Binding.In[name]; w == "path" || w == "header" {
					continue
				}
			}
			return name
		}
	}
	return ""
}
