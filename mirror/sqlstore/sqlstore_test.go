package sqlstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/internal/pgtest"
	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/mirror/mirrortest"
	"github.com/toolenv/toolenv/mirror/sqlstore"
	"github.com/toolenv/toolenv/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestSQLiteConformance(t *testing.T) {
	mirrortest.Run(t, func(t *testing.T) mirror.Store {
		s, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestPostgresConformance runs the suite against a real PostgreSQL server
// (internal/pgtest starts one on loopback).
func TestPostgresConformance(t *testing.T) {
	mirrortest.Run(t, func(t *testing.T) mirror.Store {
		s, err := sqlstore.Open(context.Background(), pgtest.DB(t), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestSharedStore puts the mirror's tables in a toolenv store that serves
// a cache too: both keep their data, and the model records are the
// store's.
func TestSharedStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "toolenv.db")
	st, err := store.Open(ctx, path, store.Options{Migrations: sqlstore.Migrations})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ms, err := sqlstore.New(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := ms.Record(ctx, "k", []byte("q"), []byte("a")); err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := st.Lookup(ctx, "k"); !ok || string(got) != "a" {
		t.Fatalf("the mirror's record is not in the store's records: %q %v", got, ok)
	}
	if _, err := ms.PutRequests(ctx, "d", []*mirror.Request{{Tool: "c/a", Args: "{}", Origin: mirror.RequestSampler}}); err != nil {
		t.Fatal(err)
	}
	schema, err := store.ReadSchema(ctx, path, sqlstore.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, v := range schema {
		found = found || (v.Component == "mirror" && v.Version == 1 && v.Known == 1)
	}
	if !found {
		t.Fatalf("schema %+v has no mirror component at version 1", schema)
	}
	// A store opened without the mirror's migrations has no tables for it.
	plain, err := store.Open(ctx, filepath.Join(t.TempDir(), "plain.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := sqlstore.New(plain); err == nil || !strings.Contains(err.Error(), "sqlstore.Migrations") {
		t.Fatalf("a store without the mirror tables: %v", err)
	}
}

// TestOpenErrors checks that a store that cannot be used says why.
func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := sqlstore.Open(ctx, ":memory:", store.Options{}); err == nil || !strings.Contains(err.Error(), "file path") {
		t.Fatalf("in-memory store: %v", err)
	}
	if _, err := sqlstore.Open(ctx, "", store.Options{}); err == nil {
		t.Fatal("an empty path was accepted")
	}
	bad := filepath.Join(t.TempDir(), "bad.db")
	os.WriteFile(bad, []byte("this is not a SQLite database, just some text that is long enough to look like a header"), 0o644)
	if _, err := sqlstore.Open(ctx, bad, store.Options{}); err == nil || !strings.Contains(err.Error(), "--store") {
		t.Fatalf("a text file as the store: %v", err)
	}
	// A store whose mirror tables a newer toolenv migrated.
	path := filepath.Join(t.TempDir(), "new.db")
	newer := append(append([]store.Migration(nil), sqlstore.Migrations...), store.Migration{Component: "mirror", Version: 2, Name: "from the future", SQLite: "CREATE TABLE mirror_future (x INTEGER)", Postgres: "CREATE TABLE mirror_future (x INTEGER)"})
	st, err := store.Open(ctx, path, store.Options{Migrations: newer[1:]})
	if err == nil {
		st.Close()
		t.Fatal("a migration list with a gap was accepted")
	}
	st, err = store.Open(ctx, path, store.Options{Migrations: newer})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := sqlstore.Open(ctx, path, store.Options{}); err == nil || !strings.Contains(err.Error(), "upgrade this toolenv") {
		t.Fatalf("a newer schema: %v", err)
	}
}
