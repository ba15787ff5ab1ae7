package sqlrest_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqlrest"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/backend/sqltools/world"
	"github.com/toolenv/toolenv/eval/endstate"
)

// The world benchmarks (docs/benchmarks.md, "Worlds"): how long starting
// a world takes on a small and a large database, what an idle world
// holds in memory with 10,000 open at once, and a write's CPU against a
// read's on the same table.
//
//	go test ./backend/sqlrest -run '^$' -bench Worlds -benchtime 1x
//
// TOOLENV_BENCH_DIR keeps the large generated database between runs;
// TOOLENV_BENCH_BIG_ROWS sets its rows (default 2,000,000: about 150 MB,
// over rodb's in-memory limit, so served from its file).

// bigDatabase returns a generated database of rows rows (made once).
func bigDatabase(b *testing.B, rows int) string {
	dir := os.Getenv("TOOLENV_BENCH_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("toolenv-worlds-big-%d.sqlite", rows))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tmp := path + ".tmp"
	os.Remove(tmp)
	db, err := sql.Open("sqlite", tmp)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range []string{`PRAGMA journal_mode = OFF`, `PRAGMA synchronous = OFF`,
		`CREATE TABLE account (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, city TEXT, balance REAL NOT NULL DEFAULT 0, note TEXT)`,
		fmt.Sprintf(`WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n WHERE value < %d)
INSERT INTO account SELECT value, 'owner ' || value, 'city ' || (value %% 997), value * 1.5, printf('%%.40d', value) FROM n`, rows)} {
		if _, err := db.Exec(s); err != nil {
			b.Fatalf("%s: %v", s, err)
		}
	}
	db.Close()
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	return path
}

// restOver is a writable REST collection over one database file.
func restOver(b *testing.B, name, path string) (*toolenv.Collection, *sqlrest.Backend) {
	ctx := context.Background()
	db, err := rodb.Open(ctx, name, path, rodb.Options{})
	if err != nil {
		b.Fatal(err)
	}
	s, err := world.ReadSchema(ctx, db)
	db.Close()
	if err != nil {
		b.Fatal(err)
	}
	tools := append(sqlrest.TableToolDefs(map[string]*world.Schema{name: s}, nil), sqltools.WorldToolDefs([]string{name}, nil)...)
	for _, tl := range tools {
		if tl.Meta[sqlrest.MetaDatabase] == "" {
			tl.Meta[sqlrest.MetaDatabase] = name
		}
	}
	cfg, _ := json.Marshal(sqlrest.Config{Databases: map[string]string{name: path}})
	c := toolenv.NewCollection(name+"-rest", "nl2sql-rest", tools)
	c.Backend = toolenv.BackendSpec{Type: sqlrest.BackendType, Config: cfg}
	be, err := sqlrest.Open(ctx, c, sqlrest.Options{SessionMaxBytes: -1, SessionIdle: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Close() })
	return c, be
}

func invoke(b *testing.B, be *sqlrest.Backend, c *toolenv.Collection, session, tool string, args map[string]any) *toolenv.Result {
	res := be.Invoke(context.Background(), &toolenv.Call{Tool: c.Tool(tool), Collection: c, Args: args, Session: session})
	if !res.OK() {
		b.Fatalf("%s: %s %s %+v", tool, res.Status, res.Error, res.Problems)
	}
	return res
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(p*float64(len(s)-1))]
}

