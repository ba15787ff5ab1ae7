package store_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/store"
)

// Status says where each component stands against this program, and
// Migrate reports what it migrated, then nothing the second time; extra
// components (as the environment and the queue add) are migrated too.
func TestMigrateReportAndStatus(t *testing.T) {
	for _, tc := range []struct {
		v    store.SchemaVersion
		want string
	}{
		{store.SchemaVersion{Component: "a", Version: 2, Known: 2}, "up to date"},
		{store.SchemaVersion{Component: "a", Version: 0, Known: 2}, "toolenv store migrate brings it to 2"},
		{store.SchemaVersion{Component: "a", Version: 3, Known: 2}, "newer than this toolenv (2): upgrade it"},
		{store.SchemaVersion{Component: "a", Version: 1, Known: 0}, "not known to this toolenv"},
	} {
		if got := tc.v.Status(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.v, got, tc.want)
		}
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	extra := []store.Migration{{Component: "extra_test", Version: 1, SQLite: "CREATE TABLE extra_test (x INTEGER)", Postgres: "CREATE TABLE extra_test (x INTEGER)"}}
	vs, err := store.ReadSchema(ctx, path, extra)
	if err != nil {
		t.Fatal(err)
	}
	var status bytes.Buffer
	store.WriteSchemaStatus(&status, vs)
	if !strings.Contains(status.String(), "extra_test version 0  toolenv store migrate brings it to 1") {
		t.Errorf("status of a new store:\n%s", status.String())
	}
	rep, err := store.Migrate(ctx, path, extra, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rep.WriteText(&b)
	if rep.Store != path || rep.Kind != "sqlite" || !strings.Contains(b.String(), "extra_test version 1  migrated from 0") {
		t.Errorf("first migration: %+v\n%s", rep, b.String())
	}
	rep, err = store.Migrate(ctx, path, extra, store.Options{})
	b.Reset()
	if err != nil {
		t.Fatal(err)
	}
	rep.WriteText(&b)
	if strings.Contains(b.String(), "migrated") || !strings.Contains(b.String(), "extra_test version 1  up to date") {
		t.Errorf("second migration:\n%s", b.String())
	}
}
