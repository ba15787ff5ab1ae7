package world

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sqlSandbox runs users' SQL the way a world does (ATTACH forbidden,
// inside a transaction toolenv owns) and reports whatever that SQL did
// beyond rows: files written, databases attached, settings changed, the
// transaction ended, the schema changed.
type sqlSandbox struct {
	db  *sql.DB
	dir string
}

func newSQLSandbox(t testing.TB) *sqlSandbox {
	t.Helper()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(filepath.Join(dir, "db.sqlite")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	for _, s := range []string{"CREATE TABLE t (a, b)", "INSERT INTO t VALUES (1, 'x'), (2, 'y')"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	files := filepath.Join(dir, "out")
	if err := os.Mkdir(files, 0o755); err != nil {
		t.Fatal(err)
	}
	return &sqlSandbox{db: db, dir: files}
}

// settings are the connection's settings a user's SQL must leave alone.
const sandboxSettings = "SELECT (SELECT query_only FROM pragma_query_only), (SELECT cache_size FROM pragma_cache_size), (SELECT recursive_triggers FROM pragma_recursive_triggers), (SELECT schema_version FROM pragma_schema_version), (SELECT group_concat(name) FROM pragma_database_list)"

// run executes q (every statement SQLite finds in it; errors are the
// SQL's own business) and returns what it did beyond rows, "" for
// nothing.
func (s *sqlSandbox) run(q string) string {
	ctx := context.Background()
	c, err := s.db.Conn(ctx)
	if err != nil {
		return "open: " + err.Error()
	}
	defer c.Close()
	if err := noAttach(c); err != nil {
		return "limit: " + err.Error()
	}
	var before, after [5]any
	scan := func(to *[5]any) error {
		return c.QueryRowContext(ctx, sandboxSettings).Scan(&to[0], &to[1], &to[2], &to[3], &to[4])
	}
	if err := scan(&before); err != nil {
		return "settings: " + err.Error()
	}
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return "begin: " + err.Error()
	}
	_, _ = c.ExecContext(ctx, q)
	var did []string
	if _, err := c.ExecContext(ctx, "BEGIN"); err == nil {
		did = append(did, "ended the transaction")
	}
	if err := scan(&after); err != nil {
		did = append(did, "settings unreadable: "+err.Error())
	} else if fmt.Sprint(before) != fmt.Sprint(after) {
		did = append(did, fmt.Sprintf("changed settings %v to %v", before, after))
	}
	_, _ = c.ExecContext(ctx, "ROLLBACK")
	for _, reset := range []string{"PRAGMA query_only = 0", "PRAGMA cache_size = -2000", "PRAGMA recursive_triggers = 0"} {
		_, _ = c.ExecContext(ctx, reset)
	}
	for _, name := range []string{"a", "b"} {
		_, _ = c.ExecContext(ctx, "DETACH "+name)
	}
	if ents, _ := os.ReadDir(s.dir); len(ents) > 0 {
		did = append(did, fmt.Sprintf("wrote %d files", len(ents)))
		for _, e := range ents {
			os.Remove(filepath.Join(s.dir, e.Name()))
		}
	}
	return strings.Join(did, "; ")
}

// checkSQLText asserts the checker's promises on q: the statements join
// back to q, and SQL the checker lets through does nothing beyond rows.
func checkSQLText(t testing.TB, s *sqlSandbox, q string) (scriptOK, queryOK bool) {
	t.Helper()
	stmts := splitSQL(q)
	var b strings.Builder
	for i, st := range stmts {
		b.WriteString(st.text)
		if st.text == "" {
			t.Fatalf("%q: statement %d is empty", q, i)
		}
		if i < len(stmts)-1 && !strings.HasSuffix(st.text, ";") {
			t.Fatalf("%q: statement %d (%q) does not end at a semicolon", q, i, st.text)
		}
	}
	if b.String() != q {
		t.Fatalf("%q: the statements join to %q", q, b.String())
	}
	scriptOK = checkScript(q) == nil
	queryOK = CheckQuery(q) == nil
	if queryOK && !scriptOK {
		// A query is a script too (SELECT), unless the script check
		// found something else.
		t.Errorf("%q: taken as a check's query, refused as a script", q)
	}
	if scriptOK && s != nil {
		if did := s.run(q); did != "" {
			t.Errorf("accepted SQL %q %s", q, did)
		}
	}
	return scriptOK, queryOK
}

// TestSQLTextGenerated: scripts and checks generated from statements
// that change only rows, dangerous statements (ATTACH, VACUUM INTO,
// PRAGMA, transaction and schema statements, in any case, after
// comments) and values built to hide a semicolon or a statement from a
// splitter (semicolons in strings, quoted identifiers, comments, blobs,
// TCL-style parameters, unterminated strings and comments, NUL bytes).
// Whatever the checker lets through is run on a real SQLite connection
// and must leave no file, no attached database, no changed setting and
// toolenv's transaction open; where the generator knows the answer (no
// unbalanced pieces) the checker must give it.
func TestSQLTextGenerated(t *testing.T) {
	s := newSQLSandbox(t)
	file := func(name string) string { return strings.ReplaceAll(filepath.Join(s.dir, name), `'`, `''`) }
	values := []string{"1", "'a;b'", "'it''s; ok'", `"a;b"`, "[c;d]", "`e;f`", "/* ; PRAGMA query_only = 1; */ 2", "-- ; ATTACH 'x' AS a\n3",
		"x'00ff'", "'€;'", "'--'", "'/*'", "\"'\"", "['']", "'\"'", "b", "a$b", "(SELECT 'COMMIT;')", "'END'"}
	unbalanced := []string{"'open;", "/* open;", "[open;", "-- no newline;", "\"open;", "`open;", "x'zz", "'"}
	params := []string{"$a(';x)", "$a(;PRAGMA)", ":a", "@b", "#c", "?", "?1", "$a::b", "a\x00"}
	dangerous := []string{"ATTACH '" + file("a.db") + "' AS a", "attach database '" + file("b.db") + "' as b", "VACUUM INTO '" + file("v.db") + "'", "vacuum main into '" + file("w.db") + "'",
		"PRAGMA query_only = 1", "pragma cache_size=7", "PrAgMa recursive_triggers = ON", "COMMIT", "END", "ROLLBACK", "BEGIN", "SAVEPOINT s", "RELEASE s",
		"DETACH a", "CREATE TABLE u (a)", "DROP TABLE t", "ALTER TABLE t ADD COLUMN z", "CREATE TEMP TRIGGER g AFTER INSERT ON t BEGIN SELECT 1; END",
		"REINDEX", "ANALYZE", "EXPLAIN PRAGMA query_only = 1", "/* c */PRAGMA cache_size = 8", "-- c\nCOMMIT", "\"PRAGMA\" cache_size = 9", "(COMMIT)", "[x] COMMIT"}
	benign := []string{"UPDATE t SET b = %s WHERE a = %s", "INSERT INTO t (a, b) VALUES (%s, %s)", "DELETE FROM t WHERE b = %s OR a = %s",
		"SELECT %s, %s", "WITH x AS (SELECT %s AS v, %s) SELECT * FROM x", "REPLACE INTO t VALUES (%s, %s)", "VALUES (%s, %s)", "  /* lead */ select %s, %s"}
	seps := []string{";", ";\n", " ; ", ";;", "; -- tail\n", ";/* */"}
	r := rand.New(rand.NewPCG(27, 6))
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	var accepted, refused, queries int
	for n := 0; n < 2000; n++ {
		var b strings.Builder
		var hasDanger, hasOdd, hasParam bool
		stmts := 1 + r.IntN(4)
		for i := 0; i < stmts; i++ {
			if i > 0 {
				b.WriteString(pick(seps))
			}
			if r.IntN(4) == 0 {
				b.WriteString(pick(dangerous))
				hasDanger = true
				continue
			}
			v := [2]string{pick(values), pick(values)}
			for k := range v {
				switch r.IntN(12) {
				case 0:
					v[k] = pick(unbalanced)
					hasOdd = true
				case 1:
					v[k] = pick(params)
					hasParam = true
				}
			}
			b.WriteString(fmt.Sprintf(pick(benign), v[0], v[1]))
		}
		if r.IntN(2) == 0 {
			b.WriteString(pick(seps))
		}
		q := b.String()
		scriptOK, queryOK := checkSQLText(t, s, q)
		if scriptOK {
			accepted++
		} else {
			refused++
		}
		if queryOK {
			queries++
		}
		if !hasOdd && !hasParam {
			if hasDanger && scriptOK {
				t.Errorf("%q: holds a statement beyond rows, accepted", q)
			}
			if !hasDanger && !scriptOK {
				t.Errorf("%q: only row statements, refused: %v", q, checkScript(q))
			}
		}
		if hasParam && !hasOdd && scriptOK {
			t.Errorf("%q: holds a parameter, accepted", q)
		}
	}
	if accepted < 200 || refused < 200 || queries < 50 {
		t.Fatalf("the generator is lopsided: %d accepted, %d refused, %d queries", accepted, refused, queries)
	}
	t.Logf("%d scripts accepted, %d refused, %d single queries", accepted, refused, queries)
}

// FuzzSplitSQL: any text splits into statements that join back to it,
// without a panic, and whatever the checker lets through does nothing
// beyond rows on a real SQLite connection.
func FuzzSplitSQL(f *testing.F) {
	for _, seed := range []string{"", ";", "SELECT 1", "UPDATE t SET b = 'a;b'; DELETE FROM t", "SELECT $a(';x)", "/* ; */ SELECT 1 --",
		"SELECT [a;b] FROM t", "x'zz;' ; PRAGMA query_only = 1", "SELECT '", "SELECT 1 /*", "INSERT INTO t VALUES (?1, :a)", "VACUUM INTO 'v.db'"} {
		f.Add(seed)
	}
	s := newSQLSandbox(f)
	f.Fuzz(func(t *testing.T, q string) {
		checkSQLText(t, s, q)
	})
}
