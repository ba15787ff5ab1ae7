package mirror_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/mirror/sqlstore"
	"github.com/toolenv/toolenv/store"
)

// TestResumeAfterKill collects in a child process, kills it with SIGKILL
// in the middle, and resumes: the store is intact, every pair stored
// before the kill is kept as it was, and the resumed run calls exactly the
// requests that were left, so every request ends with one pair.
func TestResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	ctx := context.Background()
	srv := newAPIServer(t)
	srv.delay = 5 * time.Millisecond
	// After 40 calls the slow API holds every call until the kill, so
	// that the child is killed with calls in flight and requests left,
	// however fast or slow this machine is.
	srv.holdAfter, srv.release = 40, make(chan struct{})
	path := filepath.Join(t.TempDir(), "mirror.db")
	st, err := sqlstore.OpenSQLite(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := weatherTools(srv.URL, "slow", "forecast")
	e := engine(t, st, c, 1<<20)
	if _, err := e.Generate(ctx, mirror.GenerateOptions{PerAPI: 150, Invalid: 10, Seed: 4}); err != nil {
		t.Fatal(err)
	}
	total := pending(t, e)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MIRROR_TEST_CHILD=collect", "MIRROR_TEST_STORE="+path, "MIRROR_TEST_API="+srv.URL)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if n := len(pairsOf(t, e, "weather/slow")); n >= 40 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child stored no pairs in 60 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	close(srv.release)

	// The file is intact.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity check after kill -9: %q %v", check, err)
	}
	db.Close()
	before := map[string]string{}
	for _, tool := range []string{"weather/slow", "weather/forecast"} {
		for _, p := range pairsOf(t, e, tool) {
			if !p.OK() && p.Kind == "sampled" {
				t.Fatalf("a pair cut short by the kill was stored: %+v", p)
			}
			b, _ := json.Marshal(p)
			before[p.Tool+p.Args] = string(b)
		}
	}
	left := pending(t, e)
	if len(before)+left != total || left == 0 {
		t.Fatalf("%d pairs stored + %d pending != %d requests (or nothing left to resume)", len(before), left, total)
	}

	st2, err := e.Collect(ctx, mirror.CollectOptions{Workers: 8})
	if err != nil {
		t.Fatal(err)
	}
	if st2.Called != left || pending(t, e) != 0 {
		t.Fatalf("resumed run called %d, want %d; %d pending", st2.Called, left, pending(t, e))
	}
	after := 0
	for _, tool := range []string{"weather/slow", "weather/forecast"} {
		for _, p := range pairsOf(t, e, tool) {
			after++
			if b, ok := before[p.Tool+p.Args]; ok {
				now, _ := json.Marshal(p)
				if string(now) != b {
					t.Fatalf("a pair stored before the kill changed:\n%s\n%s", b, now)
				}
			}
		}
	}
	if after != total {
		t.Fatalf("%d pairs, want one per request (%d)", after, total)
	}
}
