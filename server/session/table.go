// Package session issues and checks the ids of toolenv's task sessions
// (SLOT/SEL state on a server): ids the server makes, 128 random bits
// each, bound to the principal (bearer token) that asked for them, in a
// table with a cap on live sessions that evicts the idlest one not in use,
// and an idle timeout.
//
// Table keeps everything in memory: a session lives on the replica that
// issued it. An implementation over a shared store can take its place
// behind server.SessionIssuer.
package session

import (
	"container/list"
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Prefix begins every id a Table issues.
const Prefix = "ts-"

// Errors a Table returns; wrapped, so test them with errors.Is.
var (
	// ErrUnknown: the id was never issued, was issued to another
	// principal (the caller is not told which), ended, or was dropped
	// after being idle or evicted at the cap.
	ErrUnknown = errors.New("unknown session")
	// ErrFull: the table holds its maximum of sessions and every one is
	// in use.
	ErrFull = errors.New("too many sessions")
	// ErrEvicted: the session was evicted at the cap (the idlest one not
	// in use when a new one was needed). An error wrapping it also wraps
	// ErrUnknown.
	ErrEvicted = errors.New("evicted")
	// ErrClientFull: the client holds as many sessions as one client may
	// (Options.MaxPerClient) and every one is in use.
	ErrClientFull = errors.New("too many sessions for one client")
)

// Evicted returns the error of a call on session id after the cap of max
// sessions evicted it: it wraps ErrEvicted and ErrUnknown.
func Evicted(id string, max int) error { return evictedAt(id, "--max-sessions", max) }

// evictedAt is Evicted for the cap of flag.
func evictedAt(id, flag string, max int) error {
	return fmt.Errorf("%w %q: %w: %s %d was reached and it was the idlest session; raise %s or end the sessions you no longer need", ErrUnknown, clip(id), ErrEvicted, flag, max, flag)
}

type clientCtxKey struct{}

// WithClient returns ctx naming the client (guard.ClientKey) a session
// Issue makes is counted against, for Options.MaxPerClient.
func WithClient(ctx context.Context, client string) context.Context {
	return context.WithValue(ctx, clientCtxKey{}, client)
}

// clientOf is the client WithClient put in ctx, or "".
func clientOf(ctx context.Context) string {
	c, _ := ctx.Value(clientCtxKey{}).(string)
	return c
}

// Options configure a Table. The zero value means the defaults.
type Options struct {
	// Max caps the live sessions (default 4096). A new session over the
	// cap evicts the one idle longest that no call is using; when every
	// session is in use, Issue fails with ErrFull.
	Max int
	// Idle drops sessions unused this long (default 30 min; negative:
	// never).
	Idle time.Duration
	// ClientNamed accepts ids the server did not issue (the protocol
	// before server-issued ids): each is registered on first use, scoped
	// to the principal using it, and counts against Max like any other.
	ClientNamed bool
	// OnEnd is called (without locks held) with the session id a
	// backend knows (see Acquire) whenever a session ends: evicted,
	// idle, or ended by its client. Backends drop its state.
	OnEnd func(id string)
	// Now is the clock (default time.Now); tests inject their own.
	Now func() time.Time
	// AfterFunc calls f once d has passed (default: time.AfterFunc): it
	// ends the windows in which evictions are summed up in one log line
	// (see Evictions); tests inject their own.
	AfterFunc func(d time.Duration, f func())
	// Logger logs evictions (rate-limited: see Evictions); nil discards.
	Logger *slog.Logger
	// OnEvict is told of every n sessions evicted at the cap (a metrics
	// counter).
	OnEvict func(n int)
	// MaxPerClient caps the live sessions of one client (named by the
	// context of Issue and Acquire: WithClient; default a quarter of
	// Max; negative: no cap): a new session over it evicts that
	// client's idlest one not in use, so that one client cannot evict
	// everyone else's, or fails with ErrClientFull when all are in use.
	MaxPerClient int
}

// Table is an in-memory session table, safe for concurrent use.
type Table struct {
	opts Options
	mu   sync.Mutex
	m    map[string]*entry // by key: the id, or principal+"\x00"+name for a client-named one
	lru  *list.List        // front: most recently used
	// stats
	evicted, expired int
	// gone remembers the keys of the last sessions evicted (with their
	// principal), so that their late calls get ErrEvicted.
	gone      *Recent
	evictions *Evictions
	// perClient counts the live sessions of each client.
	perClient       map[string]int
	clientEvictions *Evictions
}

type entry struct {
	key, id   string // id is what backends see
	principal string
	client    string // what MaxPerClient counts against
	lastUsed  time.Time
	inUse     int
	elem      *list.Element
}

// New returns an empty table.
func New(opts Options) *Table {
	switch {
	case opts.Max == 0:
		opts.Max = 4096
	case opts.Max < 0:
		opts.Max = 0
	}
	switch {
	case opts.Idle == 0:
		opts.Idle = 30 * time.Minute
	case opts.Idle < 0:
		opts.Idle = 0
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	switch {
	case opts.MaxPerClient == 0:
		opts.MaxPerClient = max(opts.Max/4, 0)
	case opts.MaxPerClient < 0:
		opts.MaxPerClient = 0
	}
	return &Table{opts: opts, m: map[string]*entry{}, lru: list.New(), gone: NewRecent(rememberEvicted(opts.Max)), perClient: map[string]int{},
		evictions:       NewEvictions(EvictionOptions{Kind: "task", Max: opts.Max, Logger: opts.Logger, OnEvict: opts.OnEvict, Now: opts.Now, AfterFunc: opts.AfterFunc}),
		clientEvictions: NewEvictions(EvictionOptions{Kind: "task", Flag: "--max-sessions-per-client", Max: opts.MaxPerClient, Logger: opts.Logger, OnEvict: opts.OnEvict, Now: opts.Now, AfterFunc: opts.AfterFunc})}
}

// rememberEvicted is how many evicted sessions a table of max sessions
// remembers: four times the cap, at least 1,024 and at most 65,536
// (about 100 bytes each).
func rememberEvicted(cap int) int {
	return min(max(4*cap, 1024), 1<<16)
}

// Idle returns the idle timeout (0: none).
func (t *Table) Idle() time.Duration { return t.opts.Idle }

// Max returns the cap on live sessions (0: none).
func (t *Table) Max() int { return t.opts.Max }

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewID returns a fresh unguessable id: Prefix and 128 random bits.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return Prefix + strings.ToLower(b32.EncodeToString(b[:]))
}

// Issue makes a session for principal and returns its id. The session
// is held (never evicted) until release is called: the caller's first
// call, or nothing.
func (t *Table) Issue(ctx context.Context, principal string) (id string, release func(), err error) {
	id = NewID()
	e, ended, err := t.add(clientOf(ctx), id, id, principal, 1)
	t.end(ended)
	if err != nil {
		return "", nil, err
	}
	return id, t.releaser(e), nil
}

// add registers a session under key, making room at the cap, with inUse
// holds.
func (t *Table) add(client, key, id, principal string, inUse int) (*entry, []string, error) {
	t.mu.Lock()
	evicted, evictedOwn := false, false
	defer func() {
		t.mu.Unlock()
		if evicted {
			t.evictions.Evicted(1)
		}
		if evictedOwn {
			t.clientEvictions.Evicted(1)
		}
	}()
	now := t.opts.Now()
	ended := t.expireLocked(now)
	if client != "" && t.opts.MaxPerClient > 0 && t.perClient[client] >= t.opts.MaxPerClient {
		victim := t.idlestOfLocked(client)
		if victim == nil {
			return nil, ended, fmt.Errorf("%w: all %d sessions of this client are in use (retry later, end sessions you no longer need, or raise --max-sessions-per-client)", ErrClientFull, t.perClient[client])
		}
		t.removeLocked(victim)
		t.evicted++
		t.gone.Add(victim.key, victim.principal+"\x00--max-sessions-per-client")
		evictedOwn = true
		ended = append(ended, victim.id)
	}
	if t.opts.Max > 0 && len(t.m) >= t.opts.Max {
		victim := t.idlestLocked()
		if victim == nil {
			return nil, ended, fmt.Errorf("%w: all %d sessions are in use (retry later, end sessions you no longer need, or raise --max-sessions)", ErrFull, t.opts.Max)
		}
		t.removeLocked(victim)
		t.evicted++
		t.gone.Add(victim.key, victim.principal+"\x00--max-sessions")
		evicted = true
		ended = append(ended, victim.id)
	}
	e := &entry{key: key, id: id, principal: principal, client: client, lastUsed: now, inUse: inUse}
	e.elem = t.lru.PushFront(e)
	t.m[key] = e
	if client != "" {
		t.perClient[client]++
	}
	return e, ended, nil
}

// releaser returns the idempotent release of one hold on e.
func (t *Table) releaser(e *entry) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			e.inUse--
			e.lastUsed = t.opts.Now()
			t.lru.MoveToFront(e.elem) // a no-op once e is removed
			t.mu.Unlock()
		})
	}
}

