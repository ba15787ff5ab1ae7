package store_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"github.com/toolenv/toolenv/internal/pgtest"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/store/storetest"
)

// The tables of cache schema 2, records 1 and claims 1, as toolenv wrote
// them before keys were stored by their digest.
var oldSchema = map[string][]string{
	"sqlite": {
		`CREATE TABLE toolenv_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL, updated INTEGER NOT NULL) WITHOUT ROWID`,
		`CREATE TABLE cache (tool TEXT NOT NULL, args TEXT NOT NULL, status TEXT NOT NULL, body BLOB, error TEXT NOT NULL DEFAULT '', origin TEXT NOT NULL DEFAULT '', created INTEGER NOT NULL, exact TEXT NOT NULL DEFAULT '', PRIMARY KEY (tool, args)) WITHOUT ROWID`,
		`CREATE UNIQUE INDEX cache_exact_key ON cache (tool, exact) WHERE exact != ''`,
		`CREATE TABLE cache_exact (tool TEXT NOT NULL, exact TEXT NOT NULL, args TEXT NOT NULL, status TEXT NOT NULL, body BLOB, error TEXT NOT NULL DEFAULT '', origin TEXT NOT NULL DEFAULT '', created INTEGER NOT NULL, PRIMARY KEY (tool, exact)) WITHOUT ROWID`,
		`CREATE TABLE records (key TEXT PRIMARY KEY, request BLOB NOT NULL, response BLOB NOT NULL, created INTEGER NOT NULL) WITHOUT ROWID`,
		`CREATE TABLE claims (tool TEXT NOT NULL, args TEXT NOT NULL, token TEXT NOT NULL, owner TEXT NOT NULL, expires INTEGER NOT NULL, done INTEGER NOT NULL DEFAULT 0, result BLOB, PRIMARY KEY (tool, args)) WITHOUT ROWID`,
		`INSERT INTO toolenv_schema VALUES ('cache', 2, 0), ('records', 1, 0), ('claims', 1, 0)`,
	},
	"postgres": {
		`CREATE TABLE toolenv_schema (component text PRIMARY KEY, version integer NOT NULL, updated timestamptz NOT NULL DEFAULT now())`,
		`CREATE TABLE cache (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, tool text NOT NULL, akey bytea NOT NULL, args bytea NOT NULL, ekey bytea, exact bytea NOT NULL DEFAULT '', canonical boolean NOT NULL, status text NOT NULL, body bytea, error bytea NOT NULL DEFAULT '', origin text NOT NULL DEFAULT '', created timestamptz NOT NULL)`,
		`CREATE UNIQUE INDEX cache_canonical ON cache (tool, akey) WHERE canonical`,
		`CREATE UNIQUE INDEX cache_exact ON cache (tool, ekey) WHERE ekey IS NOT NULL`,
		`CREATE TABLE records (key text PRIMARY KEY, request bytea NOT NULL, response bytea NOT NULL, created timestamptz NOT NULL)`,
		`CREATE TABLE claims (tool text NOT NULL, akey bytea NOT NULL, args bytea NOT NULL, token text NOT NULL, owner text NOT NULL, expires timestamptz NOT NULL, done boolean NOT NULL DEFAULT false, result bytea, PRIMARY KEY (tool, akey))`,
		`INSERT INTO toolenv_schema VALUES ('cache', 2, now()), ('records', 1, now()), ('claims', 1, now())`,
	},
}

// oldRow is an entry as the old code wrote it: canonical (its slot in
// cache) or kept only under its exact key.
type oldRow struct {
	args, exact, body string
	canonical         bool
}

