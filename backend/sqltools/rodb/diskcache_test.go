package rodb_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/internal/shareddata"
	_ "modernc.org/sqlite"
)

// The test binary stands in for a toolenv process opening a database
// with the image cache (TestDiskCacheConcurrentProcesses): it prints the
// digest of what it serves.
func TestMain(m *testing.M) {
	if path := os.Getenv("RODB_TEST_OPEN"); path != "" {
		db, err := rodb.Open(context.Background(), "db", path, rodb.Options{Cache: &rodb.DiskCache{Dir: os.Getenv("RODB_TEST_CACHE")}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		d, err := digestOf(db)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Print(d)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// digest is everything a database serves: its schema (the indexes the
// image adds included), ANALYZE's statistics, every row of every table
// in rowid order, and the plan of an equality filter.
func digest(t testing.TB, db *rodb.DB) string {
	t.Helper()
	d, err := digestOf(db)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func digestOf(db *rodb.DB) (string, error) {
	ctx := context.Background()
	h := sha256.New()
	queries := []string{`SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name`}
	if db.InMemory {
		queries = append(queries, `SELECT tbl, idx, stat FROM sqlite_stat1 ORDER BY tbl, idx`)
	}
	for _, tb := range db.Tables() {
		queries = append(queries, `SELECT * FROM `+rodb.Quote(tb.Name)+` ORDER BY `+strings.Join(tb.RowKey("t"), ", "))
		queries[len(queries)-1] = strings.Replace(queries[len(queries)-1], " ORDER BY", " AS t ORDER BY", 1)
		if len(tb.Columns) > 1 {
			queries = append(queries, `EXPLAIN QUERY PLAN SELECT * FROM `+rodb.Quote(tb.Name)+` WHERE `+rodb.Quote(tb.Columns[1].Name)+` = 1`)
		}
	}
	for _, q := range queries {
		r, err := db.Query(ctx, q, nil, 0)
		if err != nil {
			return "", fmt.Errorf("%s: %w", q, err)
		}
		fmt.Fprintf(h, "%s\n%q\n%#v\n", q, r.Columns, r.Rows)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hostileDB writes an SQLite database of generated tables whose names
// and values are hostile (quotes, SQL, NUL bytes, invalid UTF-8, blobs,
// huge and tiny numbers, NULLs) at path.
func hostileDB(t testing.TB, path string, seed uint64) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF`); err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	r := rand.New(rand.NewPCG(seed, 31))
	values := []any{"'; DROP TABLE x; --", `" OR 1=1`, "nul\x00byte", string([]byte{0xff, 0xfe}), "ünïcödé", "%_%", nil,
		int64(-1 << 63), int64(1<<63 - 1), 0.1, -0.0, 1e308, []byte{0, 1, 2, 255}, "", strings.Repeat("x", 3000)}
	tables := []string{"select", "t\"q", "ÜBER", "order by"}
	for ti, tb := range tables {
		stmt := fmt.Sprintf(`CREATE TABLE %s (id INTEGER PRIMARY KEY, %s TEXT, "b c" INTEGER, d, "e""f" REAL)`, rodb.Quote(tb), rodb.Quote(fmt.Sprintf("col%d", ti)))
		if ti == 3 {
			stmt = fmt.Sprintf(`CREATE TABLE %s (k TEXT PRIMARY KEY, v, w INTEGER) WITHOUT ROWID`, rodb.Quote(tb))
		}
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
		for i := range 200 + r.IntN(200) {
			pick := func() any { return values[r.IntN(len(values))] }
			if ti == 3 {
				_, err = db.Exec(`INSERT INTO `+rodb.Quote(tb)+` VALUES (?, ?, ?)`, fmt.Sprintf("k%d-%d", i, r.IntN(1000)), pick(), r.IntN(50))
			} else {
				_, err = db.Exec(`INSERT INTO `+rodb.Quote(tb)+` VALUES (NULL, ?, ?, ?, ?)`, pick(), r.IntN(100), pick(), r.Float64())
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// logRecorder keeps the messages logged.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

func (l *logRecorder) count(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.HasPrefix(m, prefix) {
			n++
		}
	}
	return n
}

const (
	msgHit     = "database image from the cache"
	msgStored  = "database image cached"
	msgDamaged = "cached database image is damaged"
)

func images(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.img"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func open(t testing.TB, path string, opt rodb.Options) *rodb.DB {
	t.Helper()
	db, err := rodb.Open(context.Background(), "db", path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestDiskCacheServesWhatIndexingMakes: over generated hostile databases
// and BIRD's student_club, a database opened with an empty cache (which
// stores its image) and again with the cache (which reads it) serves
// exactly what it serves without a cache: schema and added indexes,
// statistics, every row, query plans; and stays read-only.
func TestDiskCacheServesWhatIndexingMakes(t *testing.T) {
	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "gen1.sqlite"), filepath.Join(dir, "gen2.sqlite")}
	hostileDB(t, paths[0], 1)
	hostileDB(t, paths[1], 2)
	if data, ok := shareddata.Dir(); ok { // BIRD's too, when the shared data is there
		paths = append(paths, filepath.Join(data, "bird", "dev_databases", "student_club", "student_club.sqlite"))
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			cache := t.TempDir()
			rec := &logRecorder{}
			opt := rodb.Options{Cache: &rodb.DiskCache{Dir: cache, Logger: slog.New(rec)}}
			want := digest(t, open(t, path, rodb.Options{}))
			cold := open(t, path, opt)
			// The cold open serves the image it stores, which the warm
			// one is checked against; on BIRD's 41,877-row zip_code one
			// more digest is only more CPU.
			if !strings.HasPrefix(filepath.Base(path), "student_club") {
				if got := digest(t, cold); got != want {
					t.Fatal("the image made with an empty cache serves other data than without a cache")
				}
			}
			if rec.count(msgStored) != 1 || len(images(t, cache)) != 1 {
				t.Fatalf("cold open: %d stored, %d files; want the image stored once", rec.count(msgStored), len(images(t, cache)))
			}
			warm := open(t, path, opt)
			if rec.count(msgHit) != 1 || rec.count(msgStored) != 1 {
				t.Fatalf("warm open: %d hits, %d stores; want it read from the cache", rec.count(msgHit), rec.count(msgStored))
			}
			if got := digest(t, warm); got != want {
				t.Fatal("the cached image serves other data than without a cache")
			}
			if !warm.InMemory {
				t.Fatal("a cached image is not served from memory")
			}
			tb := warm.Tables()[0]
			if _, err := warm.Query(context.Background(), `DELETE FROM `+rodb.Quote(tb.Name), nil, 0); err == nil {
				t.Fatal("a delete succeeded on a database served from a cached image")
			}
			if got := digest(t, warm); got != want {
				t.Fatal("a refused write changed the cached image's data")
			}
		})
	}
}

// TestDiskCacheConcurrentProcesses: processes opening the same database
// at once with one empty cache folder all serve the database's data; the
// folder ends with its one intact image and no temporary file, which the
// next open reads.
func TestDiskCacheConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gen.sqlite")
	hostileDB(t, path, 3)
	want := digest(t, open(t, path, rodb.Options{}))
	cache := filepath.Join(t.TempDir(), "not", "yet", "made")
	const n = 6
	var wg sync.WaitGroup
	outs := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "RODB_TEST_OPEN="+path, "RODB_TEST_CACHE="+cache)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			outs[i] = string(out)
			if err != nil {
				errs[i] = fmt.Errorf("%w: %s", err, stderr.String())
			}
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("process %d: %v", i, errs[i])
		}
		if outs[i] != want {
			t.Fatalf("process %d served %q, want %q (the data without a cache)", i, outs[i], want)
		}
	}
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !strings.HasSuffix(entries[0].Name(), ".img") {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("cache folder holds %v; want one image and no temporary file", names)
	}
	rec := &logRecorder{}
	db := open(t, path, rodb.Options{Cache: &rodb.DiskCache{Dir: cache, Logger: slog.New(rec)}})
	if rec.count(msgHit) != 1 || digest(t, db) != want {
		t.Fatal("the image the processes left is not read, or serves other data")
	}
}

// TestDiskCacheDamagedImage: an image file truncated, cut to its header,
// emptied, with a byte of its image or header changed, or holding
// another database's image is detected, never served: the database is
// indexed again, serves its own data, and the file is made whole.
func TestDiskCacheDamagedImage(t *testing.T) {
	dir := t.TempDir()
	path, other := filepath.Join(dir, "gen.sqlite"), filepath.Join(dir, "other.sqlite")
	hostileDB(t, path, 4)
	hostileDB(t, other, 5)
	want := digest(t, open(t, path, rodb.Options{}))
	for _, tc := range []struct {
		name   string
		damage func(img, otherImg []byte) []byte
	}{
		{"truncated by a byte", func(b, _ []byte) []byte { return b[:len(b)-1] }},
		{"truncated to half", func(b, _ []byte) []byte { return b[:len(b)/2] }},
		{"header only", func(b, _ []byte) []byte { return b[:80] }},
		{"empty", func([]byte, []byte) []byte { return nil }},
		{"a byte of the image changed", func(b, _ []byte) []byte { b[len(b)/2] ^= 0x40; return b }},
		{"last byte changed", func(b, _ []byte) []byte { b[len(b)-1] ^= 1; return b }},
		{"length field changed", func(b, _ []byte) []byte { b[8+32] ^= 1; return b }},
		{"magic changed", func(b, _ []byte) []byte { b[0] = 'X'; return b }},
		{"bytes appended", func(b, _ []byte) []byte { return append(b, 0) }},
		{"another database's image", func(_, o []byte) []byte { return o }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache, otherCache := t.TempDir(), t.TempDir()
			rec := &logRecorder{}
			opt := rodb.Options{Cache: &rodb.DiskCache{Dir: cache, Logger: slog.New(rec)}}
			open(t, path, opt)
			open(t, other, rodb.Options{Cache: &rodb.DiskCache{Dir: otherCache}})
			name, otherName := images(t, cache)[0], images(t, otherCache)[0]
			good, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			otherImg, err := os.ReadFile(otherName)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, tc.damage(slices.Clone(good), otherImg), 0o644); err != nil {
				t.Fatal(err)
			}
			db := open(t, path, opt)
			if rec.count(msgDamaged) != 1 || rec.count(msgHit) != 0 || rec.count(msgStored) != 2 {
				t.Fatalf("damaged image: %d damaged, %d hits, %d stores logged; want it detected and made again", rec.count(msgDamaged), rec.count(msgHit), rec.count(msgStored))
			}
			if got := digest(t, db); got != want {
				t.Fatal("after a damaged image the database serves other data")
			}
			if again, _ := os.ReadFile(name); !bytes.Equal(again, good) {
				t.Fatal("the damaged image file was not made whole again")
			}
		})
	}
}

