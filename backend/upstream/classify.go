package upstream

import (
	"context"
	"errors"
	"net"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// Class is the kind of answer an upstream gave, in the terms of MirrorAPI's
// Appendix D ("Request Error Identification and Request Filtering Rule").
type Class string

// The classes of Appendix D, in the order the appendix lists them.
const (
	ClassNotConnected    Class = "not_connected"    // HTTP errors, connection failures, rate limits, timeouts
	ClassNotFound        Class = "not_found"        // not found, not available, API doesn't exist, 404
	ClassParameterChange Class = "parameter_change" // the API complains about parameters, parsing or undefined variables
	ClassParsingError    Class = "parsing_error"    // the proxy's "Function executing from ..." errors
	ClassNotAuthorized   Class = "not_authorized"   // unauthorized, unsubscribed, blocked, 401/403
	ClassOther           Class = "other"            // any other error
	ClassSuccess         Class = "success"          // everything else
)

// Observation is everything the classifier looks at: what happened on the
// wire and what the API said.
type Observation struct {
	// Transport is the error that prevented an HTTP answer (connection
	// refused, DNS failure, timeout); nil when an answer arrived.
	Transport error
	// HTTPStatus is the HTTP status code of the answer; 0 without one.
	HTTPStatus int
	// Error is the proxy's "error" field; direct calls leave it empty.
	Error string
	// Response is the response as text: the proxy's "response" field
	// (its string value, or its JSON when it is not a string), or the
	// body of a direct call.
	Response string
	// BadEnvelope says the proxy answered 200 with a body that is not
	// its {"error", "response"} JSON.
	BadEnvelope bool
	// TooLarge says the body exceeded the configured limit.
	TooLarge bool

	// Worked out once by prepare, for the keyword rules.
	prepared bool
	texts    []string // lower-cased error, and response when error-shaped
	mention  int      // the HTTP status code the texts mention, or 0
}

// prepare works out what the keyword rules read.
func (o *Observation) prepare() {
	if o.prepared {
		return
	}
	o.prepared = true
	if o.Error != "" {
		o.texts = append(o.texts, strings.ToLower(o.Error))
	}
	if o.Response != "" && errorShaped(o.Response) {
		o.texts = append(o.texts, strings.ToLower(o.Response))
	}
	for _, t := range o.texts {
		if n := mentionedStatus(t); n != 0 {
			o.mention = n
			break
		}
	}
}

// Rule is one named classification rule. Rules are tried in order; the
// first that matches decides the class.
type Rule struct {
	// Name identifies the rule in Result.Meta["upstream_rule"], logs and
	// tests.
	Name string
	// Class is the Appendix D class the rule assigns.
	Class Class
	// Status is the toolenv.Status a Result of this rule gets.
	Status toolenv.Status
	// Source says where the rule comes from (Appendix D, check_result,
	// the proxy's own error labels, HTTP semantics).
	Source string
	// Match reports whether the rule applies.
	Match func(o *Observation) bool
}

// Classify returns the first rule of Rules that matches o. The last rule
// always matches (success), so Classify always returns a rule.
func Classify(o *Observation) Rule {
	o.prepare()
	for i := range rules {
		if rules[i].Match(o) {
			return rules[i]
		}
	}
	return rules[len(rules)-1] // unreachable: the success rule matches everything
}

// Rules returns a copy of the classification table, in the order it is
// applied.
func Rules() []Rule { return append([]Rule(nil), rules...) }

// isTimeout reports whether a transport error is a timeout.
func isTimeout(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// errorShaped reports whether a response text looks like an error message
// rather than data, so that keyword rules may read it. StableToolBench's
// check_result searches every response for words like "http", "404" or
// "parameter", which rejects any real answer that contains a URL, a price
// of 1500 or a field called "parameters"; toolenv applies the keyword
// rules to the error field always, and to the response only when it is
// short, an HTML page, or a small JSON object made of error-ish keys.
func errorShaped(s string) bool {
	t := strings.TrimSpace(s)
	if len([]rune(t)) <= shortResponse {
		return true
	}
	low := strings.ToLower(t[:min(len(t), 64)])
	if strings.HasPrefix(low, "<!doctype html") || strings.HasPrefix(low, "<html") {
		return true
	}
	return errorObject(t)
}

// shortResponse is the length (in characters) up to which any response is
// read by the keyword rules.
const shortResponse = 300

// errorKeys are the top-level keys an error object is made of.
var errorKeys = map[string]bool{
	"message": true, "messages": true, "error": true, "errors": true, "detail": true, "details": true,
	"status": true, "status_code": true, "statuscode": true, "code": true, "msg": true, "success": true,
	"info": true, "description": true, "title": true, "type": true, "timestamp": true, "path": true,
	"reason": true, "hint": true, "request_id": true, "requestid": true, "ok": true, "result": true,
}

// errorObject reports whether s is a JSON (or Python-repr) object of at
// most 6 keys, all of them error-ish.
func errorObject(s string) bool {
	if !strings.HasPrefix(s, "{") || len(s) > 4096 {
		return false
	}
	keys := topLevelKeys(s)
	if len(keys) == 0 || len(keys) > 6 {
		return false
	}
	for _, k := range keys {
		if !errorKeys[strings.ToLower(k)] {
			return false
		}
	}
	return true
}

// topLevelKeys returns the keys of the outermost object of a JSON or
// Python-repr text, scanning quotes and nesting; it gives up (nil) on
// anything it cannot follow.
func topLevelKeys(s string) []string {
	var keys []string
	depth := 0
	expectKey := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '{', '[', '(':
			depth++
			if depth == 1 && c == '{' {
				expectKey = true
			}
		case '}', ']', ')':
			depth--
		case ',':
			if depth == 1 {
				expectKey = true
			}
		case '"', '\'':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil
			}
			if depth == 1 && expectKey {
				keys = append(keys, s[i+1:j])
				expectKey = false
			}
			i = j
		}
	}
	return keys
}
