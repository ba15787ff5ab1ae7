// Package redact hides the secrets configured URLs may carry (a password
// in the user info, an API key in the query string) wherever toolenv
// prints a URL: warnings sent to clients, headers, logs, errors and
// reports.
package redact

import (
	"net/url"
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
			return s[:i] + "?" + Mask
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

// Text returns s with every http(s) URL in it redacted as URL does: for
// messages that may quote a URL (a transport error names the URL it
// failed to reach).
func Text(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	for {
		i := indexURL(s)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
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

func indexURL(s string) int {
	i := strings.Index(s, "http://")
	j := strings.Index(s, "https://")
	switch {
	case i < 0:
		return j
	case j < 0:
		return i
	}
	return min(i, j)
}
