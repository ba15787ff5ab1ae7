package session

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Evictions counts the sessions a cap evicts and logs them without
// flooding the log: the first eviction is logged at once, the ones that
// follow within Every are summed up in one line at the end of that
// window. It is safe for concurrent use; a nil *Evictions does nothing.
type Evictions struct {
	kind, flag string
	max        int
	log        *slog.Logger
	every      time.Duration
	onEvict    func(n int)
	now        func() time.Time
	afterFunc  func(time.Duration, func())

	total   atomic.Int64
	mu      sync.Mutex
	window  time.Time // when the current window began; zero: none
	pending int       // evictions in the window not yet logged
}

// EvictionOptions configure an Evictions.
type EvictionOptions struct {
	// Kind names the sessions in log lines ("task", "MCP").
	Kind string
	// Flag is the option whose cap was reached (default --max-sessions).
	Flag string
	// Max is the cap.
	Max int
	// Logger receives the lines (at warn level); nil discards.
	Logger *slog.Logger
	// Every is the longest a summed-up line waits (default 10 s).
	Every time.Duration
	// OnEvict is told of every n sessions evicted (a metrics counter).
	OnEvict func(n int)
	// Now is the clock (default time.Now).
	Now func() time.Time
	// AfterFunc calls f once d has passed (default: time.AfterFunc);
	// tests inject their own to end a window when they choose.
	AfterFunc func(d time.Duration, f func())
}

// NewEvictions returns an eviction log.
func NewEvictions(o EvictionOptions) *Evictions {
	if o.Flag == "" {
		o.Flag = "--max-sessions"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Every <= 0 {
		o.Every = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.AfterFunc == nil {
		o.AfterFunc = func(d time.Duration, f func()) { time.AfterFunc(d, f) }
	}
	return &Evictions{kind: o.Kind, flag: o.Flag, max: o.Max, log: o.Logger, every: o.Every, onEvict: o.OnEvict, now: o.Now, afterFunc: o.AfterFunc}
}

// Evicted records n sessions evicted.
func (e *Evictions) Evicted(n int) {
	if e == nil || n <= 0 {
		return
	}
	e.total.Add(int64(n))
	if e.onEvict != nil {
		e.onEvict(n)
	}
	e.mu.Lock()
	if !e.window.IsZero() {
		e.pending += n
		e.mu.Unlock()
		return
	}
	e.window = e.now()
	e.mu.Unlock()
	e.log.LogAttrs(context.Background(), slog.LevelWarn, e.kind+" sessions evicted: "+e.flag+" "+strconv.Itoa(e.max)+" was reached",
		slog.Int("evicted", n), slog.Int64("evicted_total", e.total.Load()),
		slog.String("hint", "the idlest sessions not in use were closed; their next call gets an error saying so; raise "+e.flag+" or have clients end the sessions they no longer need"))
	e.afterFunc(e.every, e.flush)
}

// flush logs the evictions of the window that ends now, and opens a new
// window if there were any.
func (e *Evictions) flush() {
	e.mu.Lock()
	n := e.pending
	e.pending = 0
	if n == 0 {
		e.window = time.Time{}
		e.mu.Unlock()
		return
	}
	now := e.now()
	since := now.Sub(e.window).Round(time.Second)
	e.window = now
	e.mu.Unlock()
	e.log.LogAttrs(context.Background(), slog.LevelWarn, e.kind+" sessions evicted: "+e.flag+" "+strconv.Itoa(e.max)+" was reached",
		slog.Int("evicted", n), slog.String("in_the_last", since.String()), slog.Int64("evicted_total", e.total.Load()))
	e.afterFunc(e.every, e.flush)
}

// Total is how many sessions were evicted.
func (e *Evictions) Total() int64 {
	if e == nil {
		return 0
	}
	return e.total.Load()
}

// Recent remembers the last n keys it was given, each with a value (the
// principal a session belonged to), in bounded memory: what a cap
// evicted, so that a late call gets an error saying so rather than "not
// found". It is not safe for concurrent use.
type Recent struct {
	m    map[string]string
	ring []string
	next int
}

// NewRecent returns a memory of the last n keys (n >= 1).
func NewRecent(n int) *Recent {
	return &Recent{m: map[string]string{}, ring: make([]string, max(n, 1))}
}

// Add remembers key with value, forgetting the oldest key when full.
func (r *Recent) Add(key, value string) {
	if _, ok := r.m[key]; ok {
		r.m[key] = value
		return
	}
	if old := r.ring[r.next]; old != "" {
		delete(r.m, old)
	}
	r.ring[r.next] = key
	r.next = (r.next + 1) % len(r.ring)
	r.m[key] = value
}

// Get returns key's value, if key is remembered.
func (r *Recent) Get(key string) (string, bool) {
	v, ok := r.m[key]
	return v, ok
}

// Len is how many keys are remembered.
func (r *Recent) Len() int { return len(r.m) }
