package llm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fuzzServer answers every request with the status, Retry-After and body
// the current fuzz input sets (one input runs at a time per process).
type fuzzServer struct {
	status     int
	retryAfter string
	body       []byte
}

func (s *fuzzServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.retryAfter != "" {
		w.Header().Set("Retry-After", s.retryAfter)
	}
	w.WriteHeader(s.status)
	w.Write(s.body)
}

// FuzzResponse answers the client's chat and embedding requests over
// real HTTP on loopback with any status and body: the client returns a
// response with choices or an *Error naming the endpoint and saying what
// was wrong, never a panic; it never shows the key in the endpoint's
// query; a retryable error is marked so and nothing else is.
func FuzzResponse(f *testing.F) {
	for _, c := range []struct {
		status int
		ra     string
		body   string
	}{
		{200, "", `{"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}], "data": [{"index": 0, "embedding": [0.5, -1]}]}`},
		{200, "", `{"choices": []}`}, {200, "", `{"choices": [{"message": {"content": 5}}]}`}, {200, "", ``},
		{200, "", `{"data": [{"index": -1, "embedding": [1]}, {"index": 9}]}`},
		{429, "3", `{"error": {"message": "slow down", "type": "rate_limit"}}`}, {429, "-1", `{"error": "plain"}`},
		{500, "", `<html>oops</html>`}, {401, "", `{"error": {"message": ""}}`}, {404, "", strings.Repeat("é", 400)}, {302, "", ``},
	} {
		f.Add(c.status, c.ra, []byte(c.body))
	}
	fs := &fuzzServer{}
	hs := httptest.NewServer(fs)
	defer hs.Close()
	c := New(hs.URL+"/v1?api-key=SECRETKEY", Options{MaxRetries: -1, Timeout: 5 * time.Second, HTTPClient: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}})
	f.Fuzz(func(t *testing.T, status int, retryAfter string, body []byte) {
		if status < 200 || status > 599 {
			status = 200 + (status%400+400)%400
		}
		for _, c := range []byte(retryAfter) {
			if c < 0x20 || c > 0x7e {
				retryAfter = "" // not a value a server can send in a header
				break
			}
		}
		fs.status, fs.retryAfter, fs.body = status, retryAfter, body
		resp, err := c.Chat(context.Background(), &Request{Model: "m", Messages: []Message{{Role: "user", Content: "q"}}})
		check := func(what string, err error) {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%s: %d: an error of type %T: %v", what, status, err, err)
			}
			if e.Endpoint == "" || e.Message == "" || strings.Contains(e.Error(), "SECRETKEY") {
				t.Fatalf("%s: %d: the error does not say where and what, or shows the key: %v", what, status, e)
			}
			if want := status == 429 || status >= 500 || status == 408; e.Retryable != want {
				t.Fatalf("%s: %d: retryable %v", what, status, e.Retryable)
			}
			if status == 429 {
				if n, err := strconv.Atoi(retryAfter); err == nil && n >= 0 && e.RetryAfter != time.Duration(n)*time.Second {
					t.Fatalf("%s: Retry-After %q read as %s", what, retryAfter, e.RetryAfter)
				}
			}
		}
		if err != nil {
			check("chat", err)
		} else if len(resp.Choices) == 0 {
			t.Fatal("a chat response without choices was accepted")
		} else {
			resp.Text()
		}
		vecs, err := c.Embed(context.Background(), "m", []string{"a"})
		if err != nil {
			check("embed", err)
		} else if len(vecs) != 1 || vecs[0] == nil {
			t.Fatalf("embeddings for 1 input: %v", vecs)
		}
	})
}
