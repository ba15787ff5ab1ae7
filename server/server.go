package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/server/guard"
	"github.com/toolenv/toolenv/server/session"
	"github.com/toolenv/toolenv/toolbench"
	"github.com/toolenv/toolenv/validate"
)

// Options configure a Server.
type Options struct {
	// Pipeline executes calls: invoke.New over Registry.
	Pipeline toolenv.Handler
	// Registry holds the collections served.
	Registry *invoke.Registry
	// Logger logs requests and failures; nil discards.
	Logger *slog.Logger
	// MaxBodyBytes bounds request bodies; default 1 MiB.
	MaxBodyBytes int64
	// Metrics, when set, is served at /metrics.
	Metrics *Metrics
	// BaseURL is this server's public URL, written into OpenAPI
	// documents; empty means the request's host.
	BaseURL string
	// MCP, when set, is served at /mcp (streamable HTTP).
	MCP http.Handler
	// Guard checks every request before its route (Host, Origin,
	// tokens, content type); nil means guard.New(guard.Policy{}):
	// loopback names only, no token.
	Guard *guard.Guard
	// Policy says what policy is in force for a collection's calls,
	// for GET /collections; nil means PolicyFromCollection (the
	// collection's own, with nothing configured over it).
	Policy func(*toolenv.Collection) CollectionPolicy
	// Sessions issues and checks task-session ids; nil means a
	// session.Table with its defaults whose ended sessions are dropped
	// from the registry's backends.
	Sessions SessionIssuer
	// Recorded, when set, holds recorded answers: OpenAPI documents show
	// up to two per tool as examples (recorded1, recorded2), which a
	// Prefer: example=NAME header answers too.
	Recorded RecordedAnswers
}

// SessionHeader carries a session id (SLOT/SEL task sessions) on REST and
// /virtual requests.
const SessionHeader = "X-Toolenv-Session"

// Server is toolenv's HTTP front-end. It implements http.Handler.
type Server struct {
	opts  Options
	log   *slog.Logger
	mux   *http.ServeMux
	views atomic.Pointer[views]
	reqID atomic.Uint64
	idPre string
	// guarded is mux behind the guard; patterns lists mux's routes.
	guard    *guard.Guard
	guarded  http.Handler
	sessions SessionIssuer
	patterns []string
	// keys memoizes the exact keys of /virtual tool_inputs.
	keys keyMemo
	// cached is the pipeline's in-memory exact hits, when it serves them
	// (see invoke.CachedInvoker).
	cached invoke.CachedInvoker
	// validator checks the arguments of calls answered from the
	// documentation (a Prefer header).
	validator validate.Validator
	// outputs checks REST answers against their tools' output schemas.
	outputs outputChecks
}

// views are the indexes built from the registry's collections; they are
// rebuilt whole when a collection is hot-loaded (invoke.Registry.Replace).
type views struct {
	index *toolbench.Index
	bound *boundRoutes
	// resolved memoizes index.Resolve's successes by the names as sent
	// (normalizing them costs more than the rest of a cache hit's
	// lookup), up to maxResolved names.
	mu       sync.RWMutex
	resolved map[[3]string]*toolenv.Tool
	// fn names every tool for GET /functions, built at its first use.
	fn functionNames
	// plans are the /virtual bodies resolved in these views.
	plans planMemo
}

// functions returns the /functions names of the registry's tools.
func (v *views) functions(reg *invoke.Registry) *functionNames {
	v.fn.build(reg)
	return &v.fn
}

const maxResolved = 1 << 16

// resolve is index.Resolve, memoized.
func (v *views) resolve(category, tool, api string) (*toolenv.Tool, error) {
	k := [3]string{category, tool, api}
	v.mu.RLock()
	t, ok := v.resolved[k]
	v.mu.RUnlock()
	if ok {
		return t, nil
	}
	t, err := v.index.Resolve(category, tool, api)
	if err == nil {
		v.mu.Lock()
		if v.resolved == nil {
			v.resolved = map[[3]string]*toolenv.Tool{}
		}
		if len(v.resolved) < maxResolved {
			v.resolved[k] = t
		}
		v.mu.Unlock()
	}
	return t, err
}

// New returns a server over opts.Pipeline and opts.Registry. It serves the
// registry's collections as they are at each request: a collection added
// or replaced later (hot-loaded) is served from then on.
func New(opts Options) *Server {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	s := &Server{opts: opts, log: log, mux: http.NewServeMux(), idPre: hex.EncodeToString(b[:]), guard: opts.Guard}
	if s.guard == nil {
		s.guard, _ = guard.New(guard.Policy{Logger: log}) // the zero policy always compiles
	}
	s.cached, _ = opts.Pipeline.(invoke.CachedInvoker)
	s.rebuildViews()
	followRegistry(s, opts.Registry, func(s *Server, _ string) { s.rebuildViews() })
	s.sessions = opts.Sessions
	if s.sessions == nil {
		s.sessions = session.New(session.Options{OnEnd: DropSessions(opts.Registry)})
	}
	s.routes()
	s.guarded = s.guard.Handler(guard.CleanPaths(http.HandlerFunc(s.route)))
	return s
}

// followRegistry calls rebuild(owner, name) after every change of reg's
// collection name, for as long as owner is reachable: the subscription
// holds owner weakly and ends when owner is collected.
func followRegistry[T any](owner *T, reg *invoke.Registry, rebuild func(*T, string)) {
	wp := weak.Make(owner)
	cancel := reg.Subscribe(func(name string) {
		if o := wp.Value(); o != nil {
			rebuild(o, name)
		}
	})
	runtime.AddCleanup(owner, func(cancel func()) { cancel() }, cancel)
}