// idlestOfLocked returns the least recently used session of client no
// call is using.
func (t *Table) idlestOfLocked(client string) *entry {
	for el := t.lru.Back(); el != nil; el = el.Prev() {
		if e := el.Value.(*entry); e.inUse == 0 && e.client == client {
			return e
		}
	}
	return nil
}

// idlestLocked returns the least recently used session no call is using.
func (t *Table) idlestLocked() *entry {
	for el := t.lru.Back(); el != nil; el = el.Prev() {
		if e := el.Value.(*entry); e.inUse == 0 {
			return e
		}
	}
	return nil
}

func (t *Table) expireLocked(now time.Time) []string {
	if t.opts.Idle <= 0 {
		return nil
	}
	var ended []string
	for el := t.lru.Back(); el != nil; {
		e := el.Value.(*entry)
		if now.Sub(e.lastUsed) <= t.opts.Idle {
			break
		}
		prev := el.Prev()
		if e.inUse == 0 {
			t.removeLocked(e)
			t.expired++
			ended = append(ended, e.id)
		}
		el = prev
	}
	return ended
}

func (t *Table) removeLocked(e *entry) {
	t.lru.Remove(e.elem)
	delete(t.m, e.key)
	if e.client != "" {
		if t.perClient[e.client]--; t.perClient[e.client] <= 0 {
			delete(t.perClient, e.client)
		}
	}
}