// cpu is the process's user + system CPU time.
func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkWorlds(b *testing.B) {
	clubPath := os.Getenv("TOOLENV_BENCH_CLUB")
	if clubPath == "" {
		clubPath = filepath.Join("..", "..", "..", "shared", "data", "bird", "dev_databases", "student_club", "student_club.sqlite")
	}
	if _, err := os.Stat(clubPath); err != nil {
		b.Skipf("BIRD's student_club is not at %s (set TOOLENV_BENCH_CLUB)", clubPath)
	}
	bigRows := 2000000
	if s := os.Getenv("TOOLENV_BENCH_BIG_ROWS"); s != "" {
		bigRows, _ = strconv.Atoi(s)
	}

	// Starting a world: the hidden initialize_world call in a new
	// session, on a 2.6 MB database and on a large one.
	b.Run("create", func(b *testing.B) {
		for _, db := range []struct{ name, path, script string }{
			{"student_club", clubPath, `UPDATE member SET position = 'Member' WHERE position <> 'Member'; DELETE FROM attendance WHERE link_to_event = 'rec2N69DMcrqN9PJC'`},
			{"big", bigDatabase(b, bigRows), `UPDATE account SET note = 'audited' WHERE id <= 100; DELETE FROM account WHERE id > 1999900`},
		} {
			c, be := restOver(b, db.name, db.path)
			st, _ := os.Stat(db.path)
			const n = 2000
			for _, from := range []struct {
				name string
				args map[string]any
			}{{"", map[string]any{}}, {"-from-script", map[string]any{"sql": db.script}}} {
				// The first world of an initial state runs its script; the
				// others share what it left.
				invoke(b, be, c, "first"+from.name, endstate.InitTool, from.args)
				ds := make([]time.Duration, n)
				for i := 0; i < n; i++ {
					t0 := time.Now()
					invoke(b, be, c, fmt.Sprintf("create%s-%d", from.name, i), endstate.InitTool, from.args)
					ds[i] = time.Since(t0)
				}
				b.ReportMetric(float64(percentile(ds, 0.5).Microseconds())/1000, db.name+from.name+"-p50-ms")
				b.ReportMetric(float64(percentile(ds, 0.99).Microseconds())/1000, db.name+from.name+"-p99-ms")
			}
			b.ReportMetric(float64(st.Size())/(1<<20), db.name+"-MB")
		}
	})

	// 10,000 worlds open at once, each having changed one row of
	// student_club's member table; each still reads its own write.
	b.Run("open10k", func(b *testing.B) {
		c, be := restOver(b, "student_club", clubPath)
		const n = 10000
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := 0; i < n; i++ {
			s := fmt.Sprintf("w-%d", i)
			invoke(b, be, c, s, endstate.InitTool, map[string]any{})
			invoke(b, be, c, s, "update_member", map[string]any{"member_id": "rec1x5zBFIqoOuPW8", "phone": fmt.Sprintf("555-%05d", i)})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		for _, i := range []int{0, n / 2, n - 1} {
			res := invoke(b, be, c, fmt.Sprintf("w-%d", i), "get_member_by_key", map[string]any{"member_id": "rec1x5zBFIqoOuPW8"})
			if want := fmt.Sprintf("555-%05d", i); !json.Valid(res.Body) || !contains(res.Body, want) {
				b.Fatalf("world %d reads %s, not its %s", i, res.Body, want)
			}
		}
		st := be.Stats()
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n/1024, "KiB/world")
		b.ReportMetric(float64(st.Sessions), "worlds")
	})

	// A write's CPU against a read's on the same table, in one world:
	// PATCH of a member's phone, GET of that member, alternated, over
	// every member in turn, in a new world every 100 writes (so that
	// most rows are written for the first time in their world).
	b.Run("write-vs-read", func(b *testing.B) {
		c, be := restOver(b, "student_club", clubPath)
		members := memberIDs(b, clubPath)
		const n = 3000
		var wcpu, rcpu time.Duration
		s := ""
		for i := 0; i < n; i++ {
			if i%100 == 0 {
				s = fmt.Sprintf("wr-%d", i)
				invoke(b, be, c, s, endstate.InitTool, map[string]any{})
			}
			m := members[i%len(members)]
			t0 := cpu()
			invoke(b, be, c, s, "update_member", map[string]any{"member_id": m, "phone": fmt.Sprintf("555-%05d", i)})
			t1 := cpu()
			invoke(b, be, c, s, "get_member_by_key", map[string]any{"member_id": m})
			t2 := cpu()
			wcpu += t1 - t0
			rcpu += t2 - t1
		}
		b.ReportMetric(float64(wcpu.Microseconds())/n, "write-cpu-us")
		b.ReportMetric(float64(rcpu.Microseconds())/n, "read-cpu-us")
		b.ReportMetric(float64(wcpu)/float64(rcpu), "write/read")
	})
}

// memberIDs are student_club's members.
func memberIDs(b *testing.B, path string) []string {
	db, err := rodb.Open(context.Background(), "club", path, rodb.Options{InMemoryMaxBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	r, err := db.Query(context.Background(), `SELECT member_id FROM member ORDER BY member_id`, nil, 0)
	if err != nil {
		b.Fatal(err)
	}
	var out []string
	for _, row := range r.Rows {
		out = append(out, row[0].(string))
	}
	return out
}

func contains(b []byte, s string) bool {
	return len(s) > 0 && string(b) != "" && indexOf(string(b), s) >= 0
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
