package guard

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Policy says who may use a server. The zero value accepts any client
// that can connect, without a token, as long as its requests name the
// server by a loopback name or the address they connected to, come from
// no other origin, and send state-changing requests as JSON.
type Policy struct {
	// Tokens are the bearer tokens accepted (Authorization: Bearer T).
	// Each is a principal of its own (see Principal). Empty means no
	// token is asked for, unless Login is set.
	Tokens []string
	// Login makes the server ask for a token or a login cookie on every
	// request, and accept one-time login links (Guard.LoginLink) that
	// set that cookie: for pages a person opens in a browser.
	Login bool
	// AllowedHosts are the names the Host header may carry besides
	// loopback names and the address the client connected to:
	// "example.org", "*.example.org" (its subdomains), or "*" (any name:
	// only behind a proxy that checks the Host itself). A name with a
	// port ("example.org:8443") allows that port only.
	AllowedHosts []string
	// Open are paths that GET and HEAD requests reach without a token
	// (the liveness check a load balancer polls). The Host and Origin
	// checks still apply.
	Open []string
	// Logger logs each refusal at debug level; nil discards.
	Logger *slog.Logger
}

// MinTokenLen is the shortest bearer token accepted.
const MinTokenLen = 16

// Guard checks requests against a Policy. It is safe for concurrent use.
type Guard struct {
	digests [][sha256.Size]byte
	ids     []string
	hosts   hostSet
	open    map[string]bool
	login   *logins
	log     *slog.Logger
}

// New compiles p. It fails on a token shorter than MinTokenLen or a
// malformed allowed host.
func New(p Policy) (*Guard, error) {
	g := &Guard{log: p.Logger, open: map[string]bool{}}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	for i, t := range p.Tokens {
		if len(t) < MinTokenLen {
			return nil, fmt.Errorf("guard: token %d is %d characters long; use at least %d (for example the output of: openssl rand -hex 32)", i+1, len(t), MinTokenLen)
		}
		d := sha256.Sum256([]byte(t))
		g.digests = append(g.digests, d)
		g.ids = append(g.ids, "token-"+hex.EncodeToString(d[:6]))
	}
	hs, err := parseHosts(p.AllowedHosts)
	if err != nil {
		return nil, err
	}
	g.hosts = hs
	for _, o := range p.Open {
		g.open[o] = true
	}
	if p.Login {
		g.login = newLogins()
	}
	return g, nil
}

// Authenticates reports whether the guard asks requests for a token or
// login.
func (g *Guard) Authenticates() bool { return len(g.digests) > 0 || g.login != nil }

type principalKey struct{}

// Principal returns the principal a request was authenticated as: the
// id of its bearer token ("token-" and 12 hex digits of the token's
// SHA-256, which never reveal the token), LoginPrincipal for a login
// cookie, or "" when the server asks for no token.
func Principal(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// WithPrincipal returns ctx carrying principal, as the guard's handler
// passes it on.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// LoginPrincipal is the principal of requests authenticated by a login
// cookie.
const LoginPrincipal = "login"

// Handler returns next behind the guard's checks, in this order: the
// Host header, the request's origin, its token (or login cookie), and for
// state-changing methods its content type (JSON; see needsBody for the
// bodiless DELETE, PUT and PATCH that need none). A refused request gets a JSON
// error {"status", "error", "hint"} and never reaches next.
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.hostOK(r) {
			g.refuse(w, r, http.StatusForbidden, "forbidden_host",
				fmt.Sprintf("the Host %s is not a name of this server", strconv.Quote(r.Host)),
				"use a loopback name (localhost, 127.0.0.1) or the address you connected to; if this name is the server's, start it with --allowed-host "+hostOnly(r.Host))
			return
		}
		if why := crossOrigin(r); why != "" {
			g.refuse(w, r, http.StatusForbidden, "forbidden_origin", "cross-origin requests are refused: "+why,
				"call the server from a program, or from a page it serves itself")
			return
		}
		principal, bearer, done := g.authenticate(w, r)
		if done {
			return
		}
		if stateChanging(r.Method) && !bearer && needsBody(r) && !jsonContent(header(r, "Content-Type")) {
			g.refuse(w, r, http.StatusUnsupportedMediaType, "unsupported_media_type",
				fmt.Sprintf("a %s request must have Content-Type: application/json (got %s)", r.Method, strconv.Quote(header(r, "Content-Type"))),
				"send the body as JSON with Content-Type: application/json (curl -H 'Content-Type: application/json'), or authenticate with a bearer token")
			return
		}
		if principal != "" {
			r = r.WithContext(WithPrincipal(r.Context(), principal))
		}
		next.ServeHTTP(w, r)
	})
}

