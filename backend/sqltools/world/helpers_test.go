package world_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/backend/sqltools/world"
	_ "modernc.org/sqlite"
)

// makeDB writes an SQLite file from SQL statements and returns its path.
func makeDB(t testing.TB, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path
}

// openBase opens path as a base (inMemory false: served from its file).
func openBase(t testing.TB, path string, inMemory bool) *world.Base {
	t.Helper()
	opt := rodb.Options{}
	if !inMemory {
		opt.InMemoryMaxBytes = -1
	}
	db, err := rodb.Open(context.Background(), "test", path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b, err := world.NewBase(context.Background(), db, world.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// dump returns every row of table in w, in rowid (or key) order, as text.
func dump(t testing.TB, w *world.World, table string) string {
	t.Helper()
	r, err := w.Query(context.Background(), `SELECT * FROM "`+strings.ReplaceAll(table, `"`, `""`)+`" ORDER BY 1, 2`, nil, 0)
	if err != nil {
		t.Fatalf("dump %s: %v", table, err)
	}
	var b strings.Builder
	for _, row := range r.Rows {
		for i, v := range row {
			if i > 0 {
				b.WriteString("|")
			}
			b.WriteString(show(v))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + x + "'"
	}
	return fmt.Sprint(v)
}
