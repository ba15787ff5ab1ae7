package tasksession_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/internal/pgtest"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/tasksession"
)

// TestPostgresLostMidSession: while PostgreSQL is down, session calls
// fail at once with unavailable and a message saying why, and issuing
// fails likewise; when it returns, the session goes on where it was:
// every acknowledged call is there, no refused one is.
func TestPostgresLostMidSession(t *testing.T) {
	ctx := context.Background()
	b := buildCorpus(t, t.TempDir())
	srv := pgtest.Start(t)
	dsn := srv.NewDatabase(t)
	sessions := openSessions(t, dsn, tasksession.Options{Timeout: time.Second})
	c := b.colls[0]
	task := b.tasks[c.Name][0]
	be := backend(t, c, sessions)
	if _, err := sqltools.Replay(ctx, be, c, &toolenv.Task{ID: task.ID, Meta: task.Meta}, "outage"); err != nil {
		t.Fatal(err)
	}
	agg := c.Tool("aggregate_data")
	count := func(label string) *toolenv.Result {
		return be.Invoke(ctx, &toolenv.Call{Tool: agg, Collection: c, Session: "outage", Args: map[string]any{
			"data_source": "$" + sqltools.DefaultStartLabel + "$", "aggregation_type": "count", sqltools.LabelArg: label}})
	}
	before := count("before")
	if !before.OK() {
		t.Fatal(before.Error)
	}

	srv.Stop()
	r := count("during")
	if r.Status != toolenv.StatusUnavailable || !strings.Contains(r.Error, "cannot be reached") || r.Hint == "" {
		t.Fatalf("a call while PostgreSQL is down: %s %q hint %q", r.Status, r.Error, r.Hint)
	}
	if _, _, err := sessions.Issue(ctx, "p"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("issuing while PostgreSQL is down: %v", err)
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	var after *toolenv.Result
	// The pool reconnects on its next use; a minute is a hang guard, not
	// a pace (a busy machine may take a while to accept connections).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if after = count("after"); after.OK() || time.Now().After(deadline) {
			break
		}
	}
	if !after.OK() {
		t.Fatalf("after PostgreSQL returned: %s %s", after.Status, after.Error)
	}
	// On a replica that rebuilds the session from the log: "before" and
	// "after" were acknowledged and are there, "during" was not.
	cold := backend(t, c, openSessions(t, dsn, tasksession.Options{}))
	r = cold.Invoke(ctx, &toolenv.Call{Tool: agg, Collection: c, Session: "outage", Args: map[string]any{
		"data_source": "$" + sqltools.DefaultStartLabel + "$", "aggregation_type": "count", sqltools.LabelArg: "before"}})
	if !r.OK() || !bytes.Equal(r.Body, before.Body) {
		t.Fatalf("rebuilt after the outage: %s %s", r.Status, r.Error)
	}
	inits, _ := sqltools.InitCalls(task)
	if st := cold.Stats(); st.Replayed != len(inits)+2 {
		t.Fatalf("the log holds %d calls, want %d init + before + after", st.Replayed, len(inits))
	}
}
