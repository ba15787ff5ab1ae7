package guard

import (
	"net/http"
	"path"
	"strconv"
	"strings"
)

// CleanPaths returns next behind a check of the request's path: a path
// not in its clean form (a ".", ".." or empty segment: POST /..,
// GET /tools//demo/x) is answered 400 with a JSON error naming the clean
// path, where http.ServeMux would answer a redirect with an empty body,
// which a POST cannot follow with its body and a client may read as a
// success without content.
func CleanPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; r.Method != http.MethodConnect && (p == "" || p[0] != '/' || strings.Contains(p, "/.") || strings.Contains(p, "//")) {
			ep := r.URL.EscapedPath()
			if c := CleanPath(ep); c != ep {
				WriteError(w, http.StatusBadRequest, "bad_request",
					"the path "+strconv.Quote(ep)+" is not in its clean form ("+c+")",
					`send the path in its clean form, without ".", ".." or empty segments: `+c)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// CleanPath is the path http.ServeMux routes a request by: p with "."
// and ".." segments resolved and empty segments dropped, a trailing
// slash kept.
func CleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}
