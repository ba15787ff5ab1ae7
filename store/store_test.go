package store

import (
	"bufio"
	"context"
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

	toolenv "github.com/toolenv/toolenv"
)

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestPutGetFirstWins(t *testing.T) {
	for _, path := range []string{":memory:", filepath.Join(t.TempDir(), "s.db")} {
		t.Run(path, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, path)
			if _, ok, err := s.Get(ctx, "c/t", `{}`); ok || err != nil {
				t.Fatalf("empty store: ok=%v err=%v", ok, err)
			}
			ok, err := s.Put(ctx, &Entry{Tool: "c/t", Args: `{"a":1}`, Body: json.RawMessage(`"first"`), Origin: "simulator"})
			if !ok || err != nil {
				t.Fatal(ok, err)
			}
			ok, err = s.Put(ctx, &Entry{Tool: "c/t", Args: `{"a":1}`, Body: json.RawMessage(`"second"`), Origin: "simulator"})
			if ok || err != nil {
				t.Fatalf("second put stored: %v %v", ok, err)
			}
			e, ok, err := s.Get(ctx, "c/t", `{"a":1}`)
			if !ok || err != nil || string(e.Body) != `"first"` || e.Status != toolenv.StatusOK {
				t.Fatalf("get = %+v %v %v", e, ok, err)
			}
			n, err := s.PutMany(ctx, []*Entry{{Tool: "c/t", Args: `{"a":1}`, Body: json.RawMessage(`"third"`)}}, true)
			if n != 1 || err != nil {
				t.Fatal(n, err)
			}
			e, _, _ = s.Get(ctx, "c/t", `{"a":1}`)
			if string(e.Body) != `"third"` {
				t.Fatalf("overwrite not visible through the memory cache: %s", e.Body)
			}
		})
	}
}

func TestExamplesStatsEachDelete(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	var entries []*Entry
	for i := 0; i < 5; i++ {
		entries = append(entries, &Entry{Tool: "c/a", Args: fmt.Sprintf(`{"i":%d}`, i), Body: json.RawMessage(`{}`), Origin: "upstream"})
	}
	entries = append(entries, &Entry{Tool: "c/b", Args: `{}`, Body: json.RawMessage(`1`), Origin: "import"})
	entries = append(entries, &Entry{Tool: "c/a", Args: `{"bad":1}`, Status: toolenv.StatusNotFound, Origin: "upstream"})
	if n, err := s.PutMany(ctx, entries, false); n != 7 || err != nil {
		t.Fatal(n, err)
	}
	ex, err := s.Examples(ctx, "c/a", 3)
	if err != nil || len(ex) != 3 {
		t.Fatalf("examples = %d, %v", len(ex), err)
	}
	for _, e := range ex {
		if e.Status != toolenv.StatusOK {
			t.Errorf("failed entry offered as example: %+v", e)
		}
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries != 7 || st.Tools != 2 || st.ByOrigin["upstream"] != 6 || st.ByStatus["not_found"] != 1 || st.TopTools[0].Tool != "c/a" || st.Bytes == 0 {
		t.Fatalf("stats = %+v", st)
	}
	var seen []string
	if err := s.Each(ctx, func(e *Entry) error { seen = append(seen, e.Tool+e.Args); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 7 || seen[0] != `c/a{"bad":1}` {
		t.Fatalf("each = %v", seen)
	}
	if n, err := s.Delete(ctx, "c/a"); n != 6 || err != nil {
		t.Fatal(n, err)
	}
	if _, ok, _ := s.Get(ctx, "c/a", `{"i":1}`); ok {
		t.Fatal("deleted entry still served")
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
				if _, err := s.Put(ctx, &Entry{Tool: "c/t", Args: fmt.Sprintf(`{"w":%d,"i":%d}`, w, i), Body: json.RawMessage(`"x"`)}); err != nil {
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

func TestRecords(t *testing.T) {
	ctx := context.Background()
	s := open(t, ":memory:")
	if _, ok, _ := s.Lookup(ctx, "k"); ok {
		t.Fatal("lookup on empty records")
	}
	if err := s.Record(ctx, "k", []byte(`{"q":1}`), []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, "k", []byte(`{"q":1}`), []byte(`{"a":2}`)); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Lookup(ctx, "k")
	if !ok || err != nil || string(got) != `{"a":1}` {
		t.Fatalf("lookup = %s %v %v", got, ok, err)
	}
}

func TestOpenRejectsNonStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.db")
	os.WriteFile(path, []byte(strings.Repeat("not a database ", 100)), 0o644)
	if _, err := Open(context.Background(), path, Options{}); err == nil || !strings.Contains(err.Error(), "--store") {
		t.Fatalf("err = %v", err)
	}
}

// TestSurvivesKill9 writes from a child process, kills it with SIGKILL in
// the middle of writing, and checks that the database is intact and holds
// every entry the child reported as committed.
func TestSurvivesKill9(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TOOLENV_STORE_CHILD="+path)
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
			if len(acked) == 300 {
				break
			}
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if len(acked) < 300 {
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
}

// TestMain runs the child writer of TestSurvivesKill9 when asked to.
func TestMain(m *testing.M) {
	if path := os.Getenv("TOOLENV_STORE_CHILD"); path != "" {
		childWriter(path)
		return
	}
	os.Exit(m.Run())
}

// childWriter writes until killed, printing each committed key.
func childWriter(path string) {
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for i := 0; ; i++ {
		args := fmt.Sprintf(`{"i":%d}`, i)
		body := json.RawMessage(fmt.Sprintf(`"%s"`, strings.Repeat("x", 2000)))
		if _, err := s.Put(context.Background(), &Entry{Tool: "c/t", Args: args, Body: body}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("ACK %s\n", args)
		if i > 100000 {
			time.Sleep(time.Second)
		}
	}
}
