package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	toolenv "github.com/toolenv/toolenv"
)

// CheckTimeout bounds the one request of Check when the client's own
// Timeout is longer: a check answers within seconds, or says the
// endpoint did not.
const CheckTimeout = 30 * time.Second

// CheckPrompt is the user message of Check's request.
const CheckPrompt = "Reply with the word OK."

// Check sends the endpoint one chat request for model, outside the
// records and without retries, and returns nil when an OpenAI-compatible
// chat completion comes back (or a 429: the endpoint, the key and the
// model are there, only busy). Otherwise it returns a StatusUnavailable
// *toolenv.Error naming the URL and saying what answered: nothing
// (connection refused, no such host, no answer within the limit), an
// HTTP status with an excerpt of its body, or an answer that is not a
// chat completion; its hint says what to check. A client that replays
// from the records (Options.Replay) uses no network, and Check returns
// nil.
//
// Commands that need a model call it before their first episode, so that
// a dead endpoint fails in seconds rather than after every episode's
// retries.
func (c *Client) Check(ctx context.Context, model string) error {
	if c.opts.Replay {
		return nil
	}
	body, err := json.Marshal(&Request{Model: model, Messages: []Message{{Role: "user", Content: CheckPrompt}}, Temperature: Float(0)})
	if err != nil {
		return fmt.Errorf("llm: encode request: %w", err)
	}
	raw, ferr := c.checkPost(ctx, "/chat/completions", body)
	if ferr != nil {
		return c.checkError(model, ferr)
	}
	var resp Response
	if raw != nil && (json.Unmarshal(raw, &resp) != nil || len(resp.Choices) == 0) {
		return c.checkError(model, &Error{Endpoint: c.show("/chat/completions"), StatusCode: http.StatusOK,
			Message: "the answer is not an OpenAI chat completion: " + snippet(raw)})
	}
	return nil
}

// CheckEmbeddings is Check for an embeddings endpoint: one request
// embedding one short text with model.
func (c *Client) CheckEmbeddings(ctx context.Context, model string) error {
	if c.opts.Replay {
		return nil
	}
	body, err := json.Marshal(embeddingRequest{Model: model, Input: []string{"OK"}})
	if err != nil {
		return fmt.Errorf("llm: encode request: %w", err)
	}
	raw, ferr := c.checkPost(ctx, "/embeddings", body)
	if ferr != nil {
		return c.checkError(model, ferr)
	}
	var resp embeddingResponse
	if raw != nil && (json.Unmarshal(raw, &resp) != nil || len(resp.Data) == 0 || len(resp.Data[0].Embedding) == 0) {
		return c.checkError(model, &Error{Endpoint: c.show("/embeddings"), StatusCode: http.StatusOK,
			Message: "the answer is not an OpenAI embeddings response: " + snippet(raw)})
	}
	return nil
}

// checkPost makes Check's one attempt. A 429 is no error, and no body.
func (c *Client) checkPost(ctx context.Context, path string, body []byte) ([]byte, *Error) {
	cc := *c
	cc.opts.Timeout = min(c.opts.Timeout, CheckTimeout)
	out, err := cc.attempt(ctx, c.withQuery(c.base+path), c.show(path), body)
	if err != nil && err.StatusCode == http.StatusTooManyRequests {
		return nil, nil
	}
	return out, err
}

// checkError turns the failed exchange of a check into the error a user
// reads: the endpoint, the model, what answered and what to check.
func (c *Client) checkError(model string, err *Error) error {
	what, hint := describeFailure(err, c.opts.Timeout)
	return &toolenv.Error{Status: toolenv.StatusUnavailable, Hint: hint,
		Message: fmt.Sprintf("model endpoint %s (model %q) failed its check: %s", c.shown, model, what)}
}

// describeFailure says what answered a failed exchange, and what to check.
func describeFailure(e *Error, timeout time.Duration) (what, hint string) {
	switch {
	case e.StatusCode == 0:
		cause := e.Err
		var ne net.Error
		var dns *net.DNSError
		switch {
		case errors.Is(cause, syscall.ECONNREFUSED):
			return "nothing answered (connection refused)", "start the model server, or check the URL's host and port"
		case errors.As(cause, &dns):
			return fmt.Sprintf("nothing answered (no such host %s)", dns.Name), "check the URL's host name"
		case errors.As(cause, &ne) && ne.Timeout(), errors.Is(cause, context.DeadlineExceeded):
			return fmt.Sprintf("no answer within %s", min(timeout, CheckTimeout)),
				"the server may be busy or still loading the model: try again when it answers, or check the URL"
		case errors.Is(cause, context.Canceled):
			return "interrupted", ""
		}
		msg := e.Message
		if cause != nil {
			msg += ": " + cause.Error()
		}
		return "nothing answered (" + msg + ")", "check the URL and that the server is up"
	case e.StatusCode == http.StatusOK:
		return e.Message, "is the URL the OpenAI-compatible base URL, usually ending in /v1, and not another service?"
	case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden:
		return fmt.Sprintf("HTTP %d: %s", e.StatusCode, strings.TrimSuffix(e.Message, " (check the API key: is its environment variable set?)")),
			"check the API key: is the environment variable that holds it (the command's *-key-env flag) set?"
	case e.StatusCode == http.StatusNotFound:
		return fmt.Sprintf("HTTP 404: %s", strings.TrimSuffix(e.Message, " (check the base URL, usually ending in /v1, and the model name)")),
			"check the base URL (usually ending in /v1) and the model name the server serves"
	}
	return fmt.Sprintf("HTTP %d: %s", e.StatusCode, e.Message), "check the server's log; the request was one short chat completion"
}

// Endpoint is one model a command needs, for Preflight.
type Endpoint struct {
	// Role names it for the user: the flag that gave it ("--model",
	// "--judge-url").
	Role string
	// Client and Model are the endpoint and the model asked for.
	Client *Client
	Model  string
	// Embeddings checks an embeddings endpoint rather than chat.
	Embeddings bool
}

// Preflight checks each endpoint once (endpoints of the same URL, model
// and kind are checked together), in order, and returns the first
// failure, prefixed with the roles that named it. Nil clients are
// skipped.
func Preflight(ctx context.Context, eps ...Endpoint) error {
	type key struct {
		url, model string
		emb        bool
	}
	roles := map[key][]string{}
	var order []key
	clients := map[key]*Client{}
	for _, ep := range eps {
		if ep.Client == nil {
			continue
		}
		k := key{ep.Client.BaseURL(), ep.Model, ep.Embeddings}
		if _, ok := roles[k]; !ok {
			order = append(order, k)
			clients[k] = ep.Client
		}
		roles[k] = append(roles[k], ep.Role)
	}
	for _, k := range order {
		var err error
		if k.emb {
			err = clients[k].CheckEmbeddings(ctx, k.model)
		} else {
			err = clients[k].Check(ctx, k.model)
		}
		if err != nil {
			var te *toolenv.Error
			if errors.As(err, &te) {
				cp := *te
				cp.Message = strings.Join(roles[k], ", ") + ": " + cp.Message
				return &cp
			}
			return fmt.Errorf("%s: %w", strings.Join(roles[k], ", "), err)
		}
	}
	return nil
}
