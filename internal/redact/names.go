package redact

import (
	"strings"
	"unicode"
)

// secretWords are the words of a name that make its value a secret.
var secretWords = map[string]bool{
	"password": true, "passwd": true, "pwd": true, "pass": true, "secret": true, "token": true, "key": true,
	"apikey": true, "sig": true, "signature": true, "auth": true, "authorization": true, "credential": true,
	"credentials": true, "cookie": true, "jwt": true, "bearer": true, "private": true,
}

// SecretName reports whether a query parameter, libpq keyword, JSON key,
// header or flag named name holds a secret: one of its words (split at
// "-", "_", ".", spaces and case changes) is password, secret, token,
// key, sig, auth, credential, cookie, … or ends in one ("sslpassword",
// "apikey", "accesstoken", "clientsecret"). A name whose last word is
// "env" holds the name of a variable, not a secret ("--llm-key-env"),
// and counts ("max-tokens") are not secrets.
func SecretName(name string) bool {
	words := splitWords(name)
	if len(words) == 0 || words[len(words)-1] == "env" {
		return false
	}
	for _, w := range words {
		if secretWords[w] {
			return true
		}
		for _, suffix := range []string{"password", "passwd", "secret", "token", "key", "signature"} {
			if strings.HasSuffix(w, suffix) {
				return true
			}
		}
	}
	return false
}

// splitWords lowercases name and splits it into words.
func splitWords(name string) []string {
	var words []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			words = append(words, b.String())
			b.Reset()
		}
	}
	prevLower := false
	for _, r := range name {
		switch {
		case r == '-' || r == '_' || r == '.' || unicode.IsSpace(r):
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
		b.WriteRune(unicode.ToLower(r))
	}
	flush()
	return words
}

// Credential reports whether value, given under name in a configuration
// (an environment variable or a header of an MCP server, say), holds a
// credential: the name suggests a secret (SecretName: "GITHUB_TOKEN",
// "Authorization", "X-Api-Key"), or the value carries one that Text
// hides (a URL's password or query, "Bearer …", "password=…"). A path,
// a mode or a count under an ordinary name ("MEMORY_FILE_PATH",
// "LOG_LEVEL") is not one.
func Credential(name, value string) bool {
	if value == "" {
		return false
	}
	return SecretName(name) || Text(value) != value
}
