package nl2api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolenv/toolenv/nl2api"
	"github.com/toolenv/toolenv/nl2api/nl2apitest"
)

// smallCorpus writes a generated BIRD folder of one database (cheap to
// build) and returns it.
func smallCorpus(t testing.TB, seed uint64) string {
	t.Helper()
	data := filepath.Join(t.TempDir(), "bird")
	if _, err := nl2apitest.Generate(data, nl2apitest.Options{Seed: seed, Databases: 1}); err != nil {
		t.Fatal(err)
	}
	return data
}

// cachedOpts is a build of data into out through cache.
func cachedOpts(data, out string, cache *nl2api.BuildCache) nl2api.Options {
	return nl2api.Options{ImageCache: imageCache, Data: data, Out: out, Flavors: []string{nl2api.Slot, nl2api.Rest}, Obfuscate: true, Workers: 2, BuildCache: cache}
}

// tree reads every file under dir but the report's, by slash path.
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "report.json" || rel == "report.md" {
			return nil
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameTree fails unless the two folders hold the same files, byte for
// byte (reports aside).
func sameTree(t *testing.T, want, got string) {
	t.Helper()
	a, b := tree(t, want), tree(t, got)
	if len(a) == 0 {
		t.Fatalf("%s holds no output", want)
	}
	for name, w := range a {
		if g, ok := b[name]; !ok {
			t.Errorf("%s lacks %s", got, name)
		} else if !bytes.Equal(w, g) {
			t.Errorf("%s differs between %s and %s", name, want, got)
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			t.Errorf("%s holds %s, which %s does not", got, name, want)
		}
	}
}

// comparable is a report with what differs between a made and a reused
// build (timing, provenance, the mark) cleared.
func comparable(t *testing.T, r *nl2api.Report) string {
	t.Helper()
	c := *r
	c.Seconds, c.Provenance, c.Reused = 0, nil, nil
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.build"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestBuildCacheReusesAndMarks: the second identical build writes the
// stored output (the same files, byte for byte, as a build made without
// the cache) into its own folder, its report rebased onto that folder and
// marked reused, with the same counts; the text report says so.
func TestBuildCacheReusesAndMarks(t *testing.T) {
	ctx := context.Background()
	data := smallCorpus(t, 3)
	cache := &nl2api.BuildCache{Dir: filepath.Join(t.TempDir(), "builds")}
	root := t.TempDir()
	out1, out2, out3 := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")
	first, err := nl2api.Build(ctx, cachedOpts(data, out1, cache))
	if err != nil {
		t.Fatal(err)
	}
	if first.Reused != nil {
		t.Fatalf("the first build into an empty cache says it was reused: %+v", first.Reused)
	}
	if n := len(entries(t, cache.Dir)); n != 1 {
		t.Fatalf("%d entries after one build, want 1", n)
	}
	second, err := nl2api.Build(ctx, cachedOpts(data, out2, cache))
	if err != nil {
		t.Fatal(err)
	}
	if second.Reused == nil || second.Reused.Cache != cache.Dir || len(second.Reused.Key) != 64 {
		t.Fatalf("the second identical build is not marked reused from %s: %+v", cache.Dir, second.Reused)
	}
	fresh, err := nl2api.Build(ctx, cachedOpts(data, out3, nil))
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, out3, out2)
	sameTree(t, out1, out2)
	if second.Out != out2 || second.Flavors[0].Dir != filepath.Join(out2, nl2api.Slot) || second.Variants[0].Dir != filepath.Join(out2, "slot-obfuscated") {
		t.Errorf("the reused report names out %s, flavor dir %s, variant dir %s: not this build's folder %s", second.Out, second.Flavors[0].Dir, second.Variants[0].Dir, out2)
	}
	want := comparable(t, first)
	want = strings.ReplaceAll(want, out1, out2)
	if got := comparable(t, second); got != want {
		t.Errorf("the reused report differs from the one made:\n got %s\nwant %s", got, want)
	}
	if f, s := fresh.Flavor(nl2api.Slot), second.Flavor(nl2api.Slot); f.Kept != s.Kept || f.Tools != s.Tools {
		t.Errorf("reused slot keeps %d tasks with %d tools, a build without the cache %d with %d", s.Kept, s.Tools, f.Kept, f.Tools)
	}
	var text bytes.Buffer
	if err := second.WriteText(&text, out2); err != nil {
		t.Fatal(err)
	}
	if line := "reused build " + second.Reused.Key[:12] + " from " + cache.Dir; !strings.Contains(text.String(), line) {
		t.Errorf("the text report does not say %q:\n%s", line, text.String())
	}
	md, err := os.ReadFile(filepath.Join(out2, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "This build was reused") {
		t.Errorf("report.md does not say the build was reused:\n%s", md)
	}
	var onDisk nl2api.Report
	raw, err := os.ReadFile(filepath.Join(out2, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &onDisk); err != nil {
		t.Fatal(err)
	}
	if onDisk.Reused == nil || onDisk.Reused.Key != second.Reused.Key {
		t.Errorf("report.json's reused field is %+v, want key %s", onDisk.Reused, second.Reused.Key)
	}
}

// TestBuildCacheDamagedEntry: an entry damaged in any way (cut short, a
// byte of its contents or its header changed, emptied, another build's
// entry in its place) is a miss: the build is made again, correct, and
// the entry replaced, so the next build reuses it.
func TestBuildCacheDamagedEntry(t *testing.T) {
	ctx := context.Background()
	data := smallCorpus(t, 4)
	root := t.TempDir()
	cache := &nl2api.BuildCache{Dir: filepath.Join(root, "builds")}
	ref := filepath.Join(root, "ref")
	if _, err := nl2api.Build(ctx, cachedOpts(data, ref, cache)); err != nil {
		t.Fatal(err)
	}
	name := entries(t, cache.Dir)[0]
	good, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"cut short", func(b []byte) []byte { return b[:len(b)/2] }},
		{"a content byte changed", func(b []byte) []byte { b[len(b)-100] ^= 0x20; return b }},
		{"the checksum changed", func(b []byte) []byte { b[8+32+8] ^= 1; return b }},
		{"the key changed", func(b []byte) []byte { b[8] ^= 1; return b }},
		{"the magic changed", func(b []byte) []byte { b[0] = 'x'; return b }},
		{"emptied", func(b []byte) []byte { return nil }},
		{"a longer tail", func(b []byte) []byte { return append(b, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(name, tc.damage(bytes.Clone(good)), 0o600); err != nil {
				t.Fatal(err)
			}
			// Beside ref: the same path to the data, so the same key.
			out := filepath.Join(root, fmt.Sprint("out", i))
			rep, err := nl2api.Build(ctx, cachedOpts(data, out, cache))
			if err != nil {
				t.Fatalf("a damaged entry failed the build: %v", err)
			}
			if rep.Reused != nil {
				t.Fatalf("a damaged entry was reused: %+v", rep.Reused)
			}
			sameTree(t, ref, out)
			again, err := nl2api.Build(ctx, cachedOpts(data, filepath.Join(root, fmt.Sprint("again", i)), cache))
			if err != nil {
				t.Fatal(err)
			}
			if again.Reused == nil {
				t.Fatal("the damaged entry was not replaced: the next identical build was made again")
			}
		})
	}
}

// TestBuildCacheConcurrent: identical builds started at once, each into
// its own folder, make the output once (the others wait for its entry and
// reuse it), all correct, and leave one entry and no temporary file.
func TestBuildCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	data := smallCorpus(t, 5)
	root := t.TempDir()
	cache := &nl2api.BuildCache{Dir: filepath.Join(root, "builds")}
	const n = 4
	reps := make([]*nl2api.Report, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = nl2api.Build(ctx, cachedOpts(data, filepath.Join(root, fmt.Sprint("out", i)), cache))
		}()
	}
	wg.Wait()
	made := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("build %d: %v", i, errs[i])
		}
		if reps[i].Reused == nil {
			made++
		}
		if i > 0 {
			sameTree(t, filepath.Join(root, "out0"), filepath.Join(root, fmt.Sprint("out", i)))
		}
	}
	if made != 1 {
		t.Errorf("%d of %d identical concurrent builds were made, want 1 (the others reused)", made, n)
	}
	if e := entries(t, cache.Dir); len(e) != 1 {
		t.Errorf("%d entries, want 1: %v", len(e), e)
	}
	tmp, _ := filepath.Glob(filepath.Join(cache.Dir, ".tmp-*"))
	if len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

