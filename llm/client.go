package llm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/redact"
)

// Recorder stores every request and response under a key, so that a run
// can be replayed without the network. store.Store implements it.
type Recorder interface {
	// Lookup returns the recorded response body for key.
	Lookup(ctx context.Context, key string) (resp []byte, ok bool, err error)
	// Record stores the request and response bodies under key.
	Record(ctx context.Context, key string, req, resp []byte) error
}

// Options configure a Client. The zero value is usable.
type Options struct {
	// APIKey is sent as a bearer token when set.
	APIKey string
	// HTTPClient defaults to a client with no overall timeout (Timeout
	// bounds each attempt instead).
	HTTPClient *http.Client
	// Timeout bounds each attempt; default 120s.
	Timeout time.Duration
	// MaxRetries is how many times a failed attempt (network error,
	// timeout, 429, 5xx) is retried with backoff; default 3, negative
	// means none.
	MaxRetries int
	// Backoff is the first retry's delay, doubled each time; default 1s.
	Backoff time.Duration
	// Recorder, when set, records every successful exchange.
	Recorder Recorder
	// Reuse serves a request from the records when it was made before,
	// without the network.
	Reuse bool
	// Replay serves every request from the records and never uses the
	// network: a request with no record is an error.
	Replay bool
	// Logger logs retries; nil discards.
	Logger *slog.Logger
	// MaxResponseBytes is the largest answer read; a longer one is an
	// error (not retried: the endpoint would send it again), never cut
	// silently. Default 64 MiB.
	MaxResponseBytes int64
}

// Client talks to one OpenAI-compatible endpoint. It is safe for
// concurrent use.
type Client struct {
	base  string // without the query
	query string // the base URL's query, sent with every request
	shown string // base and query redacted, for messages
	opts  Options
	http  *http.Client
	log   *slog.Logger
}

// New returns a client for the endpoint at baseURL, e.g.
// "http://127.0.0.1:8000/v1". A URL with no path gets "/v1". A query
// string (an API key some gateways take as ?api-key=) is kept apart and
// sent with every request: http://h/v1?api-key=K posts to
// http://h/v1/chat/completions?api-key=K. Messages and logs show the URL
// with its query values and user info hidden.
func New(baseURL string, opts Options) *Client {
	base, query := baseURL, ""
	if u, err := url.Parse(baseURL); err == nil && u.Scheme != "" {
		query = u.RawQuery
		u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
		u.Path = strings.TrimRight(u.Path, "/")
		u.RawPath = strings.TrimRight(u.RawPath, "/")
		if u.Path == "" {
			u.Path, u.RawPath = "/v1", ""
		}
		base = u.String()
	} else {
		base = strings.TrimRight(base, "/")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 120 * time.Second
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = 3
	}
	if opts.MaxRetries < 0 {
		opts.MaxRetries = 0
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = 64 << 20
	}
	hc := opts.HTTPClient
	if hc == nil {
		// Go's default transport keeps two idle connections per host;
		// evaluations call one endpoint with many workers at once.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256
		hc = &http.Client{Transport: tr}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{base: base, query: query, opts: opts, http: hc, log: log}
	c.shown = redact.URL(c.withQuery(base))
	return c
}

// BaseURL returns the endpoint's base URL, its query string included
// (print it with redact.URL, or use Endpoint).
func (c *Client) BaseURL() string { return c.withQuery(c.base) }

// Endpoint returns the base URL with its secrets hidden, for messages.
func (c *Client) Endpoint() string { return c.shown }

// withQuery appends the base URL's query to u.
func (c *Client) withQuery(u string) string {
	if c.query == "" {
		return u
	}
	return u + "?" + c.query
}

// Error is a failed exchange with the endpoint.
type Error struct {
	// Endpoint is the URL called.
	Endpoint string
	// StatusCode is the HTTP status, 0 when no answer came.
	StatusCode int
	// Message is what went wrong.
	Message string
	// Retryable says a later attempt might succeed.
	Retryable bool
	// RetryAfter is the server's Retry-After, if it sent one.
	RetryAfter time.Duration
	Err        error
}

// Error implements error.
func (e *Error) Error() string {
	s := "llm " + e.Endpoint + ": "
	if e.StatusCode != 0 {
		s += "HTTP " + strconv.Itoa(e.StatusCode) + ": "
	}
	s += e.Message
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// ErrNotRecorded is returned in replay mode for a request that was never
// recorded.
var ErrNotRecorded = errors.New("no recorded response for this request (replay mode uses no network; run once without --replay to record it)")

// Key returns the record key of a request body: the hex SHA-256 of its
// kind and canonical JSON. The base URL is not part of it, so records
// replay against any host.
func Key(kind string, body []byte) string {
	canon, err := toolenv.CanonicalizeJSON(body)
	if err != nil {
		canon = body
	}
	h := sha256.New()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil))
}