func (t *Table) end(ids []string) {
	if t.opts.OnEnd == nil {
		return
	}
	for _, id := range ids {
		t.opts.OnEnd(id)
	}
}

// clientKey is the table key of a client-named id.
func clientKey(principal, name string) string { return principal + "\x00" + name }

// backendID is the session id backends see for a client-named id: the
// name itself without tokens (as before server-issued ids), else scoped
// to the principal so that two tokens never share a session.
func backendID(principal, name string) string {
	if principal == "" {
		return name
	}
	return principal + "/" + name
}

// Acquire checks that id belongs to principal and marks it in use (not
// evictable) until release is called. It returns the id backends know
// the session by (the id itself, or for a client-named id, its scoped
// form).
func (t *Table) Acquire(ctx context.Context, id, principal string) (backend string, release func(), err error) {
	t.mu.Lock()
	now := t.opts.Now()
	ended := t.expireLocked(now)
	e := t.m[id]
	if e != nil && e.principal != principal {
		e = nil
	}
	if e == nil && !strings.HasPrefix(id, Prefix) && t.opts.ClientNamed {
		e = t.m[clientKey(principal, id)]
		if flag := t.evictedBy(clientKey(principal, id), principal); e == nil && flag != "" {
			t.mu.Unlock()
			t.end(ended)
			return "", nil, t.evictedErr(id, flag)
		}
		if e == nil {
			t.mu.Unlock()
			t.end(ended)
			e, more, err := t.add(clientOf(ctx), clientKey(principal, id), backendID(principal, id), principal, 1)
			t.end(more)
			if err != nil {
				return "", nil, err
			}
			return e.id, t.releaser(e), nil
		}
	}
	if e == nil {
		flag := t.evictedBy(id, principal)
		t.mu.Unlock()
		t.end(ended)
		if flag != "" {
			return "", nil, t.evictedErr(id, flag)
		}
		return "", nil, fmt.Errorf("%w %q", ErrUnknown, clip(id))
	}
	e.inUse++
	e.lastUsed = now
	t.lru.MoveToFront(e.elem)
	t.mu.Unlock()
	t.end(ended)
	return e.id, t.releaser(e), nil
}

// End ends session id of principal.
func (t *Table) End(ctx context.Context, id, principal string) error {
	t.mu.Lock()
	e := t.m[id]
	if e == nil && t.opts.ClientNamed {
		e = t.m[clientKey(principal, id)]
	}
	if e == nil || e.principal != principal {
		flag := t.evictedBy(id, principal)
		if flag == "" && t.opts.ClientNamed {
			flag = t.evictedBy(clientKey(principal, id), principal)
		}
		t.mu.Unlock()
		if flag != "" {
			return t.evictedErr(id, flag)
		}
		return fmt.Errorf("%w %q", ErrUnknown, clip(id))
	}
	t.removeLocked(e)
	t.mu.Unlock()
	t.end([]string{e.id})
	return nil
}

// evictedBy returns the flag of the cap that evicted the session under
// key while it belonged to principal, or "" (for another principal it is
// as unknown as any id).
func (t *Table) evictedBy(key, principal string) string {
	v, ok := t.gone.Get(key)
	p, flag, _ := strings.Cut(v, "\x00")
	if !ok || p != principal {
		return ""
	}
	return flag
}

// evictedErr is the error of a call on session id that the cap of flag
// evicted.
func (t *Table) evictedErr(id, flag string) error {
	if flag == "--max-sessions-per-client" {
		return evictedAt(id, flag, t.opts.MaxPerClient)
	}
	return evictedAt(id, flag, t.opts.Max)
}

// Stats are a table's counts.
type Stats struct {
	Live, Evicted, Expired int
}

// Stats returns the table's counts.
func (t *Table) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Stats{Live: len(t.m), Evicted: t.evicted, Expired: t.expired}
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
