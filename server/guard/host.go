package guard

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// hostSet holds the allowed Host names beyond the built-in ones.
type hostSet struct {
	any      bool
	exact    map[string]bool // "name" or "name:port"
	suffixes []string        // ".example.org" (port-free)
}

func parseHosts(hosts []string) (hostSet, error) {
	hs := hostSet{exact: map[string]bool{}}
	for _, h := range hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		switch {
		case h == "":
			continue
		case h == "*":
			hs.any = true
		case strings.HasPrefix(h, "*."):
			if strings.ContainsAny(h[2:], "*/:") || h[2:] == "" {
				return hs, fmt.Errorf("guard: allowed host %q: a wildcard is *.domain, with no port", h)
			}
			hs.suffixes = append(hs.suffixes, h[1:])
		default:
			if strings.ContainsAny(h, "*/ ") {
				return hs, fmt.Errorf("guard: allowed host %q is not a host name (give example.org, example.org:8443 or *.example.org)", h)
			}
			hs.exact[strings.TrimSuffix(h, ".")] = true
		}
	}
	return hs, nil
}

func (hs *hostSet) match(name, hostport string) bool {
	if hs.any || hs.exact[name] || hs.exact[hostport] {
		return true
	}
	for _, s := range hs.suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// hostOK reports whether the request's Host names this server: a
// loopback name or address, the address the client connected to (an
// address is never a DNS rebinding: a page that rebinds a name sends the
// name), or an allowed host.
func (g *Guard) hostOK(r *http.Request) bool {
	if r.Host == "" {
		return false
	}
	name := hostOnly(r.Host)
	switch name { // the common case, without allocating
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	name = strings.ToLower(name)
	name = strings.TrimSuffix(name, ".")
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(name); err == nil {
		ip = ip.Unmap()
		if ip.IsLoopback() {
			return true
		}
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			if ap, err := netip.ParseAddrPort(la.String()); err == nil && ap.Addr().Unmap() == ip {
				return true
			}
		}
	}
	if g.hosts.any || len(g.hosts.exact) > 0 || len(g.hosts.suffixes) > 0 {
		return g.hosts.match(name, strings.ToLower(r.Host))
	}
	return false
}

// hostOnly strips the port (and IPv6 brackets) from a Host value.
func hostOnly(hostport string) string {
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && strings.IndexByte(hostport, ':') == i && hostport[0] != '[' {
		return hostport[:i] // name:port, a.b.c.d:port
	}
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// Exposed reports whether a listener's address can be reached from other
// machines: anything but a loopback address (an unspecified address such
// as 0.0.0.0 listens on every interface).
func Exposed(addr net.Addr) bool {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return true
	}
	return !ap.Addr().Unmap().IsLoopback()
}

// RequireToken returns an error a user can act on when a listener at addr
// is reachable from other machines and g asks for no token.
func RequireToken(addr net.Addr, g *Guard) error {
	if !Exposed(addr) || g.Authenticates() {
		return nil
	}
	return fmt.Errorf("%w, and %s is reachable from other machines: set one with --auth-token-env NAME (export NAME=$(openssl rand -hex 32)), or listen on a loopback address such as 127.0.0.1", ErrNoToken, addr)
}

// TokensFromEnv reads the bearer tokens from the environment variable
// name (several may be given, separated by commas or white space; each
// is its own principal). An empty name means no tokens; a named variable
// that is empty or holds a short token is an error.
func TokensFromEnv(getenv func(string) string, name string) ([]string, error) {
	if name == "" {
		return nil, nil
	}
	v := getenv(name)
	toks := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' })
	if len(toks) == 0 {
		return nil, fmt.Errorf("--auth-token-env %s: the variable %s is empty or not set (export %s=$(openssl rand -hex 32))", name, name, name)
	}
	for i, t := range toks {
		if len(t) < MinTokenLen {
			return nil, fmt.Errorf("--auth-token-env %s: token %d is %d characters long; use at least %d (export %s=$(openssl rand -hex 32))", name, i+1, len(t), MinTokenLen, name)
		}
	}
	return toks, nil
}
