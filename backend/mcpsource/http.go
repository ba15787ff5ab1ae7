package mcpsource

import (
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpTransport is the streamable HTTP transport to the server: its
// headers on every request, every JSON answer bounded by
// MaxMessageBytes, every SSE event too.
func (c *Client) httpTransport() mcp.Transport {
	base := c.opts.HTTPClient
	if base == nil {
		base = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	hc := *base
	hc.Transport = &headerTransport{next: rt, headers: c.run.Headers, limit: int64(c.opts.MaxMessageBytes), notes: &c.fwd.notes}
	if hc.Timeout == 0 {
		// The standalone SSE stream is long-lived: bound the time to the
		// response headers instead of the whole exchange.
		if t, ok := rt.(*http.Transport); ok && t.ResponseHeaderTimeout == 0 {
			t = t.Clone()
			t.ResponseHeaderTimeout = c.opts.StartTimeout
			hc.Transport = &headerTransport{next: t, headers: c.run.Headers, limit: int64(c.opts.MaxMessageBytes), notes: &c.fwd.notes}
		}
	}
	return &mcp.StreamableClientTransport{Endpoint: c.run.URL, HTTPClient: &hc, MaxRetries: -1, MaxEventSize: c.opts.MaxMessageBytes}
}

// headerTransport adds the server's headers, bounds JSON answers and
// counts the notifications of event streams (notes).
type headerTransport struct {
	next    http.RoundTripper
	headers map[string]string
	limit   int64
	notes   *notes
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if !strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream") {
		resp.Body = &limitedBody{r: resp.Body, left: t.limit}
	} else if t.notes != nil {
		resp.Body = t.notes.counting(resp.Body)
	}
	return resp, nil
}

// limitedBody fails with ErrTooLarge past its limit instead of reading
// on.
type limitedBody struct {
	r    io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One more byte tells a body of exactly the limit from a longer one.
		var one [1]byte
		if n, _ := b.r.Read(one[:]); n > 0 {
			return 0, ErrTooLarge
		}
		return b.r.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.r.Close() }
