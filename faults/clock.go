package faults

import (
	"context"
	"sync"
	"time"
)

// Clock is where faults get the time and how they wait.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends, returning ctx's error then.
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the wall clock.
type RealClock struct{}

var _ Clock = RealClock{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx ends.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ManualClock is a clock for tests: time stands still until Advance, and
// Sleep advances it by the time slept at once (so injected latency shows
// in the clock, not in the test's wall time).
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
	// Slept is the total time Sleep was asked to wait.
	slept time.Duration
}

var _ Clock = (*ManualClock)(nil)

// NewManualClock returns a manual clock at t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{now: t} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep advances the clock by d at once (unless ctx has ended).
func (c *ManualClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	c.mu.Lock()
	c.slept += d
	c.mu.Unlock()
	return nil
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Slept returns the total time Sleep was asked to wait.
func (c *ManualClock) Slept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}
