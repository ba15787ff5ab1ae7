package mcpsource

import (
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// notes makes the server's notifications about a call (progress, log
// messages) reach the call's peer before the call returns. The go-sdk
// client hands a response to its caller as soon as it is read, while the
// notifications read before it wait in a queue for their handler: the
// call would end, and its peer be forgotten, before they are passed on.
// So the transport counts the notifications it reads (arrived), the
// client's middleware those handled (handled), and a call that has a
// peer waits, when it returns, until every notification read before its
// answer is handled.
type notes struct {
	arrived, handled atomic.Uint64

	mu      sync.Mutex
	changed chan struct{}
}

// settleMax bounds the wait of settle, against a count gone wrong (a
// line that looked like a notification and was not).
const settleMax = 2 * time.Second

func (n *notes) handle() {
	n.handled.Add(1)
	n.mu.Lock()
	if n.changed != nil {
		close(n.changed)
		n.changed = nil
	}
	n.mu.Unlock()
}

// settle waits until every notification read so far is handled.
func (n *notes) settle(ctx context.Context) {
	target := n.arrived.Load()
	if n.handled.Load() >= target {
		return
	}
	timer := time.NewTimer(settleMax)
	defer timer.Stop()
	for n.handled.Load() < target {
		n.mu.Lock()
		if n.changed == nil {
			n.changed = make(chan struct{})
		}
		ch := n.changed
		n.mu.Unlock()
		if n.handled.Load() >= target {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// counting wraps a stream of JSON-RPC lines (stdio) or SSE lines (HTTP)
// so that the notifications read are counted.
func (n *notes) counting(r io.ReadCloser) io.ReadCloser {
	return &countingReader{r: r, n: n}
}

// notificationMark is what the head of a notification's line holds:
// every encoder writes "method" among the first keys of a request, and a
// response has none.
var notificationMark = []byte(`"method":"notifications/`)

// headBytes is how much of a line's head is looked at.
const headBytes = 96

type countingReader struct {
	r    io.ReadCloser
	n    *notes
	head []byte // the current line's first bytes
	full bool   // head holds headBytes: the rest of the line is skipped
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	for _, b := range p[:k] {
		if b == '\n' {
			if bytes.Contains(c.head, notificationMark) {
				c.n.arrived.Add(1)
			}
			c.head, c.full = c.head[:0], false
			continue
		}
		if !c.full {
			c.head = append(c.head, b)
			c.full = len(c.head) >= headBytes
		}
	}
	return k, err
}

func (c *countingReader) Close() error { return c.r.Close() }
