// Package breaker holds circuit breakers for the dependencies a call may
// wait on (a real API's host, a model endpoint): after Failures failures
// in a row a breaker opens and calls skip the dependency at once; after
// Cooldown it lets one call through as a probe (half-open), which closes
// it on success or opens it again, for twice as long up to MaxCooldown, on
// failure.
package breaker

import (
	"fmt"
	"sync"
	"time"
)

// Options configure breakers. The zero value means the defaults.
type Options struct {
	// Failures in a row that open a breaker (default 5; negative: never
	// open).
	Failures int
	// Cooldown is how long an open breaker refuses calls before a probe
	// (default 30 s); it doubles after each failed probe.
	Cooldown time.Duration
	// MaxCooldown bounds the doubling (default 5 min).
	MaxCooldown time.Duration
	// Now is the clock (default time.Now); tests inject their own.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Failures == 0 {
		o.Failures = 5
	}
	if o.Cooldown <= 0 {
		o.Cooldown = 30 * time.Second
	}
	if o.MaxCooldown <= 0 {
		o.MaxCooldown = 5 * time.Minute
	}
	if o.MaxCooldown < o.Cooldown {
		o.MaxCooldown = o.Cooldown
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// State is a breaker's state.
type State string

// The states of a breaker.
const (
	Closed   State = "closed"    // calls pass
	Open     State = "open"      // calls skip the dependency
	HalfOpen State = "half_open" // one probe is out; other calls skip
)

// Breaker guards one dependency. It is safe for concurrent use.
type Breaker struct {
	opts     Options
	mu       sync.Mutex
	state    State
	fails    int // in a row
	cooldown time.Duration
	until    time.Time // when an open breaker lets a probe through
	probing  bool
	lastErr  string
}

// New returns a closed breaker.
func New(opts Options) *Breaker {
	opts = opts.withDefaults()
	return &Breaker{opts: opts, state: Closed, cooldown: opts.Cooldown}
}

// ErrOpen is what Allow returns while a breaker refuses calls.
type ErrOpen struct {
	// Failures is how many calls failed in a row.
	Failures int
	// Retry is when the next probe goes through.
	Retry time.Time
	// Last is the last failure's message.
	Last string
	now  time.Time
}

func (e *ErrOpen) Error() string {
	wait := e.Retry.Sub(e.now).Round(time.Second)
	s := fmt.Sprintf("circuit open after %d failures in a row, not called (next try in %s)", e.Failures, max(wait, 0))
	if e.Last != "" {
		s += "; last failure: " + e.Last
	}
	return s
}

// Allow asks to make a call. It returns done, to be called with the call's
// outcome (ok false for a failure of the dependency; a failure of the
// caller's own, such as invalid arguments, is ok), or an *ErrOpen while
// the breaker refuses calls.
func (b *Breaker) Allow() (done func(ok bool, err string), refused error) {
	if b.opts.Failures < 0 {
		return func(bool, string) {}, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.opts.Now()
	probe := false
	switch b.state {
	case Open:
		if now.Before(b.until) {
			return nil, &ErrOpen{Failures: b.fails, Retry: b.until, Last: b.lastErr, now: now}
		}
		b.state, b.probing, probe = HalfOpen, true, true
	case HalfOpen:
		if b.probing {
			return nil, &ErrOpen{Failures: b.fails, Retry: b.until, Last: b.lastErr, now: now}
		}
		b.probing, probe = true, true
	}
	var once sync.Once
	return func(ok bool, msg string) {
		once.Do(func() { b.record(ok, msg, probe) })
	}, nil
}

func (b *Breaker) record(ok bool, msg string, probe bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	if ok {
		b.state, b.fails, b.cooldown, b.lastErr = Closed, 0, b.opts.Cooldown, ""
		return
	}
	b.fails++
	b.lastErr = msg
	switch {
	case probe:
		b.cooldown = min(2*b.cooldown, b.opts.MaxCooldown)
		b.state, b.until = Open, b.opts.Now().Add(b.cooldown)
	case b.state == Closed && b.fails >= b.opts.Failures:
		b.state, b.until = Open, b.opts.Now().Add(b.cooldown)
	}
}

// State returns the breaker's state.
func (b *Breaker) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == Open && !b.opts.Now().Before(b.until) {
		return HalfOpen
	}
	return b.state
}

// Set holds one breaker per key (a host, an endpoint), made on first use.
type Set struct {
	opts Options
	mu   sync.Mutex
	m    map[string]*Breaker
}

// NewSet returns an empty set whose breakers use opts.
func NewSet(opts Options) *Set { return &Set{opts: opts, m: map[string]*Breaker{}} }

// Get returns the breaker of key.
func (s *Set) Get(key string) *Breaker {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.m[key]
	if b == nil {
		b = New(s.opts)
		s.m[key] = b
	}
	return b
}
