package toolenv

import "context"

// Handler executes a Call. Every backend and every middleware is a Handler.
//
// Invoke never returns a nil Result and never panics on bad input: a failure
// (unknown tool, invalid arguments, upstream down) is a Result whose Status
// says what went wrong, in the way MCP treats a tool failure as a result
// rather than a protocol error.
type Handler interface {
	Invoke(ctx context.Context, call *Call) *Result
}

// HandlerFunc adapts an ordinary function to a Handler.
type HandlerFunc func(ctx context.Context, call *Call) *Result

// Invoke calls f(ctx, call).
func (f HandlerFunc) Invoke(ctx context.Context, call *Call) *Result { return f(ctx, call) }

// Middleware wraps a Handler with cross-cutting behaviour (validation,
// caching, drift, faults, metrics).
type Middleware func(next Handler) Handler

// Chain wraps h in the middleware mws. The first middleware is the
// outermost: Chain(h, a, b) runs a, then b, then h.
func Chain(h Handler, mws ...Middleware) Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			h = mws[i](h)
		}
	}
	return h
}
