package pgtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

// TestServerKeepsDataAcrossRestartAndKill starts a server, writes a row,
// stops it, restarts it, kills it with SIGKILL and restarts it again: the
// row is there each time (the server runs as a non-root user when the
// test runs as root).
func TestServerKeepsDataAcrossRestartAndKill(t *testing.T) {
	s := Start(t)
	dsn := s.NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	exec := func(q string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		t.Helper()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	exec(`CREATE TABLE t (x int); INSERT INTO t VALUES (1)`)
	s.Stop()
	if _, err := pgx.Connect(ctx, dsn); err == nil {
		t.Fatal("connected to a stopped server")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("after restart: %d rows, want 1", n)
	}
	exec(`INSERT INTO t VALUES (2)`)
	s.Kill()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Fatalf("after kill -9 and restart: %d rows, want 2", n)
	}
}

// TestSharedDatabasesAreSeparate checks that DB hands out empty,
// separate databases on the shared server.
func TestSharedDatabasesAreSeparate(t *testing.T) {
	a, b := DB(t), DB(t)
	if a == b {
		t.Fatalf("DB returned %s twice", a)
	}
	ctx := context.Background()
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, `CREATE TABLE only_in_a (x int)`); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("table of database a seen in b: n=%d err=%v", n, err)
	}
}

// TestBinDirSaysWhatIsMissing: a TOOLENV_PG_BIN without PostgreSQL is an
// error naming the folder (tests then skip, or fail under CI).
func TestBinDirSaysWhatIsMissing(t *testing.T) {
	t.Setenv("TOOLENV_PG_BIN", t.TempDir())
	if _, err := BinDir(); err == nil || !strings.Contains(err.Error(), "TOOLENV_PG_BIN") {
		t.Fatalf("err = %v", err)
	}
	t.Setenv("TOOLENV_PG_BIN", "")
	if d, err := BinDir(); err == nil && !strings.HasSuffix(d, "bin") {
		t.Fatalf("BinDir = %q", d)
	}
}

// TestClusterMadeOnceAndMadeAgainWhenIncomplete: servers copy one cluster
// initdb made for the machine (here a temporary folder of the test's
// own), which a second server reuses as it is; a kept cluster missing a
// file is made again, and the server started from it works.
func TestClusterMadeOnceAndMadeAgainWhenIncomplete(t *testing.T) {
	if _, err := BinDir(); err != nil {
		t.Skip(err)
	}
	tmp := t.TempDir()
	for _, d := range []string{tmp, filepath.Dir(tmp)} {
		if err := os.Chmod(d, 0o755); err != nil { // the server's user makes the cluster in it
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", tmp)
	works := func(s *Server) {
		t.Helper()
		conn, err := pgx.Connect(context.Background(), s.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "CREATE TABLE x (a int); INSERT INTO x VALUES (1)"); err != nil {
			t.Fatal(err)
		}
	}
	works(Start(t))
	kept, _ := filepath.Glob(filepath.Join(tmp, "toolenv-pgtest-cluster-*"))
	if len(kept) != 1 {
		t.Fatalf("kept clusters %v, want one", kept)
	}
	made := func() time.Time {
		st, err := os.Stat(filepath.Join(kept[0], "data", "PG_VERSION"))
		if err != nil {
			t.Fatal(err)
		}
		return st.ModTime()
	}
	first := made()
	works(Start(t))
	if made() != first {
		t.Fatal("the second server made the cluster again")
	}
	if err := os.Remove(filepath.Join(kept[0], "data", "postgresql.conf")); err != nil {
		t.Fatal(err)
	}
	works(Start(t))
	if _, err := os.Stat(filepath.Join(kept[0], "data", "postgresql.conf")); err != nil {
		t.Fatalf("the incomplete cluster was not made again: %v", err)
	}
	if leftover, _ := filepath.Glob(filepath.Join(tmp, "toolenv-pgtest-initdb-*")); len(leftover) != 0 {
		t.Fatalf("folders initdb made left behind: %v", leftover)
	}
}