// writeOld writes rows into a store with the old schema, every key in
// full, as toolenv did before keys were stored by their digest.
func writeOld(t *testing.T, dialect, dsn string, rows []oldRow) {
	t.Helper()
	driver, name := "sqlite", dsn
	if dialect == "postgres" {
		driver = "pgx"
	}
	db, err := sql.Open(driver, name)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range oldSchema[dialect] {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	sum := func(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
	for _, r := range rows {
		var err error
		switch {
		case dialect == "postgres":
			var ekey []byte
			if r.exact != "" {
				ekey = sum(r.exact)
			}
			_, err = db.Exec(`INSERT INTO cache(tool, akey, args, ekey, exact, canonical, status, body, origin, created) VALUES ('c/t', $1, $2, $3, $4, $5, 'ok', $6, 'upstream', now())`,
				sum(r.args), []byte(r.args), ekey, []byte(r.exact), r.canonical, []byte(r.body))
		case r.canonical:
			_, err = db.Exec(`INSERT INTO cache(tool, args, exact, status, body, origin, created) VALUES ('c/t', ?, ?, 'ok', ?, 'upstream', 1700000000000)`, r.args, r.exact, []byte(r.body))
		default:
			_, err = db.Exec(`INSERT INTO cache_exact(tool, exact, args, status, body, origin, created) VALUES ('c/t', ?, ?, 'ok', ?, 'upstream', 1700000000000)`, r.exact, r.args, []byte(r.body))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestLargeKeysOfAnOldStore upgrades a cache written by toolenv before
// large keys were stored by their digest (arguments and exact keys just
// over and far over store.LargeKeyBytes, in canonical slots and kept
// only under their exact key, an exact key that starts like a digest
// key): after the migration, the same calls find the same entries, every
// reader sees the full keys, a second answer for an old key is refused
// (no duplicate slot), and, in SQLite, no key column keeps a key longer
// than LargeKeyBytes (PostgreSQL finds old rows by the digests it always
// kept, and leaves them as they are).
func TestLargeKeysOfAnOldStore(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			dsn := filepath.Join(t.TempDir(), "old.db")
			if dialect == "postgres" {
				dsn = pgtest.DB(t)
			}
			r := rand.New(rand.NewPCG(2, 9))
			L := store.LargeKeyBytes
			a := storetest.LargeArgs(r, L+1)
			b := a[:len(a)-3] + "z" + a[len(a)-2:] // differs at its end
			if b == a {
				b = a[:len(a)-3] + "y" + a[len(a)-2:]
			}
			c := storetest.LargeArgs(r, 1<<20)
			bigExact := "{'q': '" + strings.Repeat("é", L) + "'}"
			rows := []oldRow{
				{args: a, body: `"a"`, canonical: true},
				{args: b, exact: bigExact, body: `"b"`, canonical: true},
				{args: b, exact: bigExact + " ", body: `"b exact-only"`},
				{args: c, exact: "{'c': 1}", body: `"c"`, canonical: true},
				{args: `{"s":1}`, exact: "sha256:not-a-digest", body: `"s"`, canonical: true},
				{args: `{"small":1}`, body: `"small"`, canonical: true},
			}
			// More than one page of the SQLite rewrite's scan (16 rows),
			// in both tables.
			for i := range 40 {
				m := storetest.LargeArgs(r, L+1+i)
				rows = append(rows, oldRow{args: m, body: fmt.Sprintf(`"m%d"`, i), canonical: true})
				if i%2 == 0 {
					rows = append(rows, oldRow{args: m, exact: fmt.Sprintf("{'m': %d, 'pad': '%s'}", i, strings.Repeat("p", L)), body: fmt.Sprintf(`"m%d exact-only"`, i)})
				}
			}
			writeOld(t, dialect, dsn, rows)
			st, err := store.Open(ctx, dsn, store.Options{MemoryBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for _, row := range rows {
				e, ok, err := st.GetExact(ctx, "c/t", row.exact, row.args)
				if err != nil || !ok || string(e.Body) != row.body || e.Args != row.args || e.Exact != row.exact {
					t.Fatalf("old entry %s (args %d bytes, exact %d bytes) after the upgrade: ok=%v err=%v", row.body, len(row.args), len(row.exact), ok, err)
				}
				if row.canonical {
					e, ok, err := st.Get(ctx, "c/t", row.args)
					if err != nil || !ok || string(e.Body) != row.body {
						t.Fatalf("old canonical entry %s by Get: ok=%v err=%v", row.body, ok, err)
					}
				}
				// The same key again: the old answer wins, no second slot.
				if ok, err := st.Put(ctx, &store.Entry{Tool: "c/t", Args: row.args, Exact: row.exact, Body: json.RawMessage(`"new"`)}); ok || err != nil {
					t.Fatalf("a second answer for old entry %s: stored=%v err=%v", row.body, ok, err)
				}
			}
			// The entry differing from a only at its end is its own.
			if e, ok, _ := st.Get(ctx, "c/t", b); !ok || string(e.Body) != `"b"` {
				t.Fatalf("b after the upgrade: %v", ok)
			}
			var got, want []string
			if err := st.Each(ctx, func(e *store.Entry) error {
				got = append(got, fmt.Sprintf("%s|%s|%s", e.Args, e.Exact, e.Body))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for _, row := range rows {
				want = append(want, fmt.Sprintf("%s|%s|%s", row.args, row.exact, row.body))
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("Each after the upgrade: %d entries, want %d, or keys differ", len(got), len(want))
			}
			if err := st.Check(ctx); err != nil {
				t.Fatal(err)
			}
			if dialect == "sqlite" {
				var long, digests int
				db := st.SQL()
				q := `SELECT (SELECT count(*) FROM cache WHERE octet_length(args) > ?1 OR octet_length(exact) > ?1) + (SELECT count(*) FROM cache_exact WHERE octet_length(args) > ?1 OR octet_length(exact) > ?1),
					(SELECT count(*) FROM cache WHERE exact LIKE 'sha256:%')`
				if err := db.Read.QueryRowContext(ctx, q, L).Scan(&long, &digests); err != nil || long != 0 || digests != 2 {
					t.Fatalf("after the upgrade %d rows keep a key longer than %d bytes, %d exact keys are digests (want 0 and 2: the large one and the one that looked like a digest): %v", long, L, digests, err)
				}
			}
		})
	}
}
