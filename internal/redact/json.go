package redact

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// varRef is a ${VAR} or ${env:VAR} reference: a value that names where
// a secret is, not the secret.
var varRef = regexp.MustCompile(`\$\{(?:env:)?[A-Za-z_][A-Za-z0-9_]*\}`)

// secretKeys are the keys of a JSON configuration whose values are
// credentials (compared without case, '-' and '_').
var secretKeys = map[string]bool{
	"apikey": true, "token": true, "accesstoken": true, "password": true, "secret": true,
	"authorization": true, "clientsecret": true, "bearer": true,
}

// JSON returns a configuration written as JSON (an mcpServers document
// given inline, say) with its credentials hidden: every value of an
// "env" or "headers" object, and of a key that names a credential
// ("api_key", "token", "Authorization", …), unless it only references an
// environment variable (${VAR}); URLs as URL hides them. Text that is not
// a JSON object is returned as Text returns it.
func JSON(s string) string {
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if !strings.HasPrefix(strings.TrimSpace(s), "{") || dec.Decode(&v) != nil {
		return Text(s)
	}
	v = maskJSON(v, false)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return Mask
	}
	return strings.TrimRight(b.String(), "\n")
}

func maskJSON(v any, secret bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			norm := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(k))
			out[k] = maskJSON(e, secret || norm == "env" || norm == "headers" || secretKeys[norm])
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = maskJSON(e, secret)
		}
		return out
	case string:
		if secret && x != "" && !varRef.MatchString(x) {
			return Mask // a credential written inline
		}
		return Text(x)
	}
	return v
}
