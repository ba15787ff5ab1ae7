package tasksession_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/server/session"
	"github.com/toolenv/toolenv/tasksession"
)

// TestIssuedOnOneHonouredByAnother: an id one replica issued is accepted
// by every replica for the principal it was issued to, and by none for
// another; ending it on one ends it everywhere, with a message saying so.
func TestIssuedOnOneHonouredByAnother(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		a := openSessions(t, dsn, tasksession.Options{})
		b := openSessions(t, dsn, tasksession.Options{})
		id, release, err := a.Issue(ctx, "token-alice")
		if err != nil {
			t.Fatal(err)
		}
		release()
		if !strings.HasPrefix(id, tasksession.Prefix) || len(id) < len(tasksession.Prefix)+26 {
			t.Fatalf("issued id %q: want %s and 128 random bits", id, tasksession.Prefix)
		}
		got, release, err := b.Acquire(ctx, id, "token-alice")
		if err != nil || got != id {
			t.Fatalf("another replica: Acquire = %q, %v", got, err)
		}
		release()
		for _, p := range []string{"token-bob", ""} {
			if _, _, err := b.Acquire(ctx, id, p); !errors.Is(err, tasksession.ErrUnknown) || strings.Contains(err.Error(), "ended") {
				t.Fatalf("principal %q: err = %v, want unknown without saying more", p, err)
			}
		}
		if _, _, err := b.Acquire(ctx, tasksession.NewID(), "token-alice"); !errors.Is(err, tasksession.ErrUnknown) {
			t.Fatalf("an id never issued: %v", err)
		}
		if err := b.End(ctx, id, "token-bob"); !errors.Is(err, tasksession.ErrUnknown) {
			t.Fatalf("another principal ended it: %v", err)
		}
		if err := b.End(ctx, id, "token-alice"); err != nil {
			t.Fatal(err)
		}
		_, _, err = a.Acquire(ctx, id, "token-alice")
		if !errors.Is(err, tasksession.ErrUnknown) || !strings.Contains(err.Error(), "client ended it") {
			t.Fatalf("ended on another replica: %v", err)
		}
	})
}

// TestCapEvictsIdlestAndSaysSo: at the fleet's cap a new session evicts
// the idlest one not used recently; its late calls, on any replica, get
// an error that says it was evicted and how to go on; when every session
// is in use, a new one is refused.
func TestCapEvictsIdlestAndSaysSo(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		clk := newClock()
		var endedHere []string
		var evictedA, evictedB atomic.Int64
		var logA bytes.Buffer
		opts := tasksession.Options{Max: 2, Active: time.Minute, Now: clk.Now, OnEnd: func(id string) { endedHere = append(endedHere, id) },
			OnEvict: func(n int) { evictedA.Add(int64(n)) }, Logger: slog.New(slog.NewTextHandler(&logA, nil))}
		a := openSessions(t, dsn, opts)
		opts.OnEnd, opts.OnEvict, opts.Logger = nil, func(n int) { evictedB.Add(int64(n)) }, nil
		b := openSessions(t, dsn, opts)
		first, _, err := a.Issue(ctx, "p")
		if err != nil {
			t.Fatal(err)
		}
		clk.advance(2 * time.Minute)
		second, _, err := b.Issue(ctx, "p")
		if err != nil {
			t.Fatal(err)
		}
		clk.advance(2 * time.Minute)
		if _, _, err := a.Acquire(ctx, first, "p"); err != nil { // first is now the most recently used
			t.Fatal(err)
		}
		clk.advance(2 * time.Minute)
		if err := b.Start(ctx, second); err != nil { // finds the issued session
			t.Fatal(err)
		}
		third, _, err := a.Issue(ctx, "p")
		if err != nil {
			t.Fatal(err)
		}
		if len(endedHere) != 1 || endedHere[0] != second {
			t.Fatalf("ended here: %v, want the idlest (%s)", endedHere, second)
		}
		_, _, err = b.Acquire(ctx, second, "p")
		if !errors.Is(err, tasksession.ErrUnknown) || !errors.Is(err, session.ErrEvicted) || !strings.Contains(err.Error(), "evicted: --max-sessions 2 was reached") {
			t.Fatalf("evicted session: %v", err)
		}
		// Only its principal learns that it was evicted.
		if _, _, err := b.Acquire(ctx, second, "q"); !errors.Is(err, tasksession.ErrUnknown) || errors.Is(err, session.ErrEvicted) {
			t.Fatalf("another principal: %v", err)
		}
		// The backend side says the same, with a hint.
		_, err = b.Read(ctx, second, 0)
		var te *toolenv.Error
		if !errors.As(err, &te) || te.Status != toolenv.StatusGone || !strings.Contains(te.Message, "evicted") || te.Hint == "" {
			t.Fatalf("reading an evicted session: %v", err)
		}
		// The replica that evicted counts it and says so in its log.
		if a, b := evictedA.Load(), evictedB.Load(); a != 1 || b != 0 {
			t.Fatalf("evictions counted: %d here, %d on the other replica; want 1 and 0", a, b)
		}
		if !strings.Contains(logA.String(), "task sessions evicted: --max-sessions 2 was reached") {
			t.Fatalf("no log line for the eviction: %q", logA.String())
		}
		// first and third were used within a minute: nothing to evict.
		clk.advance(30 * time.Second)
		if _, _, err := a.Acquire(ctx, first, "p"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := b.Issue(ctx, "p"); !errors.Is(err, tasksession.ErrFull) || !strings.Contains(err.Error(), "--max-sessions") {
			t.Fatalf("every session in use: %v, want ErrFull with a hint", err)
		}
		for _, id := range []string{first, third} {
			if _, _, err := b.Acquire(ctx, id, "p"); err != nil {
				t.Fatalf("live session %s refused: %v", id, err)
			}
		}
	})
}