// Chat sends a chat-completion request.
func (c *Client) Chat(ctx context.Context, req *Request) (*Response, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("llm: encode request: %w", err)
	}
	raw, replayed, err := c.exchange(ctx, "chat", "/chat/completions", body)
	if err != nil {
		return nil, err
	}
	var resp Response
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, &Error{Endpoint: c.show("/chat/completions"), Message: "the answer is not a chat completion: " + snippet(raw), Err: err}
	}
	if len(resp.Choices) == 0 {
		return nil, &Error{Endpoint: c.show("/chat/completions"), Message: "the answer has no choices: " + snippet(raw)}
	}
	resp.Replayed = replayed
	return &resp, nil
}

// Embed returns one embedding per input, in order.
func (c *Client) Embed(ctx context.Context, model string, inputs []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingRequest{Model: model, Input: inputs})
	if err != nil {
		return nil, fmt.Errorf("llm: encode request: %w", err)
	}
	raw, _, err := c.exchange(ctx, "embeddings", "/embeddings", body)
	if err != nil {
		return nil, err
	}
	var resp embeddingResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, &Error{Endpoint: c.show("/embeddings"), Message: "the answer is not an embedding response: " + snippet(raw), Err: err}
	}
	out := make([][]float32, len(inputs))
	for _, d := range resp.Data {
		if d.Index >= 0 && d.Index < len(out) {
			out[d.Index] = d.Embedding
		}
	}
	for i, v := range out {
		if v == nil {
			return nil, &Error{Endpoint: c.show("/embeddings"), Message: fmt.Sprintf("no embedding for input %d of %d", i, len(inputs))}
		}
	}
	return out, nil
}

// exchange posts body to path, through the records when configured.
func (c *Client) exchange(ctx context.Context, kind, path string, body []byte) (resp []byte, replayed bool, err error) {
	key := ""
	if c.opts.Recorder != nil || c.opts.Replay { // canonicalising a large request costs: only for records
		key = Key(kind, body)
	}
	if c.opts.Recorder != nil && (c.opts.Replay || c.opts.Reuse) {
		got, ok, err := c.opts.Recorder.Lookup(ctx, key)
		if err != nil {
			return nil, false, fmt.Errorf("llm: read records: %w", err)
		}
		if ok {
			return got, true, nil
		}
	}
	if c.opts.Replay {
		return nil, false, &Error{Endpoint: c.show(path), Message: "request " + key[:12], Err: ErrNotRecorded}
	}
	resp, err = c.post(ctx, path, body)
	if err != nil {
		return nil, false, err
	}
	if c.opts.Recorder != nil {
		if err := c.opts.Recorder.Record(ctx, key, body, resp); err != nil {
			return nil, false, fmt.Errorf("llm: record exchange: %w", err)
		}
	}
	return resp, false, nil
}

// show is the redacted URL of path, for messages.
func (c *Client) show(path string) string { return redact.URL(c.withQuery(c.base + path)) }

