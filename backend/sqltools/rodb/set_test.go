package rodb_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
)

func TestSet(t *testing.T) {
	path := studentClub(t)
	ctx := context.Background()
	shared, err := rodb.Open(ctx, "shared", path, rodb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	dir := filepath.Dir(path)
	s, err := rodb.OpenSet(ctx, map[string]string{
		"club":    filepath.Base(path), // relative to Dir
		"shared":  "not/opened.sqlite", // taken from Shared
		"missing": filepath.Join(t.TempDir(), "missing.sqlite"),
	}, rodb.SetOptions{Dir: dir, Shared: map[string]*rodb.DB{"shared": shared}})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Names(); !reflect.DeepEqual(got, []string{"club", "shared"}) {
		t.Errorf("Names = %v, want the two open databases", got)
	}
	if db, err := s.Get("club"); err != nil || db.Path != path {
		t.Errorf("Get(club) = %v, %v", db, err)
	}
	if db, err := s.Get("shared"); err != nil || db != shared {
		t.Errorf("Get(shared) = %v, %v; want the shared database", db, err)
	}
	for name, why := range map[string]string{"missing": "missing.sqlite", "nope": rodb.ErrNoDatabase.Error()} {
		db, err := s.Get(name)
		if db != nil || toolenv.StatusOf(err) != toolenv.StatusUnavailable || !strings.Contains(err.Error(), why) {
			t.Errorf("Get(%s) = %v, %v; want unavailable saying %q", name, db, err, why)
		}
		if r := toolenv.ResultOf(err); r.Hint == "" || !strings.HasPrefix(r.Error, "database "+name+" is unavailable: ") {
			t.Errorf("Get(%s) result %+v", name, r)
		}
	}
	if _, err := s.Get("nope"); !errors.Is(err, rodb.ErrNoDatabase) {
		t.Errorf("Get(nope) = %v, want ErrNoDatabase in the chain", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// The shared database is still open.
	if n, err := shared.QueryValue(ctx, `SELECT COUNT(*) FROM member`, nil); err != nil || n != int64(33) {
		t.Fatalf("shared database after Close: %v, %v", n, err)
	}
	if _, err := rodb.OpenSet(ctx, nil, rodb.SetOptions{}); err == nil || !strings.Contains(err.Error(), "names no databases") {
		t.Fatalf("OpenSet(nil) = %v, want a config error", err)
	}
}

func TestResolvePath(t *testing.T) {
	for _, tc := range []struct{ dir, path, want string }{
		{"/c", "db.sqlite", "/c/db.sqlite"},
		{"/c", "/abs/db.sqlite", "/abs/db.sqlite"},
		{"", "db.sqlite", "db.sqlite"},
	} {
		if got := rodb.ResolvePath(tc.dir, tc.path); got != filepath.FromSlash(tc.want) {
			t.Errorf("ResolvePath(%q, %q) = %q, want %q", tc.dir, tc.path, got, tc.want)
		}
	}
}

func TestQueryError(t *testing.T) {
	timeout := &toolenv.Error{Status: toolenv.StatusTimeout, Message: "interrupted"}
	for _, tc := range []struct {
		in     error
		status toolenv.Status
		text   string
	}{
		{timeout, toolenv.StatusTimeout, "interrupted"},
		{fmt.Errorf("wrapped: %w", timeout), toolenv.StatusTimeout, "interrupted"},
		{errors.New("string or blob too big"), toolenv.StatusInvalidArguments, "SQLite refused a value: string or blob too big"},
		{errors.New("expression tree is too complex"), toolenv.StatusInvalidArguments, "SQLite refused a value"},
		{errors.New("disk I/O error"), toolenv.StatusInternal, "the query failed: disk I/O error"},
	} {
		r := toolenv.ResultOf(rodb.QueryError(tc.in, nil))
		if r.Status != tc.status || !strings.Contains(r.Error, tc.text) {
			t.Errorf("QueryError(%v) = %s %q, want %s %q", tc.in, r.Status, r.Error, tc.status, tc.text)
		}
	}
}