// TestDiskCacheChangedDatabase: a database file whose content changes but
// keeps its size and modification time gets a new image: the old one is
// not served.
func TestDiskCacheChangedDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'before')`); err != nil {
		t.Fatal(err)
	}
	st0, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	value := func() any {
		t.Helper()
		d := open(t, path, rodb.Options{Cache: &rodb.DiskCache{Dir: cache}})
		v, err := d.QueryValue(context.Background(), `SELECT v FROM t WHERE id = 1`, nil)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := value(); v != "before" {
		t.Fatalf("v = %v, want before", v)
	}
	if _, err := db.Exec(`UPDATE t SET v = 'after!'`); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, st0.ModTime(), st0.ModTime()); err != nil {
		t.Fatal(err)
	}
	st1, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st1.Size() != st0.Size() || !st1.ModTime().Equal(st0.ModTime()) {
		t.Fatalf("the test must keep size and time: %d %v → %d %v", st0.Size(), st0.ModTime(), st1.Size(), st1.ModTime())
	}
	if v := value(); v != "after!" {
		t.Fatalf("after the change (same size and time) v = %v, want after!: the old image was served", v)
	}
	if n := len(images(t, cache)); n != 2 {
		t.Fatalf("%d images, want one per content", n)
	}
}

// TestDiskCacheOff: "off" and "" turn the cache off, anything else is
// the folder; the default folder is $TOOLENV_IMAGE_CACHE, else one in
// the user's cache folder.
func TestDiskCacheOff(t *testing.T) {
	for _, off := range []string{rodb.CacheOff, "", " off "} {
		if c := rodb.CacheAt(off, nil); c != nil {
			t.Fatalf("CacheAt(%q) = %+v, want no cache", off, c)
		}
	}
	dir := t.TempDir()
	if c := rodb.CacheAt(dir, nil); c == nil || c.Dir != dir {
		t.Fatalf("CacheAt(%s) = %+v", dir, c)
	}
	t.Setenv(rodb.CacheEnv, dir)
	if got := rodb.DefaultCacheDir(); got != dir {
		t.Fatalf("DefaultCacheDir() = %s with $%s=%s", got, rodb.CacheEnv, dir)
	}
	t.Setenv(rodb.CacheEnv, "")
	if user, err := os.UserCacheDir(); err == nil && !strings.HasPrefix(rodb.DefaultCacheDir(), user) {
		t.Fatalf("DefaultCacheDir() = %s, want it in the user's cache folder %s", rodb.DefaultCacheDir(), user)
	}
	path := filepath.Join(t.TempDir(), "gen.sqlite")
	hostileDB(t, path, 6)
	open(t, path, rodb.Options{Cache: rodb.CacheAt(rodb.CacheOff, nil)})
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("with the cache off, %d files were written", len(entries))
	}
}

// TestDiskCacheEviction: past its cap the folder loses its least recently
// used images, never the one just written; temporary files left by a
// killed writer are removed once stale, a fresh one (a writer at work)
// is kept; a folder that cannot be written does not fail the open.
func TestDiskCacheEviction(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("gen%d.sqlite", i))
		hostileDB(t, p, uint64(10+i))
		paths = append(paths, p)
	}
	cache := t.TempDir()
	stale, fresh := filepath.Join(cache, ".tmp-killed"), filepath.Join(cache, ".tmp-writing")
	for _, f := range []string{stale, fresh} {
		if err := os.WriteFile(f, []byte("half an image"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	c := &rodb.DiskCache{Dir: cache, MaxBytes: -1}
	open(t, paths[0], rodb.Options{Cache: c})
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatal("a stale temporary file was kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatal("a fresh temporary file (a writer at work) was removed")
	}
	first := images(t, cache)[0]
	st, err := os.Stat(first)
	if err != nil {
		t.Fatal(err)
	}
	// Cap at two images' worth: the third evicts the least recently used.
	c.MaxBytes = 2*st.Size() + st.Size()/2
	open(t, paths[1], rodb.Options{Cache: c})
	for i, f := range images(t, cache) { // make paths[0]'s the older use
		when := time.Now().Add(time.Duration(i-10) * time.Minute)
		if f == first {
			when = time.Now().Add(-time.Hour)
		}
		os.Chtimes(f, when, when)
	}
	open(t, paths[2], rodb.Options{Cache: c})
	left := images(t, cache)
	if len(left) != 2 || slices.Contains(left, first) {
		t.Fatalf("after the cap: %v; want two images, not the least recently used %s", left, first)
	}
	c.MaxBytes = 1 // smaller than any image: the one written stays
	open(t, paths[0], rodb.Options{Cache: c})
	if left := images(t, cache); len(left) != 1 || left[0] != first {
		t.Fatalf("with a cap below one image: %v, want only the image just written", left)
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &logRecorder{}
	db := open(t, paths[1], rodb.Options{Cache: &rodb.DiskCache{Dir: filepath.Join(file, "sub"), Logger: slog.New(rec)}})
	if !db.InMemory || rec.count("cannot write the database image cache") != 1 {
		t.Fatalf("an unwritable cache folder: in memory %v, %d warnings; want the open to succeed and warn", db.InMemory, rec.count("cannot write"))
	}
}

// BenchmarkOpenImage opens student_club with no cache (copy and index
// every time), with an empty cache (index and write) and from a warm
// cache (read and check the image), reporting the process's CPU per
// open (cpu-ms/op) besides the wall time.
func BenchmarkOpenImage(b *testing.B) {
	path := studentClub(b)
	ctx := context.Background()
	warm := b.TempDir()
	if db, err := rodb.Open(ctx, "db", path, rodb.Options{Cache: &rodb.DiskCache{Dir: warm}}); err == nil {
		db.Close()
	}
	for _, bc := range []struct {
		name  string
		cache func() *rodb.DiskCache
	}{
		{"nocache", func() *rodb.DiskCache { return nil }},
		{"cold", func() *rodb.DiskCache { return &rodb.DiskCache{Dir: b.TempDir()} }},
		{"warm", func() *rodb.DiskCache { return &rodb.DiskCache{Dir: warm} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				c := bc.cache()
				b.StartTimer()
				start := cpuTime()
				db, err := rodb.Open(ctx, "db", path, rodb.Options{Cache: c})
				if err != nil {
					b.Fatal(err)
				}
				db.Close()
				cpu += cpuTime() - start
			}
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
