package session

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestIssuedIDsAreBoundToTheirPrincipal(t *testing.T) {
	ctx := context.Background()
	tb := New(Options{})
	id, rel, err := tb.Issue(ctx, "token-a")
	if err != nil {
		t.Fatal(err)
	}
	rel()
	if !strings.HasPrefix(id, Prefix) || len(id) < len(Prefix)+26 {
		t.Fatalf("id %q is not 128 random bits", id)
	}
	got, release, err := tb.Acquire(ctx, id, "token-a")
	if err != nil || got != id {
		t.Fatalf("owner: %q %v", got, err)
	}
	release()
	release() // idempotent
	for _, c := range []struct{ id, principal string }{
		{id, "token-b"}, // another token
		{id, ""},        // no token
		{"ts-aaaaaaaaaaaaaaaaaaaaaaaaaa", "token-a"}, // never issued
		{"my-own-name", "token-a"},                   // client-named, not accepted
	} {
		if _, _, err := tb.Acquire(ctx, c.id, c.principal); !errors.Is(err, ErrUnknown) {
			t.Errorf("Acquire(%q, %q) = %v, want ErrUnknown", c.id, c.principal, err)
		}
	}
	if err := tb.End(ctx, id, "token-b"); !errors.Is(err, ErrUnknown) {
		t.Fatalf("another principal ended the session: %v", err)
	}
	if err := tb.End(ctx, id, "token-a"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tb.Acquire(ctx, id, "token-a"); !errors.Is(err, ErrUnknown) {
		t.Fatalf("an ended session is still there: %v", err)
	}
	seen := map[string]bool{}
	for range 1000 {
		id := NewID()
		if seen[id] {
			t.Fatal("NewID repeated itself")
		}
		seen[id] = true
	}
}

func TestCapEvictsTheIdlestSessionNotInUse(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Unix(1e9, 0)}
	var ended []string
	tb := New(Options{Max: 3, Now: clk.now, OnEnd: func(id string) { ended = append(ended, id) }})
	var ids []string
	for range 3 {
		id, rel, err := tb.Issue(ctx, "p")
		if err != nil {
			t.Fatal(err)
		}
		rel()
		ids = append(ids, id)
		clk.add(time.Second)
	}
	// ids[0] is taken by a call, then ids[1] and ids[2] are used after
	// it: ids[0] is the idlest, but in use, so ids[1] goes.
	_, rel0, err := tb.Acquire(ctx, ids[0], "p")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[1:] {
		clk.add(time.Second)
		_, rel, err := tb.Acquire(ctx, id, "p")
		if err != nil {
			t.Fatal(err)
		}
		rel()
	}
	clk.add(time.Second)
	if _, rel, err := tb.Issue(ctx, "p"); err != nil {
		t.Fatal(err)
	} else {
		rel()
	}
	if len(ended) != 1 || ended[0] != ids[1] {
		t.Fatalf("evicted %v, want the idlest not in use (%s)", ended, ids[1])
	}
	if _, _, err := tb.Acquire(ctx, ids[1], "p"); !errors.Is(err, ErrUnknown) {
		t.Fatalf("the evicted session answers: %v", err)
	}
	rel0()
	if st := tb.Stats(); st.Live != 3 || st.Evicted != 1 {
		t.Fatalf("stats %+v", st)
	}
	// Every session in use: a new one is refused with a clear error.
	var rels []func()
	for _, id := range tb.ids() {
		_, r, err := tb.Acquire(ctx, id, "p")
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, r)
	}
	_, _, err = tb.Issue(ctx, "p")
	if !errors.Is(err, ErrFull) || !strings.Contains(err.Error(), "--max-sessions") {
		t.Fatalf("full table: %v", err)
	}
	for _, r := range rels {
		r()
	}
	if _, _, err := tb.Issue(ctx, "p"); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

func (t *Table) ids() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, e := range t.m {
		out = append(out, e.id)
	}
	return out
}

func TestIdleSessionsExpire(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Unix(1e9, 0)}
	var ended []string
	tb := New(Options{Idle: time.Minute, Now: clk.now, OnEnd: func(id string) { ended = append(ended, id) }})
	a, ra, _ := tb.Issue(ctx, "p")
	b, rb, _ := tb.Issue(ctx, "p")
	ra()
	rb()
	_, relB, _ := tb.Acquire(ctx, b, "p") // in use across the timeout
	clk.add(2 * time.Minute)
	if _, _, err := tb.Acquire(ctx, a, "p"); !errors.Is(err, ErrUnknown) {
		t.Fatalf("idle session answers: %v", err)
	}
	relB()
	if _, rel, err := tb.Acquire(ctx, b, "p"); err != nil {
		t.Fatalf("a session in use expired: %v", err)
	} else {
		rel()
	}
	if len(ended) != 1 || ended[0] != a {
		t.Fatalf("ended %v", ended)
	}
}

