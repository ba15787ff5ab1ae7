package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolenv/toolenv/invoke"
)

// SessionRewinder is what a backend that keeps per-session state
// implements so that a session can be taken back to an earlier point
// (sqltools.Backend and sqlrest.Backend do): SessionCalls gives a mark
// (how many entries the session's log holds), Rewind takes the session
// back to the state it had at a mark — its results and its world's
// writes after it undone, on every replica (the rewind is an entry of
// the session's log).
type SessionRewinder interface {
	SessionCalls(ctx context.Context, id string) (int64, error)
	Rewind(ctx context.Context, id string, mark int64) error
}

// SessionMarks returns the mark of session id in every collection of
// reg whose backend keeps sessions, by collection name: what
// RewindSessions takes back to. An episode takes the marks before a
// step, and rewinds to them when the step is cut short (a timeout, a
// client gone), so that the step leaves nothing behind.
func SessionMarks(ctx context.Context, reg *invoke.Registry, id string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, c := range reg.Collections() {
		r, ok := reg.Backend(c.Name).(SessionRewinder)
		if !ok {
			continue
		}
		n, err := r.SessionCalls(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("collection %s: %w", c.Name, err)
		}
		out[c.Name] = n
	}
	return out, nil
}

// RewindSessions takes session id back to marks (SessionMarks) in every
// collection they name.
func RewindSessions(ctx context.Context, reg *invoke.Registry, id string, marks map[string]int64) error {
	var errs []error
	for name, mark := range marks {
		r, ok := reg.Backend(name).(SessionRewinder)
		if !ok {
			continue
		}
		if err := r.Rewind(ctx, id, mark); err != nil {
			errs = append(errs, fmt.Errorf("collection %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
