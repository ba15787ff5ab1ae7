package upstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// ruleCases holds one observation per rule (the rule that must decide
// it). TestEveryRuleHasACase makes sure no rule goes untested.
var ruleCases = []struct {
	rule string
	obs  Observation
}{
	{"transport_timeout", Observation{Transport: fmt.Errorf("post: %w", context.DeadlineExceeded)}},
	{"transport_failed", Observation{Transport: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}},
	{"body_too_large", Observation{HTTPStatus: 200, TooLarge: true, Response: strings.Repeat("x", 100)}},
	{"proxy_label_rate_limit", Observation{Error: "Rate limit per minute error...", Response: "{'message': 'You have exceeded the rate limit per minute for your plan'}"}},
	{"proxy_label_not_working", Observation{Error: "API not working error...", Response: "Your Client (working) ---> Gateway (working) ---> API (not working)"}},
	{"proxy_label_timeout", Observation{Error: "Timeout error..."}},
	{"proxy_label_unauthorized", Observation{Error: "Unsubscribed error...", Response: "{'message': 'You are not subscribed to this API.'}"}},
	{"proxy_label_tool_input", Observation{Error: "Tool input parse error...\n"}},
	{"proxy_bad_envelope", Observation{BadEnvelope: true, Response: "<html><body>gateway</body></html>"}},
	{"http_429", Observation{HTTPStatus: 429, Response: `{"message":"Too many requests"}`}},
	{"http_401_403", Observation{HTTPStatus: 403, Response: `{"message":"nope"}`}},
	{"http_404_410", Observation{HTTPStatus: 404, Response: "<html><title>404 Not Found</title></html>"}},
	{"http_400_422", Observation{HTTPStatus: 422, Response: `{"detail":"bad"}`}},
	{"http_5xx", Observation{HTTPStatus: 500, Response: "<html><body><h1>500 Internal Server Error</h1></body></html>"}},
	{"http_not_2xx", Observation{HTTPStatus: 302, Response: ""}},
	{"text_rate_limit", Observation{Response: "{'message': 'You have exceeded the MONTHLY quota for Requests on your current plan, BASIC.'}"}},
	{"text_timeout", Observation{Response: "{'message': 'The request to the API has timed out. Please try again later'}"}},
	{"text_not_connected", Observation{Error: "Message error...", Response: "HTTPSConnectionPool(host='x.p.rapidapi.com', port=443): Max retries exceeded with url: /v1 (Caused by NewConnectionError)"}},
	{"text_not_found", Observation{Response: `{'message': "API doesn't exists"}`}},
	{"text_parameter", Observation{Error: "Function executing from my_tools.Data.theclique.api import songkick_concert error...\nsongkick_concert() got an unexpected keyword argument 'idd'"}},
	{"parsing_error", Observation{Error: "Function executing from my_tools.Data.theclique.api import songkick_concert error...\nExpecting value: line 1 column 1 (char 0)"}},
	{"text_not_authorized", Observation{Response: `{"message":"Invalid API key. Go to https://docs.rapidapi.com/docs/keys for more info."}`}},
	{"empty_response", Observation{Response: ""}},
	{"error_field", Observation{Error: "Message error...", Response: `{"error": "Invalid id supplied"}`}},
	{"success", Observation{Response: `{"date":"2023-04-01","name":"The Lumineers","venue_url":"https://www.songkick.com/venues/1"}`}},
}

func TestRules(t *testing.T) {
	for _, tc := range ruleCases {
		t.Run(tc.rule, func(t *testing.T) {
			o := tc.obs
			got := Classify(&o)
			if got.Name != tc.rule {
				t.Fatalf("Classify = rule %q (class %s), want rule %q", got.Name, got.Class, tc.rule)
			}
		})
	}
}

func TestEveryRuleHasACase(t *testing.T) {
	have := map[string]bool{}
	for _, tc := range ruleCases {
		have[tc.rule] = true
	}
	seen := map[string]bool{}
	for _, r := range Rules() {
		if seen[r.Name] {
			t.Errorf("rule name %q is used twice", r.Name)
		}
		seen[r.Name] = true
		if !have[r.Name] {
			t.Errorf("rule %q has no test case in ruleCases", r.Name)
		}
		if r.Source == "" || r.Class == "" || r.Status == "" {
			t.Errorf("rule %q lacks a source, class or status", r.Name)
		}
		if (r.Class == ClassSuccess) != (r.Status == toolenv.StatusOK) {
			t.Errorf("rule %q: class %s with status %s", r.Name, r.Class, r.Status)
		}
	}
}