func TestClientNamedIDsAreScopedToTheirPrincipal(t *testing.T) {
	ctx := context.Background()
	tb := New(Options{ClientNamed: true, Max: 2})
	a, ra, err := tb.Acquire(ctx, "episode-1", "token-a")
	if err != nil {
		t.Fatal(err)
	}
	ra()
	b, rb, err := tb.Acquire(ctx, "episode-1", "token-b")
	if err != nil {
		t.Fatal(err)
	}
	rb()
	if a == b {
		t.Fatalf("two tokens share the client-named session %q", a)
	}
	none, rn, err := tb.Acquire(ctx, "episode-1", "")
	if err != nil || none != "episode-1" {
		t.Fatalf("without tokens the name is kept as is: %q %v", none, err)
	}
	rn()
	if st := tb.Stats(); st.Live != 2 || st.Evicted != 1 {
		t.Fatalf("client-named sessions are not capped: %+v", st)
	}
}

// TestManyIssuesStayUnderTheCap issues 20,000 sessions into a table of
// 100: it never holds more.
func TestManyIssuesStayUnderTheCap(t *testing.T) {
	ctx := context.Background()
	tb := New(Options{Max: 100})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2500 {
				_, rel, err := tb.Issue(ctx, "p"+string(rune('a'+w)))
				if err != nil {
					t.Error(err)
					return
				}
				rel()
			}
		}()
	}
	wg.Wait()
	if st := tb.Stats(); st.Live != 100 || st.Evicted != 19900 {
		t.Fatalf("%+v", st)
	}
}

// TestEvictedSessionsAreRemembered: a session the cap evicted answers
// ErrEvicted (which is also ErrUnknown) to its principal, issued or
// client-named, for both Acquire and End; to another principal it is
// unknown; memory of evictions is bounded.
func TestEvictedSessionsAreRemembered(t *testing.T) {
	ctx := context.Background()
	var counted int
	tb := New(Options{Max: 2, ClientNamed: true, OnEvict: func(n int) { counted += n }})
	a, rel, _ := tb.Issue(ctx, "p")
	rel()
	_, rel, _ = tb.Acquire(ctx, "named", "p") // client-named
	rel()
	for range 2 {
		_, rel, err := tb.Issue(ctx, "p")
		if err != nil {
			t.Fatal(err)
		}
		rel()
	}
	for _, id := range []string{a, "named"} {
		_, _, err := tb.Acquire(ctx, id, "p")
		if !errors.Is(err, ErrEvicted) || !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "evicted: --max-sessions 2 was reached") {
			t.Fatalf("Acquire(%s) after eviction: %v", id, err)
		}
		if err := tb.End(ctx, id, "p"); !errors.Is(err, ErrEvicted) {
			t.Fatalf("End(%s) after eviction: %v", id, err)
		}
	}
	if _, _, err := tb.Acquire(ctx, a, "q"); errors.Is(err, ErrEvicted) || !errors.Is(err, ErrUnknown) {
		t.Fatalf("another principal: %v", err)
	}
	if counted != 2 || tb.Stats().Evicted != 2 {
		t.Fatalf("counted %d evictions (stats %+v), want 2", counted, tb.Stats())
	}
	r := NewRecent(3)
	for i := range 10 {
		r.Add(NewID(), strings.Repeat("p", i))
	}
	if r.Len() != 3 {
		t.Fatalf("Recent(3) holds %d", r.Len())
	}
}

// TestPerClientCap: at its per-client cap a client's new session evicts
// that client's idlest, never another client's; when all of its
// sessions are in use it gets ErrClientFull while other clients still
// get sessions; the evicted session names the per-client flag.
func TestPerClientCap(t *testing.T) {
	ctx := context.Background()
	a, b := WithClient(ctx, "addr:127.0.0.2"), WithClient(ctx, "addr:127.0.0.1")
	tb := New(Options{Max: 100, MaxPerClient: 3})
	bID, rel, err := tb.Issue(b, "")
	if err != nil {
		t.Fatal(err)
	}
	rel()
	var aIDs []string
	for range 10 {
		id, rel, err := tb.Issue(a, "")
		if err != nil {
			t.Fatal(err)
		}
		rel()
		aIDs = append(aIDs, id)
	}
	if _, _, err := tb.Acquire(b, bID, ""); err != nil {
		t.Fatalf("B's session after A's 10: %v", err)
	}
	if _, _, err := tb.Acquire(a, aIDs[0], ""); !errors.Is(err, ErrEvicted) || !strings.Contains(err.Error(), "--max-sessions-per-client 3 was reached") {
		t.Fatalf("A's first session: %v", err)
	}
	var rels []func()
	for _, id := range aIDs[7:] {
		_, rel, err := tb.Acquire(a, id, "")
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, rel)
	}
	if _, _, err := tb.Issue(a, ""); !errors.Is(err, ErrClientFull) || !strings.Contains(err.Error(), "--max-sessions-per-client") {
		t.Fatalf("A with every session in use: %v", err)
	}
	if _, _, err := tb.Issue(b, ""); err != nil {
		t.Fatalf("B while A is full: %v", err)
	}
	for _, r := range rels {
		r()
	}
	if st := tb.Stats(); st.Live != 5 {
		t.Fatalf("live sessions %d, want 3 of A and 2 of B", st.Live)
	}
}
