package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/store"
)

// TestStoreLocations: a libpq keyword/value string is a PostgreSQL DSN
// (it used to open an SQLite file named after it, password and all);
// Redact hides every secret of either form; an unreachable one fails
// with an error that shows none.
func TestStoreLocations(t *testing.T) {
	for dsn, want := range map[string]bool{
		"postgres://u:p@h/db": true, "postgresql://h/db": true, "host=db dbname=x password=p": true, "dbname=toolenv": true,
		"store.db": false, ":memory:": false, filepath.Join(t.TempDir(), "a=b.db"): false,
	} {
		if got := store.IsPostgres(dsn); got != want {
			t.Errorf("IsPostgres(%q) = %v, want %v", dsn, got, want)
		}
	}
	for _, dsn := range []string{
		"postgres://u:PW1SECRET@127.0.0.1:1/db?sslmode=disable&sslpassword=PW2SECRET",
		"host=127.0.0.1 port=1 dbname=db user=u password=PW1SECRET sslpassword='PW2SECRET x' connect_timeout=1",
	} {
		if r := store.Redact(dsn); strings.Contains(r, "SECRET") || !strings.Contains(r, "127.0.0.1") {
			t.Errorf("Redact(%q) = %q", dsn, r)
		}
		_, err := store.Open(context.Background(), dsn, store.Options{})
		if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "xxxxx") {
			t.Errorf("Open(%q): %v", dsn, err)
		}
	}
}
