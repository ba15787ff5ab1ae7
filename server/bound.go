package server

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// boundRoutes routes requests to tools that declare their own HTTP
// binding (NL2SQL REST endpoints, tools from OpenAPI documents), matching
// path templates segment by segment. Unlike http.ServeMux it never panics
// on the overlapping patterns real specs contain: among matches, the one
// with the most literal segments wins, then the first registered.
type boundRoutes struct {
	routes []boundRoute
}

type boundRoute struct {
	method string
	segs   []string // literal, or "{name}" for a parameter
	lits   int
	tool   *toolenv.Tool
	coll   *toolenv.Collection
}

// newBoundRoutes indexes the bound tools of collections. ToolBench tools
// are not mounted: their documented URLs are RapidAPI's, with sample
// values baked in.
func newBoundRoutes(colls []*toolenv.Collection, log *slog.Logger) *boundRoutes {
	br := &boundRoutes{}
	seen := map[string]string{}
	for _, c := range colls {
		if c.Kind == "toolbench" {
			continue
		}
		for _, t := range c.Tools {
			b := t.Binding
			if b == nil || b.Path == "" || !strings.HasPrefix(b.Path, "/") {
				continue
			}
			method := strings.ToUpper(b.Method)
			if method == "" {
				method = http.MethodGet
			}
			segs := splitPath(b.Path)
			k := method + " " + strings.Join(normSegs(segs), "/")
			if prev, dup := seen[k]; dup {
				log.Warn("two tools bind the same route; the first keeps it, the other stays reachable at /tools/{collection}/{name}", "route", method+" "+b.Path, "kept", prev, "shadowed", t.ID)
				continue
			}
			seen[k] = t.ID
			lits := 0
			for _, s := range segs {
				if !isParam(s) {
					lits++
				}
			}
			br.routes = append(br.routes, boundRoute{method: method, segs: segs, lits: lits, tool: t, coll: c})
		}
	}
	if len(br.routes) == 0 {
		return nil
	}
	return br
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func isParam(seg string) bool { return len(seg) > 2 && seg[0] == '{' && seg[len(seg)-1] == '}' }

func normSegs(segs []string) []string {
	out := make([]string, len(segs))
	for i, s := range segs {
		if isParam(s) {
			out[i] = "{}"
		} else {
			out[i] = s
		}
	}
	return out
}

// match finds the route for method and the escaped path (the request's
// path as sent, so that an escaped '/' stays inside its segment), with its
// path parameters decoded.
func (br *boundRoutes) match(method, escapedPath string) (*boundRoute, map[string]string, bool) {
	segs := splitPath(escapedPath)
	for i, s := range segs {
		if u, err := url.PathUnescape(s); err == nil {
			segs[i] = u
		}
	}
	var best *boundRoute
	var bestParams map[string]string
	methodMismatch := false
	for i := range br.routes {
		rt := &br.routes[i]
		if len(rt.segs) != len(segs) {
			continue
		}
		var params map[string]string
		ok := true
		for j, s := range rt.segs {
			if isParam(s) {
				if params == nil {
					params = map[string]string{}
				}
				params[s[1:len(s)-1]] = segs[j]
			} else if s != segs[j] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if rt.method != method {
			methodMismatch = true
			continue
		}
		if best == nil || rt.lits > best.lits {
			best, bestParams = rt, params
		}
	}
	return best, bestParams, methodMismatch
}

// serve handles r if it matches a bound route, reporting whether it did.
func (br *boundRoutes) serve(s *Server, w http.ResponseWriter, r *http.Request) bool {
	rt, params, wrongMethod := br.match(r.Method, r.URL.EscapedPath())
	if rt == nil {
		if wrongMethod {
			writeError(w, http.StatusMethodNotAllowed, toolenv.Errorf(toolenv.StatusBadRequest, "see the collection's openapi.json for each route's method", "%s is not allowed on %s", r.Method, r.URL.Path))
			return true
		}
		return false
	}
	call, res := s.restCall(w, r, rt.tool, rt.coll, params, true)
	if res != nil {
		writeError(w, 0, res)
		return true
	}
	s.serveCall(w, r, call)
	return true
}
