package drift

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/toolbench"
)

// planEndpoint evolves a tool's endpoint: its leading action verb is
// renamed by the action table (get→fetch, list→search, post→submit, …) in
// its name, title and path; its path gets the next version (/v1→/v2) or,
// without a version segment, moves under a new prefix (/api, /v2, …); its
// host may migrate (api.x.com → api-v2.x.com). The old name or endpoint is
// left as a hidden stub that answers 410 Gone pointing to the new one.
func planEndpoint(p *planner, t *toolenv.Tool) []Change {
	if p.renamed || !p.hit() {
		return nil
	}
	var out []Change
	b := t.Binding
	hasPath := b != nil && strings.HasPrefix(b.Path, "/")
	verb, repl := "", ""
	if rc, v, r := p.actionRename(t); rc != nil && (!hasPath || p.rng.Float64() < 0.6) {
		out = append(out, *rc)
		verb, repl = v, r
		p.toolNames[rc.To] = true
	}
	if b != nil && (hasPath || b.BaseURL != "") {
		old := Endpoint{Method: b.Method, Path: b.Path, BaseURL: b.BaseURL}
		nw := old
		var rules []string
		if hasPath {
			path, rule := p.evolvePath(b.Path, verb, repl)
			nw.Path = path
			rules = append(rules, rule)
		}
		if b.BaseURL != "" && (!hasPath || p.rng.Float64() < 0.5) {
			if host, ok := p.migrateHost(b.BaseURL); ok {
				nw.BaseURL = host
				rules = append(rules, "host")
			}
		}
		if nw != old {
			out = append(out, Change{Op: OpEndpoint, Rule: strings.Join(rules, "+"), OldEndpoint: &old, NewEndpoint: &nw})
		}
	}
	return out
}

// actionRename plans renaming the tool's leading verb. It returns the
// change and the verb and its replacement, or nil.
func (p *planner) actionRename(t *toolenv.Tool) (*Change, string, string) {
	src := t.Name
	if isToolBench(t) {
		src = t.Title
	}
	ws, style := words(src)
	if len(ws) == 0 {
		return nil, "", ""
	}
	verb := ws[0]
	repls := p.rules.Actions[verb]
	for _, r := range p.shuffled(repls) {
		nw := splice(ws, 0, 1, phraseWords(r))
		c := &Change{Op: OpRenameTool, Rule: "action", From: t.Name}
		if isToolBench(t) {
			c.FromTitle, c.ToTitle = t.Title, joinWords(nw, style)
			c.To = toolbench.FunctionName(c.ToTitle, t.Group)
		} else {
			c.To = joinWords(nw, style)
			if tw, tstyle := words(t.Title); len(tw) > 0 && tw[0] == verb {
				c.FromTitle, c.ToTitle = t.Title, joinWords(splice(tw, 0, 1, phraseWords(r)), tstyle)
			}
		}
		if c.To != c.From && validIdent(c.To) && !p.toolNames[c.To] {
			return c, verb, r
		}
	}
	return nil, "", ""
}

var versionSeg = regexp.MustCompile(`^v([0-9]+)$`)

// evolvePath renames the action verb in path segments (when the tool's
// verb was renamed) and bumps the version segment, or moves the path under
// a new prefix when it has none.
func (p *planner) evolvePath(path, verb, repl string) (string, string) {
	segs := strings.Split(path, "/")
	bumped := false
	for i, s := range segs {
		if s == "" || isPathParam(s) {
			continue
		}
		if m := versionSeg.FindStringSubmatch(s); m != nil && !bumped {
			n, _ := strconv.Atoi(m[1])
			segs[i] = "v" + strconv.Itoa(n+1)
			bumped = true
			continue
		}
		if verb != "" {
			if ws, style := words(s); len(ws) > 0 && ws[0] == verb {
				segs[i] = joinWords(splice(ws, 0, 1, phraseWords(repl)), style)
			}
		}
	}
	out := strings.Join(segs, "/")
	if bumped {
		return out, "version"
	}
	var prefixes []string
	for _, pre := range p.rules.PathPrefixes {
		if !strings.HasPrefix(out, pre+"/") {
			prefixes = append(prefixes, pre)
		}
	}
	if len(prefixes) == 0 {
		return out, "action"
	}
	return prefixes[p.pick(len(prefixes))] + out, "path"
}

func isPathParam(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

// migrateHost rewrites the host of a base URL by the first host rule that
// matches it.
func (p *planner) migrateHost(base string) (string, bool) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", false
	}
	for _, h := range p.rules.Hosts {
		if h.re.MatchString(u.Hostname()) {
			host := h.re.ReplaceAllString(u.Hostname(), h.Replace)
			if port := u.Port(); port != "" {
				host += ":" + port
			}
			if host == u.Host {
				continue
			}
			u.Host = host
			return u.String(), true
		}
	}
	return "", false
}

// versionedName is the name a successor gets when its verb has no
// replacement: the old name with the new version appended.
func (p *planner) versionedName(t *toolenv.Tool) *Change {
	c := &Change{Op: OpRenameTool, Rule: "successor", From: t.Name}
	for n := 0; n < 10; n++ {
		suffix := p.to
		if n > 0 {
			suffix = fmt.Sprintf("%s_%d", p.to, n+1)
		}
		if isToolBench(t) {
			c.FromTitle, c.ToTitle = t.Title, t.Title+" "+strings.ToUpper(strings.ReplaceAll(suffix, "_", " "))
			c.To = toolbench.FunctionName(c.ToTitle, t.Group)
		} else {
			c.To = t.Name + "_" + suffix
		}
		if validIdent(c.To) && !p.toolNames[c.To] {
			return c
		}
	}
	return nil
}
