package store_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolenv/toolenv/internal/pgtest"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/store/storetest"
)

func open(t *testing.T, path string) store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSQLiteConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) string { return filepath.Join(t.TempDir(), "store.db") })
}

func TestSQLiteConformanceWithoutMemoryCache(t *testing.T) {
	// The suite opens stores with default options (the LRU on); the
	// storetest helpers cannot switch it off, so run the key cases
	// directly with it off.
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "s.db"), store.Options{MemoryBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.Put(ctx, &store.Entry{Tool: "c/t", Args: `{}`, Exact: "{}", Body: json.RawMessage(`1`)})
	st.Put(ctx, &store.Entry{Tool: "c/t", Args: `{}`, Exact: "{ }", Body: json.RawMessage(`2`)})
	for exact, want := range map[string]string{"{}": "1", "{ }": "2", "": "1", "{  }": "1"} {
		if e, ok, err := st.GetExact(ctx, "c/t", exact, `{}`); !ok || err != nil || string(e.Body) != want {
			t.Fatalf("exact %q: %+v %v %v, want %s", exact, e, ok, err, want)
		}
	}
}

func TestPostgresConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) string { return pgtest.DB(t) })
}

func TestMemoryStore(t *testing.T) {
	ctx := context.Background()
	a, b := open(t, ":memory:"), open(t, ":memory:")
	if ok, err := a.Put(ctx, &store.Entry{Tool: "c/t", Args: `{}`, Body: json.RawMessage(`1`)}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, ok, _ := a.Get(ctx, "c/t", `{}`); !ok {
		t.Fatal("memory store lost its entry")
	}
	if _, ok, _ := b.Get(ctx, "c/t", `{}`); ok {
		t.Fatal("two :memory: stores share entries")
	}
}

// TestLegacyStoreMigrates opens a store written by toolenv before schema
// versions existed (cache without exact keys, a meta table): its entries
// are kept and it gains exact keys.
func TestLegacyStoreMigrates(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE cache (tool TEXT NOT NULL, args TEXT NOT NULL, status TEXT NOT NULL, body BLOB, error TEXT NOT NULL DEFAULT '', origin TEXT NOT NULL DEFAULT '', created INTEGER NOT NULL, PRIMARY KEY (tool, args)) WITHOUT ROWID`,
		`CREATE TABLE records (key TEXT PRIMARY KEY, request BLOB NOT NULL, response BLOB NOT NULL, created INTEGER NOT NULL) WITHOUT ROWID`,
		`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`,
		`INSERT INTO meta VALUES ('schema_version', '1')`,
		`INSERT INTO cache VALUES ('c/t', '{"a":1}', 'ok', '"old"', '', 'upstream', 1700000000000)`,
		`INSERT INTO records VALUES ('k', 'q', 'a', 1700000000000)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	st := open(t, path)
	e, ok, err := st.GetExact(ctx, "c/t", "{'a': 1}", `{"a":1}`)
	if !ok || err != nil || string(e.Body) != `"old"` || e.Origin != "upstream" || e.Created.UnixMilli() != 1700000000000 {
		t.Fatalf("old entry after migration: %+v %v %v", e, ok, err)
	}
	if _, ok, _ := st.Lookup(ctx, "k"); !ok {
		t.Fatal("old record lost")
	}
	if ok, err := st.Put(ctx, &store.Entry{Tool: "c/t", Args: `{"a":1}`, Exact: "{'a': '1'}", Body: json.RawMessage(`"new"`)}); !ok || err != nil {
		t.Fatalf("exact entry beside a legacy one: %v %v", ok, err)
	}
	vs, err := st.Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Version != v.Known {
			t.Fatalf("schema after migration: %+v", vs)
		}
	}
	if err := st.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentWritersAcrossStores(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	a, b := open(t, path), open(t, path) // two handles behave like two processes
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s := a
			if w%2 == 1 {
				s = b
			}
			for i := 0; i < 50; i++ {
				if _, err := s.Put(ctx, &store.Entry{Tool: "c/t", Args: fmt.Sprintf(`{"w":%d,"i":%d}`, w, i), Body: json.RawMessage(`"x"`)}); err != nil {
					errs <- err
					return
				}
				if _, _, err := s.Get(ctx, "c/t", fmt.Sprintf(`{"w":%d,"i":%d}`, (w+1)%16, i)); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st, err := a.Stats(ctx)
	if err != nil || st.Entries != 800 {
		t.Fatalf("entries = %d, %v", st.Entries, err)
	}
	if err := b.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRejectsNonStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.db")
	os.WriteFile(path, []byte(strings.Repeat("not a database ", 100)), 0o644)
	if _, err := store.Open(context.Background(), path, store.Options{}); err == nil || !strings.Contains(err.Error(), "--store") {
		t.Fatalf("err = %v", err)
	}
}

// TestSurvivesKill9 writes from a child process, kills it with SIGKILL in
// the middle of writing, and checks that the database is intact and holds
// every entry the child reported as committed: one Put at a time, and in
// bulk mode (BeginBulk, as cache import runs; batches of PutMany while
// the checkpointer copies the log, bounded to a few batches so that it
// starts over many times before the kill).
func TestSurvivesKill9(t *testing.T) {
	for _, tc := range []struct {
		name string
		bulk string
		acks int
	}{{"put", "", 300}, {"bulk", "1", 3000}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), "TOOLENV_STORE_CHILD="+path, "TOOLENV_STORE_CHILD_BULK="+tc.bulk)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(out)
			var acked []string
			for sc.Scan() {
				if line, ok := strings.CutPrefix(sc.Text(), "ACK "); ok {
					acked = append(acked, line)
					if len(acked) == tc.acks {
						break
					}
				}
			}
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			if len(acked) < tc.acks {
				t.Fatalf("child acknowledged only %d writes", len(acked))
			}
			s := open(t, path)
			if err := s.Check(context.Background()); err != nil {
				t.Fatal(err)
			}
			for _, args := range acked {
				if _, ok, err := s.Get(context.Background(), "c/t", args); !ok || err != nil {
					t.Fatalf("acknowledged entry %s lost after kill -9 (err %v)", args, err)
				}
			}
		})
	}
}

