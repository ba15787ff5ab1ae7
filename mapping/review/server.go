package review

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strings"

	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/server/guard"
)

//go:embed assets
var assets embed.FS

// maxBody bounds an annotation request.
const maxBody = 1 << 20

// Handler serves the review page and its API:
//
//	GET  /                  the page
//	GET  /static/...        its script and style
//	GET  /api/config        the default annotator and the counts
//	GET  /api/queries       the queries with their review counts
//	GET  /api/query?id=ID   a query: candidates, proposals, annotations
//	POST /api/annotations   {query, proposal, verdict, mapping, annotator, note}
//	GET  /api/export        the reviewed ground truth (JSON)
//	GET  /api/export?set=1  the agreed mappings as a mappings file
//
// The page loads nothing from anywhere else (a content security policy
// says so). Every route is behind Options.Guard: by default a browser
// gets in by opening a one-time link from LoginLink, a program with a
// bearer token.
func (r *Reviewer) Handler() http.Handler {
	mux, _ := r.mux()
	guarded := r.opts.Guard.Handler(guard.CleanPaths(mux))
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		guarded.ServeHTTP(w, req)
	})
}

// LoginLink returns a one-time link to the page at base (the server's
// URL): opening it logs the browser in (a cookie) and the link stops
// working.
func (r *Reviewer) LoginLink(base string) string { return r.opts.Guard.LoginLink(base) }

// Routes lists the route patterns Handler serves, every one behind the
// guard.
func (r *Reviewer) Routes() []string {
	_, routes := r.mux()
	return routes
}

func (r *Reviewer) mux() (*http.ServeMux, []string) {
	mux := http.NewServeMux()
	var routes []string
	handle := func(pattern string, h http.HandlerFunc) {
		mux.Handle(pattern, h)
		routes = append(routes, pattern)
	}
	static, _ := fs.Sub(assets, "assets")
	handle("GET /{$}", func(w http.ResponseWriter, req *http.Request) {
		b, _ := fs.ReadFile(static, "index.html")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b)
	})
	handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)).ServeHTTP)
	handle("GET /api/config", func(w http.ResponseWriter, req *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"annotator": r.opts.Annotator, "queries": len(r.queries), "model": r.opts.Probe.Model})
	})
	handle("GET /api/queries", func(w http.ResponseWriter, req *http.Request) {
		writeJSON(w, http.StatusOK, r.Queries())
	})
	handle("GET /api/query", func(w http.ResponseWriter, req *http.Request) {
		q := r.Query(req.URL.Query().Get("id"))
		if q == nil {
			writeError(w, http.StatusNotFound, "no such query; GET /api/queries lists them")
			return
		}
		writeJSON(w, http.StatusOK, q)
	})
	handle("POST /api/annotations", func(w http.ResponseWriter, req *http.Request) {
		var in struct {
			Query     string           `json:"query"`
			Proposal  string           `json:"proposal"`
			Verdict   string           `json:"verdict"`
			Mapping   *mapping.Mapping `json:"mapping"`
			Annotator string           `json:"annotator"`
			Note      string           `json:"note"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, req.Body, maxBody))
		dec.UseNumber()
		if err := dec.Decode(&in); err != nil {
			writeError(w, http.StatusBadRequest, "the body is not an annotation: "+err.Error())
			return
		}
		a, err := r.Annotate(Annotation{Query: in.Query, Proposal: in.Proposal, Verdict: in.Verdict, Mapping: in.Mapping, Annotator: in.Annotator, Note: in.Note})
		if err != nil {
			status := http.StatusBadRequest
			if strings.Contains(err.Error(), "journal") {
				status = http.StatusInternalServerError
			}
			writeError(w, status, err.Error())
			return
		}
		writeJSON(w, http.StatusCreated, a)
	})
	handle("GET /api/export", func(w http.ResponseWriter, req *http.Request) {
		e := r.Export()
		w.Header().Set("Content-Disposition", `attachment; filename="reviewed-mappings.json"`)
		if req.URL.Query().Get("set") != "" {
			writeJSON(w, http.StatusOK, e.Set())
			return
		}
		writeJSON(w, http.StatusOK, e)
	})
	return mux, routes
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
