package rodb_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/internal/shareddata"
)

func studentClub(t testing.TB) string {
	return shareddata.Require(t, "bird", "dev_databases", "student_club", "student_club.sqlite")
}

func TestOpenModes(t *testing.T) {
	path := studentClub(t)
	ctx := context.Background()
	images := &rodb.Images{}
	for _, tc := range []struct {
		name     string
		opt      rodb.Options
		inMemory bool
	}{
		{"memory", rodb.Options{}, true},
		{"memory, image made for Images", rodb.Options{Images: images}, true},
		{"memory, image from Images", rodb.Options{Images: images}, true},
		{"file", rodb.Options{InMemoryMaxBytes: -1}, false},
		{"too big for memory", rodb.Options{InMemoryMaxBytes: 1024}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := rodb.Open(ctx, "student_club", path, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if db.InMemory != tc.inMemory {
				t.Fatalf("InMemory = %v, want %v", db.InMemory, tc.inMemory)
			}
			n, err := db.QueryValue(ctx, `SELECT COUNT(*) FROM zip_code WHERE state = ?`, []any{"New Jersey"})
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(732) {
				t.Fatalf("count = %v, want 732", n)
			}
			if _, err := db.Query(ctx, `CREATE TABLE x(a)`, nil, 0); err == nil {
				t.Fatal("a write succeeded on a read-only database")
			}
			if _, err := db.Query(ctx, `DELETE FROM member`, nil, 0); err == nil {
				t.Fatal("a delete succeeded on a read-only database")
			}
			n, _ = db.QueryValue(ctx, `SELECT COUNT(*) FROM member`, nil)
			if n != int64(33) {
				t.Fatalf("member rows = %v after a refused delete, want 33", n)
			}
			zt := db.Table("ZIP_CODE")
			if zt == nil || zt.Column("State") == nil || zt.Column("zip_code").Kind() != "integer" {
				t.Fatalf("schema lookup failed: %+v", zt)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	notDB := filepath.Join(dir, "broken.sqlite")
	if err := os.WriteFile(notDB, []byte("this is not a database, just text that is long enough"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"missing", filepath.Join(dir, "nope.sqlite"), "no such file"},
		{"folder", dir, "is a folder"},
		{"not a database", notDB, "broken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rodb.Open(ctx, "broken", tc.path, rodb.Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestQueryCapAndTimeout(t *testing.T) {
	db, err := rodb.Open(context.Background(), "student_club", studentClub(t), rodb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.Query(context.Background(), `SELECT zip_code FROM zip_code`, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 10 || !r.Truncated {
		t.Fatalf("rows = %d, truncated = %v; want 10, true", len(r.Rows), r.Truncated)
	}
	// An endless recursive query is interrupted at the context's
	// deadline: the timeout status proves it (the go test timeout would
	// catch a hang); no wall-clock bound is asserted.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = db.Query(ctx, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c`, nil, 0)
	if toolenv.StatusOf(err) != toolenv.StatusTimeout {
		t.Fatalf("status = %v (%v), want timeout", toolenv.StatusOf(err), err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v should wrap the context's deadline", err)
	}
}

func TestValueKinds(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"INTEGER", "integer"}, {"int", "integer"}, {"TEXT", "string"}, {"varchar(20)", "string"},
		{"REAL", "number"}, {"DOUBLE", "number"}, {"NUMERIC", "number"}, {"", "string"}, {"BLOB", "string"},
	} {
		if got := rodb.Kind(tc.in); got != tc.want {
			t.Errorf("Kind(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
