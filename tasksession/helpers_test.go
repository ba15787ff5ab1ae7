package tasksession_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/internal/pgtest"
	"github.com/toolenv/toolenv/nl2api"
	"github.com/toolenv/toolenv/nl2api/nl2apitest"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/tasksession"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// kinds are the stores every test runs on: a fresh SQLite file or a fresh
// PostgreSQL database.
var kinds = []struct {
	name  string
	fresh func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "store.db") }},
	{"postgres", func(t *testing.T) string { return pgtest.DB(t) }},
}

func eachStore(t *testing.T, fn func(t *testing.T, dsn string)) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) { fn(t, k.fresh(t)) })
	}
}

// openStore opens dsn with the sessions' tables: one replica's own
// connection to the shared database.
func openStore(t testing.TB, dsn string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dsn, store.Options{Migrations: tasksession.Migrations, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func openSessions(t testing.TB, dsn string, opts tasksession.Options) *tasksession.Sessions {
	t.Helper()
	s, err := tasksession.New(context.Background(), openStore(t, dsn), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// built is a generated NL2SQL corpus built into SLOT and SEL collections
// (nl2apitest's adversarial databases: keyword and protocol-field names,
// Unicode, NULLs, …), shared by the tests of the package.
type built struct {
	colls []*toolenv.Collection
	tasks map[string][]*toolenv.Task
}

// buildCorpus generates and builds the corpus under dir.
func buildCorpus(t testing.TB, dir string) *built {
	t.Helper()
	data, out := filepath.Join(dir, "data"), filepath.Join(dir, "out")
	if _, err := nl2apitest.Generate(data, nl2apitest.Options{Seed: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := nl2api.Build(context.Background(), nl2api.Options{Data: data, Out: out, Flavors: []string{"slot", "sel"}, Obfuscate: true, Seed: 5, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	b := &built{tasks: map[string][]*toolenv.Task{}}
	for _, f := range []string{"slot", "sel", "slot-obfuscated", "sel-obfuscated"} {
		c, err := toolenv.ReadCollection(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		tasks, _, err := toolenv.ReadTasks(filepath.Join(out, f, toolenv.TasksFile))
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) == 0 {
			t.Fatalf("%s: no tasks were built", f)
		}
		b.colls = append(b.colls, c)
		b.tasks[c.Name] = tasks
	}
	return b
}

// backend opens c's backend with log (nil: memory only).
func backend(t testing.TB, c *toolenv.Collection, log sqltools.SessionLog) *sqltools.Backend {
	t.Helper()
	b, err := sqltools.Open(context.Background(), c, sqltools.Options{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// roundRobin sends call i to replica i mod n: a load balancer without
// sticky sessions.
type roundRobin struct {
	mu       sync.Mutex
	replicas []toolenv.Handler
	next     int
}

func (r *roundRobin) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	r.mu.Lock()
	h := r.replicas[r.next%len(r.replicas)]
	r.next++
	r.mu.Unlock()
	return h.Invoke(ctx, call)
}
