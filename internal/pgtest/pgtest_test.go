package pgtest

import (
	"context"
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