func (c *Client) post(ctx context.Context, path string, body []byte) ([]byte, error) {
	endpoint := c.withQuery(c.base + path)
	shown := c.show(path)
	var last *Error
	for attempt := 0; ; attempt++ {
		out, err := c.attempt(ctx, endpoint, shown, body)
		if err == nil {
			return out, nil
		}
		last = err
		if !err.Retryable || attempt >= c.opts.MaxRetries || ctx.Err() != nil {
			break
		}
		wait := c.opts.Backoff << attempt
		wait += time.Duration(rand.Int64N(int64(wait)/4 + 1))
		if err.RetryAfter > wait {
			wait = err.RetryAfter
		}
		c.log.Warn("llm request failed; retrying", "endpoint", shown, "attempt", attempt+1, "wait", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, &Error{Endpoint: shown, Message: "gave up waiting to retry", Err: ctx.Err()}
		case <-t.C:
		}
	}
	if last.Retryable {
		last.Message += fmt.Sprintf(" (after %d attempts; check that the server at %s is up and not overloaded)", c.opts.MaxRetries+1, c.shown)
	}
	return nil, last
}

func (c *Client) attempt(ctx context.Context, endpoint, shown string, body []byte) ([]byte, *Error) {
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Endpoint: shown, Message: "bad endpoint URL", Err: redactErr(err)}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.opts.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	hresp, err := c.http.Do(hreq)
	if err != nil {
		e := &Error{Endpoint: shown, Message: "no answer", Err: redactErr(err), Retryable: ctx.Err() == nil}
		var ne net.Error
		switch {
		case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
			e.Message = fmt.Sprintf("no answer before the caller's deadline (which came before the per-request timeout of %s)", c.opts.Timeout)
		case errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded):
			e.Message = fmt.Sprintf("no answer within %s", c.opts.Timeout)
		}
		return nil, e
	}
	defer hresp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(hresp.Body, c.opts.MaxResponseBytes+1))
	if err != nil {
		return nil, &Error{Endpoint: shown, StatusCode: hresp.StatusCode, Message: "reading the answer", Err: redactErr(err), Retryable: true}
	}
	if int64(len(out)) > c.opts.MaxResponseBytes {
		return nil, &Error{Endpoint: shown, StatusCode: hresp.StatusCode,
			Message: fmt.Sprintf("the answer is over %d bytes, the most this client reads (ask for fewer tokens: max_tokens)", c.opts.MaxResponseBytes)}
	}
	if hresp.StatusCode/100 == 2 {
		return out, nil
	}
	e := &Error{Endpoint: shown, StatusCode: hresp.StatusCode, Message: errorMessage(out)}
	switch {
	case hresp.StatusCode == http.StatusTooManyRequests:
		e.Retryable = true
		if s, err := strconv.Atoi(hresp.Header.Get("Retry-After")); err == nil && s >= 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		}
	case hresp.StatusCode >= 500, hresp.StatusCode == http.StatusRequestTimeout:
		e.Retryable = true
	case hresp.StatusCode == http.StatusUnauthorized || hresp.StatusCode == http.StatusForbidden:
		e.Message += " (check the API key: is its environment variable set?)"
	case hresp.StatusCode == http.StatusNotFound:
		e.Message += " (check the base URL, usually ending in /v1, and the model name)"
	}
	return nil, e
}

func errorMessage(body []byte) string {
	var ae apiError
	if json.Unmarshal(body, &ae) == nil && len(ae.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(ae.Error, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
		var s string
		if json.Unmarshal(ae.Error, &s) == nil && s != "" {
			return s
		}
	}
	return snippet(body)
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return strconvQuote(s)
}

func strconvQuote(s string) string { return strconv.Quote(s) }

// redactErr hides the secrets of the URL a transport error names.
func redactErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		cp := *ue
		cp.URL = redact.URL(ue.URL)
		return &cp
	}
	return err
}
