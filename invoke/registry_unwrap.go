package invoke

import toolenv "github.com/toolenv/toolenv"

// Unwrapper is a backend that wraps another (a drifted collection's
// backend wraps its base's): what the wrapped one offers beyond Invoke
// (sessions to start, drop, roll back; their origins) is reached through
// Unwrap.
type Unwrapper interface {
	Unwrap() toolenv.Handler
}

// BackendAs returns the first of h and the backends it wraps (through
// Unwrapper, at most 8 deep) that is a T, so that an interface a base
// backend implements is found behind its wrappers.
func BackendAs[T any](h toolenv.Handler) (T, bool) {
	for i := 0; h != nil && i < 8; i++ {
		if t, ok := h.(T); ok {
			return t, true
		}
		u, ok := h.(Unwrapper)
		if !ok {
			break
		}
		h = u.Unwrap()
	}
	var zero T
	return zero, false
}