// TestKeywordRulesSpareData checks the deliberate difference from
// StableToolBench's check_result: real data that merely contains a URL, a
// number like 404 or the word "parameter" is a success.
func TestKeywordRulesSpareData(t *testing.T) {
	long := func(s string) string { return s + strings.Repeat(` {"filler": "data data data data"},`, 12) }
	cases := map[string]string{
		"url in data":       long(`[{"name":"pinterest.com","url":"https://pinterest.com/party","score":0.112},`) + `]`,
		"price 1500":        long(`[{"item":"laptop","price":1500,"stock":404},`) + `]`,
		"parameters field":  long(`[{"parameter":"temperature","value":21.5},`) + `]`,
		"short url answer":  `{"short_url": "https://bit.ly/3xyz"}`,
		"not found in text": long(`[{"title":"Lost and not found: a novel"},`) + `]`,
	}
	for name, resp := range cases {
		t.Run(name, func(t *testing.T) {
			got := Classify(&Observation{Response: resp})
			if got.Class != ClassSuccess {
				t.Fatalf("Classify = %s by rule %s, want success", got.Class, got.Name)
			}
		})
	}
}

// TestAppendixDOrder checks that keyword rules apply in Appendix D's order:
// a message matching several classes gets the first one's.
func TestAppendixDOrder(t *testing.T) {
	cases := []struct {
		obs  Observation
		want Class
	}{
		{Observation{Response: "{'message': 'Connection refused: user not found'}"}, ClassNotConnected},
		{Observation{Response: "{'message': 'Unauthorized: resource not found'}"}, ClassNotFound},
		{Observation{Response: "{'message': 'Invalid parameter: not authorized for this value'}"}, ClassParameterChange},
		{Observation{Error: "Function executing from my_tools.X.y.api import z error...\nname 'q' is not defined"}, ClassParameterChange},
		{Observation{Response: `{"status": 401, "message": "bad key"}`}, ClassNotAuthorized},
		{Observation{Response: `{"status_code": 503, "message": "later"}`}, ClassNotConnected},
	}
	for _, tc := range cases {
		o := tc.obs
		if got := Classify(&o); got.Class != tc.want {
			t.Errorf("Classify(%+v) = %s (rule %s), want %s", tc.obs, got.Class, got.Name, tc.want)
		}
	}
}

func TestProxyNames(t *testing.T) {
	tool := &toolenv.Tool{Name: "get_123_go_for_my_tool", Title: "123 Go!", Category: "News, Media", Group: "My Tool"}
	c, tl, a := proxyNames(tool)
	if c != "News_Media" || tl != "my_tool" || a != "get_123_go" {
		t.Errorf("proxyNames = %q %q %q", c, tl, a)
	}
	tool.Title = "ID"
	if _, _, a := proxyNames(tool); a != "is_id" {
		t.Errorf("api name of ID = %q, want is_id (change_name)", a)
	}
}

func BenchmarkClassify(b *testing.B) {
	obs := make([]Observation, len(ruleCases))
	for i, tc := range ruleCases {
		obs[i] = tc.obs
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o := obs[i%len(obs)]
		_ = Classify(&o)
	}
}

func BenchmarkClassifySuccess(b *testing.B) {
	base := Observation{Response: `[{"name":"pinterest.com","score":0.112},{"name":"marthastewart.com","score":0.088},{"name":"birthdayinabox.com","score":0.071},{"name":"shindigz.com","score":0.067},{"name":"orientaltrading.com","score":0.063},{"name":"evite.com","score":0.059}]`}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		o := base
		_ = Classify(&o)
	}
}

// FuzzClassify: any answer gets exactly one rule of the table, the same
// one twice, and never panics.
func FuzzClassify(f *testing.F) {
	for _, tc := range ruleCases {
		f.Add(tc.obs.Error, tc.obs.Response, tc.obs.HTTPStatus)
	}
	f.Fuzz(func(t *testing.T, errMsg, resp string, status int) {
		o1 := Observation{Error: errMsg, Response: resp, HTTPStatus: status}
		o2 := o1
		r1, r2 := Classify(&o1), Classify(&o2)
		if r1.Name != r2.Name || r1.Name == "" {
			t.Fatalf("rule %q then %q", r1.Name, r2.Name)
		}
		if r1.Class == ClassSuccess && (strings.TrimSpace(errMsg) != "" || status != 0 && (status < 200 || status > 299)) {
			t.Fatalf("success despite error %q / status %d", errMsg, status)
		}
	})
}