// TestBuildCacheEvictsLeastRecentlyUsed: over MaxBytes, the entry used
// least recently goes first and the others stay reusable.
func TestBuildCacheEvictsLeastRecentlyUsed(t *testing.T) {
	ctx := context.Background()
	data := smallCorpus(t, 6)
	cache := &nl2api.BuildCache{Dir: filepath.Join(t.TempDir(), "builds"), MaxBytes: -1}
	build := func(timeout time.Duration) *nl2api.Report {
		t.Helper()
		o := cachedOpts(data, filepath.Join(t.TempDir(), "out"), cache)
		o.CallTimeout = timeout // a different key, nearly the same entry
		rep, err := nl2api.Build(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	build(10 * time.Second)
	build(11 * time.Second)
	keyA, keyB := keyOf(t, cache, data, 10*time.Second), keyOf(t, cache, data, 11*time.Second)
	entryA, entryB := filepath.Join(cache.Dir, keyA+".build"), filepath.Join(cache.Dir, keyB+".build")
	st, err := os.Stat(entryA)
	if err != nil {
		t.Fatal(err)
	}
	// A used an hour ago, B two hours ago: B is the least recently used.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(entryA, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(entryB, old.Add(-time.Hour), old.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	cache.MaxBytes = st.Size()*5/2 + 1024 // room for two entries, not three
	build(12 * time.Second)
	if _, err := os.Stat(entryB); !os.IsNotExist(err) {
		t.Errorf("the least recently used entry is still there (%v)", err)
	}
	if _, err := os.Stat(entryA); err != nil {
		t.Errorf("the more recently used entry was evicted: %v", err)
	}
	if again := build(10 * time.Second); again.Reused == nil {
		t.Error("the more recently used entry is not reused")
	}
	if again := build(11 * time.Second); again.Reused != nil {
		t.Error("the evicted entry was reused")
	}
}

// keyOf returns the key a build of data with that call timeout reuses
// (by building it once more and reading the mark).
func keyOf(t *testing.T, cache *nl2api.BuildCache, data string, timeout time.Duration) string {
	t.Helper()
	o := cachedOpts(data, filepath.Join(t.TempDir(), "out"), cache)
	o.CallTimeout = timeout
	rep, err := nl2api.Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Reused == nil {
		t.Fatalf("the build with call timeout %s was not reused", timeout)
	}
	return rep.Reused.Key
}

// TestBuildCacheOff: "off" and "" turn the cache off (no folder made, no
// build reused); the flag's default is $TOOLENV_BUILD_CACHE.
func TestBuildCacheOff(t *testing.T) {
	for _, dir := range []string{"off", "", "  off  "} {
		if c := nl2api.BuildCacheAt(dir, nil); c != nil {
			t.Errorf("BuildCacheAt(%q) = %+v, want no cache", dir, c)
		}
	}
	env := filepath.Join(t.TempDir(), "from-env")
	t.Setenv(nl2api.BuildCacheEnv, env)
	if got := nl2api.DefaultConfig().BuildCache; got != env {
		t.Errorf("the default build cache is %q with $%s=%s", got, nl2api.BuildCacheEnv, env)
	}
	data := smallCorpus(t, 7)
	root := t.TempDir()
	for i := range 2 {
		c := nl2api.DefaultConfig()
		c.Data, c.Out, c.BuildCache, c.ImageCache, c.Flavors = data, filepath.Join(root, fmt.Sprint("out", i)), "off", imageCache.Dir, "slot"
		rep, err := c.Run(context.Background(), nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Reused != nil {
			t.Errorf("build %d with --build-cache off was reused", i)
		}
	}
	if _, err := os.Stat(env); !os.IsNotExist(err) {
		t.Errorf("--build-cache off still made %s (%v)", env, err)
	}
	c := nl2api.DefaultConfig()
	c.Data, c.Out, c.Flavors = data, filepath.Join(root, "on"), "slot"
	o, err := c.Options()
	if err != nil {
		t.Fatal(err)
	}
	if o.BuildCache == nil || o.BuildCache.Dir != env {
		t.Errorf("with $%s set the build's cache is %+v, want %s", nl2api.BuildCacheEnv, o.BuildCache, env)
	}
}

// TestBuildCacheKeepsOutBuildsNamingTheirFolder: a build whose output
// names its --data folder by its absolute path (here, the error of a
// database that cannot be opened) is not stored, so it is never served
// to a build elsewhere; a sibling build is made.
func TestBuildCacheKeepsOutBuildsNamingTheirFolder(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "bird")
	corpus, err := nl2apitest.Generate(data, nl2apitest.Options{Seed: 8, Databases: 2})
	if err != nil {
		t.Fatal(err)
	}
	db := corpus.Databases[1]
	if err := os.WriteFile(filepath.Join(data, "dev_databases", db, db+".sqlite"), []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := &nl2api.BuildCache{Dir: filepath.Join(t.TempDir(), "builds")}
	for i := range 2 {
		rep, err := nl2api.Build(ctx, cachedOpts(data, filepath.Join(t.TempDir(), "out"), cache))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Reused != nil {
			t.Fatalf("build %d reused a build whose report names %s", i, data)
		}
		var failed string
		for _, d := range rep.Databases {
			if d.Name == db {
				failed = d.Error
			}
		}
		if !strings.Contains(failed, data) {
			t.Fatalf("the database's error %q does not name its path: the test no longer tests a report naming its folder", failed)
		}
	}
	if e := entries(t, cache.Dir); len(e) != 0 {
		t.Errorf("entries stored for a build naming its folder: %v", e)
	}
}
