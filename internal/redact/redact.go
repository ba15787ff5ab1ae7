// Package redact is toolenv's one redaction, used wherever it writes a
// URL, a store DSN or a command line (logs, errors, warnings, headers,
// config print, run.json, reports, dataset cards, manifests). The rule:
//
//   - a URL (any scheme: http, https, postgres, …) loses its user info's
//     password (or a user name given alone, often a token), every query
//     value and its fragment: "postgres://u:xxxxx@db/x?sslpassword=xxxxx";
//   - a libpq keyword/value string ("host=db password=x") keeps its
//     keywords and loses the values of those whose name suggests a
//     secret (SecretName: password, sslpassword, sslkey, …);
//   - free text loses the secrets of the URLs in it, the values of
//     name=value and "name": "value" pairs whose name suggests a secret,
//     and what follows "Bearer " unless it is an ordinary word
//     ("no bearer token is configured" keeps "token");
//   - a command line loses the value of every flag whose name suggests a
//     secret, and every other value is redacted as above.
//
// Every secret becomes Mask.
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces what is hidden.
const Mask = "xxxxx"

// URL returns s with its password (or a user name given alone, often a
// token) and every query value replaced by Mask
// ("http://user:xxxxx@host/p?key=xxxxx"), its fragment dropped. Text that does not parse as a URL with a scheme is returned
// with any "?query" hidden.
func URL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		if i := strings.IndexByte(s, '?'); i >= 0 {
			s = s[:i] + "?" + Mask
		}
		// A URL that does not parse (a bad port, a stray %) may still
		// carry user info: everything before the host's last @ goes.
		if i := strings.Index(s, "://"); i >= 0 {
			rest := s[i+3:]
			host := rest
			if j := strings.IndexAny(rest, "/?"); j >= 0 {
				host = rest[:j]
			}
			if at := strings.LastIndexByte(host, '@'); at >= 0 {
				s = s[:i+3] + Mask + rest[at:]
			}
		}
		return s
	}
	return redacted(u)
}

func redacted(u *url.URL) string {
	c := *u
	if c.User != nil {
		if _, has := c.User.Password(); has {
			c.User = url.UserPassword(c.User.Username(), Mask)
		} else { // a name alone is often a token (https://TOKEN@host)
			c.User = url.User(Mask)
		}
	}
	if c.RawQuery != "" {
		q, err := url.ParseQuery(c.RawQuery)
		if err != nil || len(q) == 0 {
			c.RawQuery = Mask
		} else {
			for k := range q {
				q[k] = []string{Mask}
			}
			c.RawQuery = q.Encode()
		}
	}
	c.Fragment, c.RawFragment = "", ""
	out := c.String()
	return strings.ReplaceAll(out, url.QueryEscape(Mask), Mask)
}

// Text returns s with the secrets of free text hidden: the URLs in it
// (any scheme) redacted as URL does, the values of name=value and
// "name": "value" pairs whose name suggests a secret (SecretName), and
// the token after "Bearer ". Text without any of these is returned as
// it is.
func Text(s string) string {
	if !strings.Contains(s, "://") && !strings.Contains(s, "=") && !strings.Contains(s, `":`) && !hasBearer(s) {
		return s
	}
	if strings.Contains(s, "://") {
		s = textURLs(s)
	}
	s = pairPattern.ReplaceAllStringFunc(s, func(m string) string {
		sub := pairPattern.FindStringSubmatch(m)
		name, val := sub[1], sub[3]
		if sub[4] != "" { // "name": "value"
			name, val = sub[4], sub[6]
		}
		if !SecretName(name) || strings.HasPrefix(strings.Trim(val, `"'`), Mask) || val == `""` || val == "''" {
			return m
		}
		head := m[:len(m)-len(val)]
		if strings.HasPrefix(val, `"`) {
			return head + `"` + Mask + `"`
		}
		// A trailing colon or period ends the sentence, not the value.
		return head + Mask + val[len(strings.TrimRight(val, ".:")):]
	})
	return bearerPattern.ReplaceAllStringFunc(s, func(m string) string {
		sub := bearerPattern.FindStringSubmatch(m)
		if OrdinaryWord(sub[2]) {
			return m // "no bearer token is configured"
		}
		return sub[1] + Mask
	})
}

// hasBearer reports whether s holds "bearer" in any case.
func hasBearer(s string) bool {
	for i := 0; i+6 <= len(s); i++ {
		if (s[i]|0x20) == 'b' && strings.EqualFold(s[i:i+6], "bearer") {
			return true
		}
	}
	return false
}

// OrdinaryWord reports whether w, read after "bearer", is a word of
// prose rather than a credential: one of the words that follow "bearer"
// in sentences ("token", "auth", "header", "scheme", "is", …), in any
// case. Anything else after "Bearer " is hidden, a short lowercase
// password ("letmein") as much as a generated token (a JWT, 32 hex
// digits, "ghp_…").
func OrdinaryWord(w string) bool {
	return len(w) <= 16 && proseAfterBearer[strings.ToLower(w)]
}

// proseAfterBearer are the words that follow "bearer" in prose.
var proseAfterBearer = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`token tokens auth authentication authorization header headers
		scheme schemes credential credentials string strings value values prefix format type
		is was are were the and or of for in to not with without required missing given set
		configured only must should may can needed expected invalid none security realm`) {
		m[w] = true
	}
	return m
}()

// pairPattern matches name=value (the value quoted with '…' as in libpq
// strings, or unquoted up to a separator) and "name": "value".
var pairPattern = regexp.MustCompile(`(?i)\b([a-z][a-z0-9_.\-]*)(\s*=\s*)('(?:\\.|[^'\\])*'|[^\s&;,'"<>()\[\]{}]+)|"([^"\\]{1,64})"(\s*:\s*)("(?:\\.|[^"\\])*")`)

// bearerPattern matches a bearer token.
var bearerPattern = regexp.MustCompile(`(?i)(bearer\s+)([a-z0-9._~+/=\-]{4,})`)

// textURLs redacts every URL in s.
func textURLs(s string) string {
	var b strings.Builder
	for {
		loc := schemePattern.FindStringIndex(s)
		if loc == nil {
			b.WriteString(s)
			return b.String()
		}
		i := loc[0]
		b.WriteString(s[:i])
		s = s[i:]
		end := strings.IndexAny(s, " \t\n\r\"'<>`,;)")
		if end < 0 {
			end = len(s)
		}
		// A trailing colon or period ends the sentence, not the URL.
		for end > 0 && (s[end-1] == ':' || s[end-1] == '.') {
			end--
		}
		b.WriteString(URL(s[:end]))
		s = s[end:]
	}
}

// schemePattern finds where a URL begins.
var schemePattern = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://`)
