package server

import (
	"context"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// errStdinClosed answers a request the server sent a stdio client whose
// input has ended: nobody is left to answer it.
var errStdinClosed = errors.New("the client closed its input (stdin) and can no longer answer the server's request")

// stdioFlight follows the requests in flight on a stdio connection, so
// that the end of the input does not drop an answer: the go-sdk cancels
// every request still being handled as soon as Read returns an error, so
// a client that writes its requests and closes its input (`printf … |
// toolenv mcp`) would get none of the answers still being made. Read
// therefore reports the end of the input only once every request read
// has been answered.
//
// A request the server sent the client (sampling, elicitation, roots)
// that is unanswered at the end of the input can never be answered: it
// is given an error answer (handed to the SDK as if the client had sent
// it), so that the handler waiting for it goes on and answers its own
// request. A request the server sends after the end of the input fails at
// once.
type stdioFlight struct {
	mu       sync.Mutex
	incoming map[jsonrpc.ID]bool // requests read, not yet answered
	outgoing map[jsonrpc.ID]bool // requests sent, not yet answered
	changed  chan struct{}       // closed (and replaced) at every change
}

// read notes a message Read returns.
func (f *stdioFlight) read(msg jsonrpc.Message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.IsCall() {
			if f.incoming == nil {
				f.incoming = map[jsonrpc.ID]bool{}
			}
			f.incoming[m.ID] = true
		}
	case *jsonrpc.Response:
		delete(f.outgoing, m.ID)
	}
	f.signal()
}

// write notes a message the server writes.
func (f *stdioFlight) write(msg jsonrpc.Message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if !m.IsCall() {
			return
		}
		if f.outgoing == nil {
			f.outgoing = map[jsonrpc.ID]bool{}
		}
		f.outgoing[m.ID] = true
	case *jsonrpc.Response:
		delete(f.incoming, m.ID)
	}
	f.signal()
}

// signal wakes drain; f.mu is held.
func (f *stdioFlight) signal() {
	if f.changed != nil {
		close(f.changed)
		f.changed = nil
	}
}

// drain is called at the end of the input. It returns an error answer to
// a request the server sent and the client did not answer (Read hands it
// to the SDK; drain is called again after it), or nil once no request
// read is unanswered, or ctx ends, or the connection closes.
func (f *stdioFlight) drain(ctx context.Context, closed <-chan struct{}) jsonrpc.Message {
	for {
		f.mu.Lock()
		for id := range f.outgoing {
			delete(f.outgoing, id)
			f.mu.Unlock()
			return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: mcpCodeInternal, Message: errStdinClosed.Error()}}
		}
		if len(f.incoming) == 0 {
			f.mu.Unlock()
			return nil
		}
		if f.changed == nil {
			f.changed = make(chan struct{})
		}
		wait := f.changed
		f.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil
		case <-closed:
			return nil
		}
	}
}