func (s *Server) rebuildViews() {
	colls := s.opts.Registry.Collections()
	s.views.Store(&views{index: toolbench.NewIndex(colls...), bound: newBoundRoutes(colls, s.log)})
}

func (s *Server) routes() {
	s.handle("POST /virtual", http.HandlerFunc(s.handleVirtual))
	s.handle("GET /healthz", http.HandlerFunc(s.handleHealth))
	s.handle("GET /collections", http.HandlerFunc(s.handleCollections))
	s.handle("GET /collections/{name}/tools", http.HandlerFunc(s.handleTools))
	s.handle("GET /collections/{name}/openapi.json", http.HandlerFunc(s.handleOpenAPI))
	s.handle("GET /openapi.json", http.HandlerFunc(s.handleOpenAPI))
	s.handle("GET /tools/{collection}/{name}", http.HandlerFunc(s.handleToolCall))
	s.handle("POST /tools/{collection}/{name}", http.HandlerFunc(s.handleToolCall))
	s.handle("GET /functions", http.HandlerFunc(s.handleFunctions))
	s.handle("POST /functions/{name}", http.HandlerFunc(s.handleFunctionCall))
	s.handle("POST /sessions", http.HandlerFunc(s.handleNewSession))
	s.handle("DELETE /sessions/{id}", http.HandlerFunc(s.handleEndSession))
	if s.opts.Metrics != nil {
		s.handle("GET /metrics", s.opts.Metrics.Handler())
	}
	if s.opts.MCP != nil {
		mcp := mcpAuth(s.guard, s.opts.MCP)
		s.handle("/mcp", mcp)
		s.handle("/mcp/", mcp)
	}
	s.handle("/", http.HandlerFunc(s.handleFallback))
}

func (s *Server) handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, h)
	s.patterns = append(s.patterns, pattern)
}

// Routes lists the server's routes: the ServeMux patterns ("POST
// /virtual", "/mcp", "/" for the tools' own bound routes and 404s) and
// then each bound route ("GET /demo/books/{isbn}"). Every one of them is
// behind the guard.
func (s *Server) Routes() []string {
	out := append([]string(nil), s.patterns...)
	if b := s.views.Load().bound; b != nil {
		for _, rt := range b.routes {
			out = append(out, rt.method+" /"+strings.Join(rt.segs, "/"))
		}
	}
	return out
}

// route serves POST /virtual, the route StableToolBench's clients send
// every call to, without looking it up among the others (what the mux
// would find for it, at a cost comparable to a cache hit's), and every
// other request through the mux.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/virtual" {
		r.Pattern = "POST /virtual"
		s.handleVirtual(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// ServeHTTP implements http.Handler: the guard's checks, then the route.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.guarded.ServeHTTP(w, r)
}

// handleFallback serves tools at their own bound routes, else 404.
func (s *Server) handleFallback(w http.ResponseWriter, r *http.Request) {
	if b := s.views.Load().bound; b != nil && b.serve(s, w, r) {
		return
	}
	writeError(w, http.StatusNotFound, toolenv.Errorf(toolenv.StatusUnknownTool,
		"see GET /collections for what is served; StableToolBench clients POST to /virtual", "no route for %s %s", r.Method, r.URL.Path))
}

func (s *Server) newRequestID() string {
	var b [32]byte // in one allocation: the string
	return string(strconv.AppendUint(append(append(b[:0], s.idPre...), '-'), s.reqID.Add(1), 36))
}

// invoke runs a call through the pipeline with the request's context.
func (s *Server) invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	return s.opts.Pipeline.Invoke(ctx, call)
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	n := 0
	cs := s.opts.Registry.Collections()
	for _, c := range cs {
		n += len(c.Tools)
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "collections": len(cs), "tools": n})
}

// writeJSON writes v as JSON with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := toolenv.MarshalJSONNoHTML(v)
	if err != nil {
		http.Error(w, `{"status":"internal","error":"response does not encode"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
	w.Write([]byte("\n"))
}

// errorBody is the JSON error REST clients get.
type errorBody struct {
	Status   toolenv.Status    `json:"status"`
	Error    string            `json:"error"`
	Hint     string            `json:"hint,omitempty"`
	Problems []toolenv.Problem `json:"problems,omitempty"`
	Source   toolenv.Source    `json:"source,omitempty"`
	Warnings []string          `json:"warnings,omitempty"`
	Faults   []string          `json:"faults,omitempty"`
}

func writeError(w http.ResponseWriter, code int, res *toolenv.Result) {
	res = res.Bounded(0)
	if code == 0 {
		code = HTTPStatus(res.Status)
	}
	if res.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((res.RetryAfter+time.Second-1)/time.Second)))
	}
	writeJSON(w, code, errorBody{Status: res.Status, Error: res.Error, Hint: res.Hint, Problems: res.Problems, Source: res.Source, Warnings: res.Warnings, Faults: res.Faults})
}

// setResultHeaders reports a result's provenance in response headers.
func setResultHeaders(h http.Header, res *toolenv.Result) {
	res = res.Bounded(0)
	// Keys are written in canonical form directly (no per-call
	// canonicalisation on the hot path).
	h["X-Toolenv-Status"] = headerValue(string(res.Status))
	if res.Source != "" {
		h["X-Toolenv-Source"] = headerValue(string(res.Source))
	}
	if o := res.Meta[invoke.MetaOrigin]; o != "" {
		h["X-Toolenv-Origin"] = []string{o}
	}
	for _, wmsg := range res.Warnings {
		h.Add("X-Toolenv-Warning", wmsg)
	}
	for _, f := range res.Faults {
		h.Add("X-Toolenv-Fault", f)
	}
}
