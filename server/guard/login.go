package guard

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"sync"
)

// LoginParam is the query parameter of a login link.
const LoginParam = "token"

// maxLoginCookies bounds the cookies one server remembers; the oldest
// goes first.
const maxLoginCookies = 256

// logins holds unused one-time login links and the cookies they set.
type logins struct {
	mu      sync.Mutex
	links   map[[sha256.Size]byte]bool
	cookies map[[sha256.Size]byte]bool
	order   [][sha256.Size]byte // cookies, oldest first
}

func newLogins() *logins {
	return &logins{links: map[[sha256.Size]byte]bool{}, cookies: map[[sha256.Size]byte]bool{}}
}

// LoginLink returns a one-time login link to base (the server's URL,
// "http://127.0.0.1:8088/"): opening it sets a cookie that authenticates
// the browser, and the link stops working. It returns base unchanged when
// the policy has no Login.
func (g *Guard) LoginLink(base string) string {
	if g.login == nil {
		return base
	}
	tok := randomHex(24)
	g.login.mu.Lock()
	g.login.links[sha256.Sum256([]byte(tok))] = true
	g.login.mu.Unlock()
	u, err := url.Parse(base)
	if err != nil {
		return base + "?" + LoginParam + "=" + tok
	}
	q := u.Query()
	q.Set(LoginParam, tok)
	u.RawQuery = q.Encode()
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// cookieName is per port: two servers on one host keep their cookies
// apart (cookies do not isolate ports).
func cookieName(r *http.Request) string {
	_, port, _ := net.SplitHostPort(r.Host)
	return "toolenv_login" + port
}

// serveLink answers a GET carrying a login link's token: a valid one is
// consumed, sets the cookie and redirects to the same URL without the
// token; a used or unknown one is refused. It reports whether it
// answered.
func (l *logins) serveLink(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	q := r.URL.Query()
	tok := q.Get(LoginParam)
	if tok == "" {
		return false
	}
	d := sha256.Sum256([]byte(tok))
	l.mu.Lock()
	ok := l.links[d]
	delete(l.links, d)
	l.mu.Unlock()
	if !ok {
		WriteError(w, http.StatusUnauthorized, "unauthorized", "this login link was used already or is not this server's",
			"each link works once: restart the server for a new one, or send Authorization: Bearer <token>")
		return true
	}
	c := randomHex(32)
	l.remember(sha256.Sum256([]byte(c)))
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: c, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	q.Del(LoginParam)
	u := *r.URL
	u.RawQuery = q.Encode()
	u.Scheme, u.Host = "", ""
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
	return true
}

func (l *logins) remember(d [sha256.Size]byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.order) >= maxLoginCookies {
		delete(l.cookies, l.order[0])
		l.order = l.order[1:]
	}
	l.cookies[d] = true
	l.order = append(l.order, d)
}

func (l *logins) hasCookie(r *http.Request) bool {
	c, err := r.Cookie(cookieName(r))
	if err != nil || c.Value == "" {
		return false
	}
	d := sha256.Sum256([]byte(c.Value))
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cookies[d]
}