// authenticate checks the request's token or login cookie. It reports
// the principal, whether a bearer token was presented, and whether it
// answered the request itself (a refusal, or a login link's redirect).
func (g *Guard) authenticate(w http.ResponseWriter, r *http.Request) (principal string, bearer, done bool) {
	if !g.Authenticates() {
		return "", false, false
	}
	if h := header(r, "Authorization"); h != "" {
		scheme, tok, _ := strings.Cut(h, " ")
		if strings.EqualFold(scheme, "Bearer") {
			if id := g.match(strings.TrimSpace(tok)); id != "" {
				return id, true, false
			}
		}
		g.refuse(w, r, http.StatusUnauthorized, "unauthorized", "the Authorization header does not carry a token this server accepts",
			"send Authorization: Bearer <the token in the variable named by the server's --auth-token-env>")
		return "", false, true
	}
	if g.login != nil {
		if g.login.serveLink(w, r) {
			return "", false, true
		}
		if g.login.hasCookie(r) {
			return LoginPrincipal, false, false
		}
	}
	if g.open[r.URL.Path] && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		return "", false, false
	}
	hint := "send Authorization: Bearer <the token in the variable named by the server's --auth-token-env>"
	if g.login != nil {
		hint = "open the login link the server printed when it started (each link works once), or " + hint
	}
	g.refuse(w, r, http.StatusUnauthorized, "unauthorized", "this server needs a token", hint)
	return "", false, true
}

// match returns the principal id of tok, comparing in constant time with
// every accepted token.
func (g *Guard) match(tok string) string {
	d := sha256.Sum256([]byte(tok))
	id := ""
	for i := range g.digests {
		if subtle.ConstantTimeCompare(d[:], g.digests[i][:]) == 1 {
			id = g.ids[i]
		}
	}
	return id
}

func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, code int, status, msg, hint string) {
	g.log.LogAttrs(r.Context(), slog.LevelDebug, "request refused", slog.String("status", status), slog.String("method", r.Method),
		slog.String("path", r.URL.Path), slog.String("host", r.Host), slog.String("origin", header(r, "Origin")), slog.String("remote", r.RemoteAddr))
	WriteError(w, code, status, msg, hint)
}

// WriteError writes the JSON error body guarded servers answer refusals
// with.
func WriteError(w http.ResponseWriter, code int, status, msg, hint string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if code == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="toolenv"`)
	}
	w.WriteHeader(code)
	b := []byte(`{"status":`)
	b = strconv.AppendQuote(b, status)
	b = append(b, `,"error":`...)
	b = appendJSONString(b, msg)
	if hint != "" {
		b = append(b, `,"hint":`...)
		b = appendJSONString(b, hint)
	}
	b = append(b, "}\n"...)
	w.Write(b)
}

// appendJSONString writes s as a JSON string (strconv.Quote's escapes
// are JSON's for the text these messages hold, except \x and \U, which
// it uses only for bytes and characters that are not printable).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20 || r == 0x7f || r == 0xfffd:
			b = append(b, fmt.Sprintf(`\u%04x`, r)...)
		default:
			b = append(b, string(r)...)
		}
	}
	return append(b, '"')
}

// needsBody reports whether a state-changing request must carry a JSON
// body: a POST always (an HTML form posts, even with no fields), any
// other method when it has a body. A DELETE, PUT or PATCH without one is
// no form, and a page of another site cannot send it without a CORS
// preflight, which the server never grants; MCP clients end a session
// with a bare DELETE.
func needsBody(r *http.Request) bool {
	return r.Method == http.MethodPost || r.ContentLength != 0
}

// stateChanging reports whether a method may change the server's state.
func stateChanging(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// jsonContent reports whether a Content-Type is JSON (application/json
// or a +json type), parameters aside. HTML forms and CORS "simple
// requests" can send neither.
func jsonContent(ct string) bool {
	if ct == "application/json" { // what nearly every client sends
		return true
	}
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(mt)
	if strings.EqualFold(mt, "application/json") {
		return true
	}
	slash := strings.IndexByte(mt, '/')
	return slash > 0 && len(mt) > len("+json") && strings.EqualFold(mt[len(mt)-len("+json"):], "+json") && !strings.ContainsAny(mt[slash+1:], " \t")
}

// crossOrigin says why a request comes from another origin, or "" when
// it does not: a browser's Sec-Fetch-Site other than same-origin or none
// (typed by the user), or an Origin header (sent with every cross-origin
// fetch and form post) that is not the request's own host.
func crossOrigin(r *http.Request) string {
	switch s := header(r, "Sec-Fetch-Site"); s {
	case "", "same-origin", "none":
	default:
		return "Sec-Fetch-Site is " + strconv.Quote(s)
	}
	o := header(r, "Origin")
	if o == "" {
		return ""
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "Origin " + strconv.Quote(o) + " is not this server"
	}
	if !strings.EqualFold(u.Host, r.Host) {
		return "Origin " + strconv.Quote(o) + " is not this server (" + r.Host + ")"
	}
	return ""
}

// ErrNoToken is returned by RequireToken for an address other machines
// can reach when no token is configured.
var ErrNoToken = errors.New("no bearer token is configured")

// header reads a header by its canonical key without canonicalising it
// again (Header.Get costs more than every check here together).
func header(r *http.Request, canonicalKey string) string {
	if v := r.Header[canonicalKey]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// ClientKey names the client a request comes from, for per-client caps:
// its principal (its bearer token's id) when it authenticated, else
// "addr:" and the host part of its remote address. It reads what
// Handler put in the request's context, so call it behind Handler.
func ClientKey(r *http.Request) string {
	if p := Principal(r.Context()); p != "" {
		return p
	}
	host := r.RemoteAddr
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return "addr:" + host
}
