package upstream

import (
	"regexp"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// The sources rules cite.
const (
	srcAppendixD   = "MirrorAPI (StableToolBench-MirrorAPI paper) Appendix D"
	srcCheckResult = "StableToolBench server/main.py check_result"
	srcProxyLabels = "StableToolBench toolbench/inference/server.py process_error labels"
	srcClient      = "StableToolBench toolbench/inference/Downstream_tasks/rapidapi.py _step"
	srcHTTP        = "HTTP status semantics (RFC 9110)"
)

// rules is the classification table. Order matters: protocol facts
// (transport errors, the proxy's own error labels, HTTP status codes) come
// first because they are exact; the keyword rules follow in Appendix D's
// order (not connected, not found, parameter change, parsing error, not
// authorised, other), and success is last.
var rules = []Rule{
	// Transport: no HTTP answer at all.
	{Name: "transport_timeout", Class: ClassNotConnected, Status: toolenv.StatusTimeout, Source: srcClient + ` ("Timeout error...", code 5)`,
		Match: func(o *Observation) bool { return o.Transport != nil && isTimeout(o.Transport) }},
	{Name: "transport_failed", Class: ClassNotConnected, Status: toolenv.StatusUnavailable, Source: srcAppendixD + " (not connected: connection)",
		Match: func(o *Observation) bool { return o.Transport != nil }},
	{Name: "body_too_large", Class: ClassOther, Status: toolenv.StatusTooLarge, Source: "toolenv response size limit",
		Match: func(o *Observation) bool { return o.TooLarge }},

	// The proxy's own labels for errors it recognised (process_error).
	{Name: "proxy_label_rate_limit", Class: ClassNotConnected, Status: toolenv.StatusRateLimited, Source: srcProxyLabels,
		Match: errorIs("Too many requests error...", "Rate limit error...", "Rate limit per minute error...")},
	{Name: "proxy_label_not_working", Class: ClassNotConnected, Status: toolenv.StatusUnavailable, Source: srcProxyLabels,
		Match: errorIs("API not working error...", "API temporarily not working error...", "Gateway error...")},
	{Name: "proxy_label_timeout", Class: ClassNotConnected, Status: toolenv.StatusTimeout, Source: srcClient,
		Match: errorIs("Timeout error...")},
	{Name: "proxy_label_unauthorized", Class: ClassNotAuthorized, Status: toolenv.StatusUnauthorized, Source: srcProxyLabels,
		Match: errorIs("Unauthorized error...", "Unsubscribed error...", "Blocked error...")},
	{Name: "proxy_label_tool_input", Class: ClassParameterChange, Status: toolenv.StatusInvalidArguments, Source: "StableToolBench server/main.py (\"Tool input parse error...\")",
		Match: func(o *Observation) bool { return strings.HasPrefix(o.Error, "Tool input parse error") }},
	{Name: "proxy_bad_envelope", Class: ClassOther, Status: toolenv.StatusUpstreamError, Source: srcClient + ` ("request invalid, data error", code 12)`,
		Match: func(o *Observation) bool { return o.BadEnvelope }},

	// HTTP status codes of the answer itself.
	{Name: "http_429", Class: ClassNotConnected, Status: toolenv.StatusRateLimited, Source: srcCheckResult + ` ("status_code=429")`,
		Match: httpStatusIn(429)},
	{Name: "http_401_403", Class: ClassNotAuthorized, Status: toolenv.StatusUnauthorized, Source: srcAppendixD + " (401 or 403 error codes)",
		Match: httpStatusIn(401, 403, 407)},
	{Name: "http_404_410", Class: ClassNotFound, Status: toolenv.StatusNotFound, Source: srcAppendixD + " (a 404 error message)",
		Match: httpStatusIn(404, 410)},
	{Name: "http_400_422", Class: ClassParameterChange, Status: toolenv.StatusInvalidArguments, Source: srcHTTP + " (the request was rejected as malformed)",
		Match: httpStatusIn(400, 422)},
	{Name: "http_5xx", Class: ClassNotConnected, Status: toolenv.StatusUpstreamError, Source: srcCheckResult + ` ("status_code=50", "500", "504")`,
		Match: func(o *Observation) bool { return o.HTTPStatus >= 500 && o.HTTPStatus <= 599 }},
	{Name: "http_not_2xx", Class: ClassOther, Status: toolenv.StatusUpstreamError, Source: srcClient + ` ("request invalid, data error. status_code=N")`,
		Match: func(o *Observation) bool { return o.HTTPStatus != 0 && (o.HTTPStatus < 200 || o.HTTPStatus > 299) }},

	// Keyword rules, in Appendix D's order.
	{Name: "text_rate_limit", Class: ClassNotConnected, Status: toolenv.StatusRateLimited, Source: srcAppendixD + ` (response contains "rate limit"); ` + srcProxyLabels,
		Match: textHas("rate limit", "ratelimit", "too many requests", "you have exceeded", "you are being rate limited", "access restricted. check credits balance", "quota exceeded", "exceeded your quota")},
	{Name: "text_timeout", Class: ClassNotConnected, Status: toolenv.StatusTimeout, Source: srcAppendixD + ` (response contains "timeout"); ` + srcCheckResult + ` ("time out", "timed out")`,
		Match: textHas("timeout", "time out", "timed out", "the request to the api has timed out")},
	{Name: "text_not_connected", Class: ClassNotConnected, Status: toolenv.StatusUnavailable, Source: srcAppendixD + ` (error includes "HTTP"; response contains "HTTP error", "connection"); ` + srcCheckResult + ` ("status_code=50")`,
		Match: func(o *Observation) bool {
			if strings.Contains(strings.ToLower(o.Error), "http") {
				return true
			}
			if textHas("http error", "httperror", "connection", "connectionpool", "api (not working)", "oops, an error in the gateway", "bad gateway", "service unavailable")(o) {
				return true
			}
			return o.mention >= 500 && o.mention <= 599
		}},
	{Name: "text_not_found", Class: ClassNotFound, Status: toolenv.StatusNotFound, Source: srcAppendixD + ` (not found, not available, API doesn't exists, Service Not Found, internal error, 404); ` + srcCheckResult + ` ("does not exist")`,
		Match: func(o *Observation) bool {
			return textHas("not found", "not available", "does not exist", "doesn't exist", "api doesn't exists", "service not found", "internal error", "no such endpoint", "endpoint does not exist")(o) ||
				o.mention == 404
		}},
	{Name: "text_parameter", Class: ClassParameterChange, Status: toolenv.StatusInvalidArguments, Source: srcAppendixD + ` (parameters, parsing, undefined variables); ` + srcCheckResult + ` ("parameter", "parse", "is not defined")`,
		Match: func(o *Observation) bool {
			return textHas("parameter", "parse", "is not defined", "unexpected keyword argument", "missing required", "required argument", "required positional argument", "required keyword-only argument")(o) ||
				o.mention == 400 || o.mention == 422
		}},
	{Name: "parsing_error", Class: ClassParsingError, Status: toolenv.StatusUpstreamError, Source: srcAppendixD + ` (error begins with "Function executing from")`,
		Match: func(o *Observation) bool {
			return strings.HasPrefix(strings.TrimSpace(o.Error), "Function executing from")
		}},
	{Name: "text_not_authorized", Class: ClassNotAuthorized, Status: toolenv.StatusUnauthorized, Source: srcAppendixD + ` (authorize, unauthorized, blocked user, unsubscribe, credential, disabled for your subscription, 401, 403); ` + srcCheckResult,
		Match: func(o *Observation) bool {
			if textHas("authoriz", "authenticat", "blocked user", "unsubscribe", "not subscribed", "credential", "disabled for your subscription", "access_denied", "access denied", "invalid api key", "api key is invalid", "forbidden")(o) {
				return true
			}
			return o.mention == 401 || o.mention == 403
		}},

	// Whatever is left.
	{Name: "empty_response", Class: ClassOther, Status: toolenv.StatusUpstreamError, Source: srcCheckResult + " (len(response) == 0)",
		Match: func(o *Observation) bool {
			if o.Error != "" {
				return false
			}
			switch strings.TrimSpace(o.Response) {
			case "", "null", "None", `""`:
				return true
			}
			return false
		}},
	{Name: "error_field", Class: ClassOther, Status: toolenv.StatusUpstreamError, Source: srcAppendixD + " (any non-empty error message); " + srcCheckResult + " (error != '')",
		Match: func(o *Observation) bool { return strings.TrimSpace(o.Error) != "" }},
	{Name: "success", Class: ClassSuccess, Status: toolenv.StatusOK, Source: srcAppendixD + " (all other requests)",
		Match: func(*Observation) bool { return true }},
}

// errorIs matches when the proxy's error field is one of labels.
func errorIs(labels ...string) func(*Observation) bool {
	return func(o *Observation) bool {
		e := strings.TrimSpace(o.Error)
		for _, l := range labels {
			if e == l {
				return true
			}
		}
		return false
	}
}

// httpStatusIn matches the answer's HTTP status.
func httpStatusIn(codes ...int) func(*Observation) bool {
	return func(o *Observation) bool {
		for _, c := range codes {
			if o.HTTPStatus == c {
				return true
			}
		}
		return false
	}
}

// textHas matches when the error field, or an error-shaped response,
// contains one of phrases (compared in lower case).
func textHas(phrases ...string) func(*Observation) bool {
	return func(o *Observation) bool {
		o.prepare()
		for _, t := range o.texts {
			for _, p := range phrases {
				if strings.Contains(t, p) {
					return true
				}
			}
		}
		return false
	}
}

// statusMention finds an HTTP status code mentioned as one in lower-cased
// text: "status_code=500", "error 404", "http 403", "\"status\": 401",
// "404 not found". A bare number (a price of 1500, an id of 404) is not a
// mention.
var statusMention = regexp.MustCompile(`(?:\b(?:status|status_?code|code|error|http(?:/\d(?:\.\d)?)?)["']?\s*[:=]?\s*["']?([1-5]\d\d)\b|\b([1-5]\d\d)\s+(?:not found|unauthori[sz]ed|forbidden|internal server error|bad gateway|service unavailable|gateway time-?out|too many requests|bad request|unprocessable))`)

// mentionedStatus returns the first HTTP status code t mentions, or 0.
func mentionedStatus(t string) int {
	if !hasThreeDigits(t) {
		return 0
	}
	m := statusMention.FindStringSubmatch(t)
	if m == nil {
		return 0
	}
	s := m[1]
	if s == "" {
		s = m[2]
	}
	n, _ := strconv.Atoi(s)
	return n
}

// hasThreeDigits reports whether t has three digits in a row, the
// regular expression's precondition.
func hasThreeDigits(t string) bool {
	run := 0
	for i := 0; i < len(t); i++ {
		if t[i] >= '0' && t[i] <= '9' {
			run++
			if run == 3 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}