// TestIdleSessionsExpire: a session unused for the idle timeout is gone
// on every replica with a message saying it expired; the sweep deletes
// its calls and, after the retention, its row.
func TestIdleSessionsExpire(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		clk := newClock()
		opts := tasksession.Options{Idle: 10 * time.Minute, Retain: time.Hour, Now: clk.Now}
		a := openSessions(t, dsn, opts)
		b := openSessions(t, dsn, opts)
		if err := a.Start(ctx, "mcp-1"); err != nil {
			t.Fatal(err)
		}
		for seq := int64(1); seq <= 3; seq++ {
			if err := a.Append(ctx, "mcp-1", sqltools.LogEntry{Seq: seq, Data: []byte(`{}`)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Append(ctx, "mcp-1", sqltools.LogEntry{Seq: 3, Data: []byte(`{}`)}); !errors.Is(err, sqltools.ErrLogConflict) {
			t.Fatalf("appending a taken entry: %v, want a conflict", err)
		}
		if es, err := b.Read(ctx, "mcp-1", 1); err != nil || len(es) != 2 || es[0].Seq != 2 || es[1].Seq != 3 {
			t.Fatalf("Read after 1 = %+v, %v", es, err)
		}
		id, _, err := a.Issue(ctx, "p")
		if err != nil {
			t.Fatal(err)
		}
		for seq := int64(1); seq <= 2; seq++ {
			if err := b.Append(ctx, id, sqltools.LogEntry{Seq: seq, Data: []byte(`{}`)}); err != nil {
				t.Fatal(err)
			}
		}
		clk.advance(9 * time.Minute)
		if _, _, err := b.Acquire(ctx, id, "p"); err != nil { // keeps id alive
			t.Fatal(err)
		}
		clk.advance(2 * time.Minute) // mcp-1 idle 11 min, id 2 min
		if _, err := b.Read(ctx, "mcp-1", 0); err == nil || !strings.Contains(err.Error(), "expired") {
			t.Fatalf("idle session read: %v, want expired", err)
		}
		if err := a.Append(ctx, "mcp-1", sqltools.LogEntry{Seq: 4, Data: []byte(`{}`)}); err == nil || !strings.Contains(err.Error(), "expired") {
			t.Fatalf("idle session append: %v, want expired", err)
		}
		if err := a.Start(ctx, "mcp-1"); err == nil || !strings.Contains(err.Error(), "expired") {
			t.Fatalf("restarting an expired session: %v, want expired (a name is not reused)", err)
		}
		if st, err := a.Stats(ctx); err != nil || st.Live != 1 || st.Ended != 1 || st.Calls != 2 {
			t.Fatalf("stats %+v, %v: want id live with 2 calls, mcp-1 ended without its calls", st, err)
		}
		res, err := a.Sweep(ctx)
		if err != nil || res != (tasksession.SweepResult{}) {
			t.Fatalf("sweep = %+v, %v; want nothing to do", res, err)
		}
		clk.advance(2 * time.Hour)
		res, err = a.Sweep(ctx)
		if err != nil || res != (tasksession.SweepResult{Expired: 1, Calls: 2, Forgotten: 1}) {
			t.Fatalf("sweep after the retention = %+v, %v; want id expired with its 2 calls and mcp-1 forgotten", res, err)
		}
		if _, err := b.Read(ctx, "mcp-1", 0); !errors.Is(err, sqltools.ErrNoSession) {
			t.Fatalf("a forgotten session: %v", err)
		}
	})
}

// TestClientNamedSessions: with ClientNamed, a name is a session of its
// principal only, on every replica.
func TestClientNamedSessions(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		a := openSessions(t, dsn, tasksession.Options{ClientNamed: true})
		b := openSessions(t, dsn, tasksession.Options{ClientNamed: true})
		ka, _, err := a.Acquire(ctx, "my-task", "alice")
		if err != nil {
			t.Fatal(err)
		}
		kb, _, err := b.Acquire(ctx, "my-task", "bob")
		if err != nil {
			t.Fatal(err)
		}
		if ka == kb || strings.Contains(ka, "alice") {
			t.Fatalf("backend ids %q and %q: want distinct, without the token", ka, kb)
		}
		again, _, err := b.Acquire(ctx, "my-task", "alice")
		if err != nil || again != ka {
			t.Fatalf("alice's name on another replica: %q, %v (want %q)", again, err, ka)
		}
		// Server-issued ids are not client names.
		if _, _, err := b.Acquire(ctx, tasksession.NewID(), "alice"); !errors.Is(err, tasksession.ErrUnknown) {
			t.Fatalf("an unissued ts- id: %v", err)
		}
	})
}