// childBulkWriter writes batches of 50 entries in bulk mode until
// killed, printing each committed key; the log is bounded to about two
// batches.
func childBulkWriter(s *store.SQLite) {
	store.SetBulkWALFrames(s, 64)
	if _, err := s.BeginBulk(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	body := json.RawMessage(fmt.Sprintf(`"%s"`, strings.Repeat("x", 2000)))
	for i := 0; ; i += 50 {
		var batch []*store.Entry
		for j := i; j < i+50; j++ {
			batch = append(batch, &store.Entry{Tool: "c/t", Args: fmt.Sprintf(`{"i":%d}`, j), Exact: fmt.Sprintf(`{'i': %d}`, j), Body: body})
		}
		if _, err := s.PutMany(context.Background(), batch, false); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, e := range batch {
			fmt.Printf("ACK %s\n", e.Args)
		}
		if i > 100000 {
			time.Sleep(time.Second)
		}
	}
}

// TestMain runs the child writer of TestSurvivesKill9 when asked to, and
// otherwise the tests, stopping the shared PostgreSQL server at the end.
func TestMain(m *testing.M) {
	if path := os.Getenv("TOOLENV_STORE_CHILD"); path != "" {
		childWriter(path)
		return
	}
	pgtest.Main(m)
}

// childWriter writes until killed, printing each committed key.
func childWriter(path string) {
	s, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if os.Getenv("TOOLENV_STORE_CHILD_BULK") != "" {
		childBulkWriter(s.(*store.SQLite))
		return
	}
	for i := 0; ; i++ {
		args := fmt.Sprintf(`{"i":%d}`, i)
		body := json.RawMessage(fmt.Sprintf(`"%s"`, strings.Repeat("x", 2000)))
		if _, err := s.Put(context.Background(), &store.Entry{Tool: "c/t", Args: args, Body: body}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("ACK %s\n", args)
		if i > 100000 {
			time.Sleep(time.Second)
		}
	}
}

// TestBulkModeBoundsTheLog: in bulk mode the checkpointer copies the log
// into the database while the writer goes on, and a log past its bound
// starts over: after 40 batches (some 20 MB of log without the bound) the
// log file stays within the bound and a batch; every entry is stored,
// readable during and after bulk mode, and the database is intact. Ending
// bulk mode twice, or closing the store in it, is harmless.
func TestBulkModeBoundsTheLog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := store.OpenSQLite(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	store.SetBulkWALFrames(st, 256) // 1 MiB of 4 KiB pages
	end, err := st.BeginBulk(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.BeginBulk(ctx); err == nil {
		t.Fatal("bulk mode began twice")
	}
	body := json.RawMessage(fmt.Sprintf(`"%s"`, strings.Repeat("y", 2000)))
	const batches, per = 40, 200
	for b := range batches {
		var batch []*store.Entry
		for i := range per {
			n := b*per + i
			batch = append(batch, &store.Entry{Tool: "c/t", Args: fmt.Sprintf(`{"n":%d}`, n), Exact: fmt.Sprintf(`{'n': %d}`, n), Body: body})
		}
		if k, err := st.PutMany(ctx, batch, false); err != nil || k != per {
			t.Fatalf("batch %d: stored %d of %d: %v", b, k, per, err)
		}
		if e, ok, err := st.Get(ctx, "c/t", fmt.Sprintf(`{"n":%d}`, b*per)); err != nil || !ok || string(e.Body) != string(body) {
			t.Fatalf("batch %d not readable in bulk mode: %v %v", b, ok, err)
		}
	}
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	// The bound (1 MiB) and a batch (about 0.5 MiB), with room to spare;
	// without the bound the log would hold all 40 batches.
	if fi.Size() > 4<<20 {
		t.Errorf("log grew to %d bytes in bulk mode, want it bounded near 1 MiB", fi.Size())
	}
	if err := end(); err != nil {
		t.Fatal(err)
	}
	if err := end(); err != nil {
		t.Fatalf("ending bulk mode again: %v", err)
	}
	if err := st.Check(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := st.Stats(ctx)
	if err != nil || s.Entries != batches*per {
		t.Fatalf("stats %+v %v, want %d entries", s, err, batches*per)
	}
	if _, err := st.BeginBulk(ctx); err != nil {
		t.Fatalf("bulk mode again: %v", err)
	}
	// Closed while in bulk mode (st.Close, deferred).
}

// TestConcurrentOpensOfANewStore: stores opened at once on a database
// file that does not exist yet all open (SQLite answers some of them
// SQLITE_BUSY while the new file becomes WAL, without waiting for the
// busy timeout; the open tries again), and share one schema.
func TestConcurrentOpensOfANewStore(t *testing.T) {
	ctx := context.Background()
	for round := range 40 {
		path := filepath.Join(t.TempDir(), fmt.Sprint("s", round, ".db"))
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := store.Open(ctx, path, store.Options{})
				if err == nil {
					_, err = st.Put(ctx, &store.Entry{Tool: "t/x", Args: fmt.Sprint(`{"i":`, i, `}`), Body: json.RawMessage(`1`)})
					st.Close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, store %d: %v", round, i, err)
			}
		}
		st, err := store.Open(ctx, path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := st.Stats(ctx)
		st.Close()
		if err != nil || s.Entries != int64(len(errs)) {
			t.Fatalf("round %d: %+v, %v; want every store's entry", round, s, err)
		}
	}
}
