package sqlstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/mirror/mirrortest"
	"github.com/toolenv/toolenv/mirror/sqlstore"
)

func TestSQLiteConformance(t *testing.T) {
	mirrortest.Run(t, func(t *testing.T) mirror.Store {
		s, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "m.db"), sqlstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestOpenErrors checks that a store that cannot be used says why.
func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := sqlstore.OpenSQLite(ctx, ":memory:", sqlstore.Options{}); err == nil || !strings.Contains(err.Error(), "file path") {
		t.Fatalf("in-memory store: %v", err)
	}
	if _, err := sqlstore.OpenSQLite(ctx, "", sqlstore.Options{}); err == nil {
		t.Fatal("an empty path was accepted")
	}
	// A file that is not a database.
	bad := filepath.Join(t.TempDir(), "bad.db")
	os.WriteFile(bad, []byte("this is not a SQLite database, just some text that is long enough to look like a header"), 0o644)
	if _, err := sqlstore.OpenSQLite(ctx, bad, sqlstore.Options{}); err == nil || !strings.Contains(err.Error(), "--store") {
		t.Fatalf("a text file as the store: %v", err)
	}
	// A store written by a newer toolenv.
	path := filepath.Join(t.TempDir(), "new.db")
	s, err := sqlstore.OpenSQLite(ctx, path, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.SetMeta(ctx, "", "schema_version", "99")
	s.Close()
	if _, err := sqlstore.OpenSQLite(ctx, path, sqlstore.Options{}); err == nil || !strings.Contains(err.Error(), "upgrade toolenv") {
		t.Fatalf("a newer schema: %v", err)
	}
}
