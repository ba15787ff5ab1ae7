package redact

import (
	"net/url"
	"strings"
)

// keyword is one keyword=value pair of a libpq connection string, the
// value's bytes at s[start:end] (quotes included).
type keyword struct {
	name       string
	value      string // unquoted
	start, end int
}

// parseKeywords reads s as a libpq keyword/value connection string
// ("host=db port=5432 password='a b'"): pairs separated by spaces, a
// value bare or in single quotes with \' and \\ escaped. ok is false
// when s is not one.
func parseKeywords(s string) (kws []keyword, ok bool) {
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			return kws, len(kws) > 0
		}
		start := i
		for i < len(s) && (s[i] == '_' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9') {
			i++
		}
		name := s[start:i]
		if name == "" {
			return nil, false
		}
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) || s[i] != '=' {
			return nil, false
		}
		i++
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		vstart := i
		var v strings.Builder
		if i < len(s) && s[i] == '\'' {
			i++
			closed := false
			for i < len(s) {
				c := s[i]
				if c == '\\' && i+1 < len(s) {
					v.WriteByte(s[i+1])
					i += 2
					continue
				}
				i++
				if c == '\'' {
					closed = true
					break
				}
				v.WriteByte(c)
			}
			if !closed {
				return nil, false
			}
		} else {
			for i < len(s) && !isSpace(s[i]) {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				v.WriteByte(s[i])
				i++
			}
		}
		kws = append(kws, keyword{name: strings.ToLower(name), value: v.String(), start: vstart, end: i})
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// connKeywords are the libpq keywords that make a keyword/value string a
// PostgreSQL connection string (one of them must be there).
var connKeywords = map[string]bool{"host": true, "hostaddr": true, "port": true, "dbname": true, "user": true,
	"password": true, "service": true, "sslmode": true, "passfile": true}

// IsKeywords reports whether s is a libpq keyword/value connection
// string ("host=db dbname=toolenv password=…"): key=value pairs, one of
// their keys a connection keyword (host, hostaddr, port, dbname, user,
// password, service, sslmode, passfile).
func IsKeywords(s string) bool {
	if !strings.Contains(s, "=") {
		return false
	}
	kws, ok := parseKeywords(s)
	if !ok {
		return false
	}
	for _, k := range kws {
		if connKeywords[k.name] {
			return true
		}
	}
	return false
}

// Keywords returns the libpq keyword/value string s with the value of
// every keyword whose name suggests a secret (password, sslpassword,
// sslkey, …) replaced by Mask; a string that is not one is returned
// through Text.
func Keywords(s string) string {
	kws, ok := parseKeywords(s)
	if !ok {
		return Text(s)
	}
	var b strings.Builder
	last := 0
	for _, k := range kws {
		if !SecretName(k.name) {
			continue
		}
		b.WriteString(s[last:k.start])
		b.WriteString(Mask)
		last = k.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// DSN returns a store or queue location for messages and reports: a
// URL (postgres://…) redacted as URL does, a libpq keyword/value string
// as Keywords does, anything else (a file path) through Text, which
// leaves a path as it is.
func DSN(s string) string {
	switch {
	case isURL(s):
		return URL(s)
	case IsKeywords(s):
		return Keywords(s)
	}
	return Text(s)
}

// Value returns a configured value for printing: a URL or a libpq
// keyword/value string redacted whole (DSN), anything else through Text.
func Value(s string) string {
	if isURL(s) || IsKeywords(s) {
		return DSN(s)
	}
	return Text(s)
}

// isURL reports whether s is one URL with a scheme (no spaces).
func isURL(s string) bool {
	i := strings.Index(s, "://")
	if i <= 0 || strings.ContainsAny(s, " \t\n") {
		return false
	}
	return schemePattern.FindStringIndex(s) != nil && schemePattern.FindStringIndex(s)[0] == 0
}

// Secrets returns the secret values a URL or a libpq keyword/value
// string carries (the password of its user info, or a user name given
// alone; its query values; the values of keywords whose name suggests a
// secret), for Scrub: a library's error may quote them.
func Secrets(s string) []string {
	var out []string
	add := func(v string) {
		if len(v) >= 3 && v != Mask {
			out = append(out, v)
		}
	}
	if strings.Contains(s, "://") {
		if u, err := url.Parse(s); err == nil {
			if u.User != nil {
				if pw, ok := u.User.Password(); ok {
					add(pw)
				} else {
					add(u.User.Username())
				}
			}
			for _, vs := range u.Query() {
				for _, v := range vs {
					add(v)
				}
			}
			return out
		}
	}
	if kws, ok := parseKeywords(s); ok {
		for _, k := range kws {
			if SecretName(k.name) {
				add(k.value)
			}
		}
	}
	return out
}

// Scrub returns text with every one of secrets replaced by Mask, and
// then through Text: for the errors of libraries that quote what they
// were given.
func Scrub(text string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 3 {
			text = strings.ReplaceAll(text, sec, Mask)
			if q := url.QueryEscape(sec); q != sec {
				text = strings.ReplaceAll(text, q, Mask)
			}
		}
	}
	return Text(text)
}

// Args returns a command line for run records and reports: the value of
// every flag whose name suggests a secret (SecretName: --api-key K,
// --token=T) replaced by Mask, and every other argument through Value
// (URLs, DSNs, and secrets in text).
func Args(args []string) []string {
	out := make([]string, len(args))
	secretNext := false
	for i, a := range args {
		switch {
		case secretNext && !strings.HasPrefix(a, "-"):
			out[i] = Mask
		case strings.HasPrefix(a, "-") && strings.Contains(a, "="):
			name, val, _ := strings.Cut(a, "=")
			if SecretName(strings.TrimLeft(name, "-")) {
				out[i] = name + "=" + Mask
			} else {
				out[i] = name + "=" + Value(val)
			}
		default:
			out[i] = Value(a)
		}
		secretNext = strings.HasPrefix(a, "-") && !strings.Contains(a, "=") && SecretName(strings.TrimLeft(a, "-"))
	}
	return out
}
