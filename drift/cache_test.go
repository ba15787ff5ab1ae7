package drift

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/foldercache"
)

// folderBytes reads every file under dir, by name.
func folderBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := foldercache.ReadFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, f := range files {
		m[f.Name] = f.Data
	}
	return m
}

func sameFolders(t *testing.T, what, a, b string) {
	t.Helper()
	fa, fb := folderBytes(t, a), folderBytes(t, b)
	if len(fa) != len(fb) {
		t.Fatalf("%s: %d files, want %d", what, len(fb), len(fa))
	}
	for name, data := range fa {
		if !bytes.Equal(data, fb[name]) {
			t.Fatalf("%s: %s differs", what, name)
		}
	}
}

// TestRunCachedReuses: the second identical drift (another --out beside
// the first, so the same place relative to the source) writes exactly
// the files the first made and says it was reused; a third with another
// seed, or after the source changed, is made again. A drift of a folder
// source (a drifted collection, drifted again) is keyed by its bytes.
func TestRunCachedReuses(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	cache := &Cache{Dir: filepath.Join(tmp, "cache")}
	ref := filepath.Join(tmp, "ref")
	if _, err := Run(ctx, Job{Source: Source{Demo: true}, Out: ref, Options: Options{Seed: 5}}); err != nil {
		t.Fatal(err)
	}
	first, err := RunCached(ctx, Job{Source: Source{Demo: true}, Out: filepath.Join(tmp, "a"), Options: Options{Seed: 5}}, cache)
	if err != nil || first.Reused != nil || first.Drifted == nil {
		t.Fatalf("first drift: %+v %v", first, err)
	}
	second, err := RunCached(ctx, Job{Source: Source{Demo: true}, Out: filepath.Join(tmp, "b"), Options: Options{Seed: 5}}, cache)
	if err != nil || second.Reused == nil || second.Drifted != nil {
		t.Fatalf("second drift: %+v %v", second, err)
	}
	sameFolders(t, "the reused drift", ref, filepath.Join(tmp, "b"))
	if !strings.HasPrefix(second.Summary, strings.TrimSuffix(first.Summary, wroteLine(filepath.Join(tmp, "a")))) ||
		!strings.Contains(second.Summary, wroteLine(filepath.Join(tmp, "b"))) ||
		!strings.Contains(second.Summary, "reused drift "+second.Reused.Key[:12]+" from "+cache.Dir) {
		t.Errorf("the reused drift's summary:\n%s\nthe first's:\n%s", second.Summary, first.Summary)
	}
	third, err := RunCached(ctx, Job{Source: Source{Demo: true}, Out: filepath.Join(tmp, "c"), Options: Options{Seed: 6}}, cache)
	if err != nil || third.Reused != nil {
		t.Fatalf("another seed: %+v %v", third, err)
	}

	// v3 from the folder: reused while the folder is the same, made
	// again when a byte of it changes.
	v3 := func(out string) *Ran {
		r, err := RunCached(ctx, Job{Source: Source{In: filepath.Join(tmp, "a")}, Out: out, Options: Options{Seed: 9}}, cache)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := v3(filepath.Join(tmp, "v3a")); r.Reused != nil {
		t.Fatal("the first v3 was reused")
	}
	if r := v3(filepath.Join(tmp, "v3b")); r.Reused == nil {
		t.Fatal("the second v3 was made again")
	}
	sameFolders(t, "the reused v3", filepath.Join(tmp, "v3a"), filepath.Join(tmp, "v3b"))
	cl := filepath.Join(tmp, "a", ChangelogFile)
	b, _ := os.ReadFile(cl)
	os.WriteFile(cl, append(b, '\n'), 0o644)
	if r := v3(filepath.Join(tmp, "v3c")); r.Reused != nil {
		t.Fatal("a v3 of a changed source was reused")
	}
}

// TestRunCachedChecksOut: a reuse refuses an --out that Run refuses
// (another drift there), with Run's error, and writes nothing there.
func TestRunCachedChecksOut(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	cache := &Cache{Dir: filepath.Join(tmp, "cache")}
	if _, err := RunCached(ctx, Job{Source: Source{Demo: true}, Out: filepath.Join(tmp, "a"), Options: Options{Seed: 5}}, cache); err != nil {
		t.Fatal(err)
	}
	busy := filepath.Join(tmp, "busy")
	if _, err := Run(ctx, Job{Source: Source{Demo: true}, Out: busy, Options: Options{Seed: 6}}); err != nil {
		t.Fatal(err)
	}
	before := folderBytes(t, busy)
	_, err := RunCached(ctx, Job{Source: Source{Demo: true}, Out: busy, Options: Options{Seed: 5}}, cache)
	if toolenv.StatusOf(err) != toolenv.StatusInvalidArguments || !strings.Contains(err.Error(), "already drifted") {
		t.Fatalf("a reuse into another drift's folder: %v", err)
	}
	after := folderBytes(t, busy)
	if !reflect.DeepEqual(before, after) {
		t.Error("the refused reuse changed the folder")
	}
	r, err := RunCached(ctx, Job{Source: Source{Demo: true}, Out: busy, Force: true, Options: Options{Seed: 5}}, cache)
	if err != nil || r.Reused == nil {
		t.Fatalf("a forced reuse: %+v %v", r, err)
	}
}

// TestRunCachedDamagedEntry: a damaged entry is a miss: the drift is made
// again, correct, and the entry replaced.
func TestRunCachedDamagedEntry(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	cache := &Cache{Dir: filepath.Join(tmp, "cache")}
	job := func(out string) Job {
		return Job{Source: Source{Demo: true}, Out: filepath.Join(tmp, out), Options: Options{Seed: 5}}
	}
	if _, err := RunCached(ctx, job("a"), cache); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(cache.Dir, "*.drift"))
	if len(names) != 1 {
		t.Fatalf("entries: %v", names)
	}
	b, _ := os.ReadFile(names[0])
	b[len(b)-10] ^= 1
	os.WriteFile(names[0], b, 0o644)
	r, err := RunCached(ctx, job("b"), cache)
	if err != nil || r.Reused != nil {
		t.Fatalf("over a damaged entry: %+v %v", r, err)
	}
	sameFolders(t, "the drift made again", filepath.Join(tmp, "a"), filepath.Join(tmp, "b"))
	if r, err := RunCached(ctx, job("c"), cache); err != nil || r.Reused == nil {
		t.Fatalf("the replaced entry: %+v %v", r, err)
	}
}

// TestRunCachedNamesItsFolder: a source whose files hold the absolute
// path of --out gives an output naming its folder: not stored.
func TestRunCachedNamesItsFolder(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	cache := &Cache{Dir: filepath.Join(tmp, "cache")}
	src := filepath.Join(tmp, "src")
	out := filepath.Join(tmp, "out")
	if _, err := Run(ctx, Job{Source: Source{Demo: true}, Out: src, Options: Options{Seed: 1}}); err != nil {
		t.Fatal(err)
	}
	c, err := toolenv.ReadCollection(src)
	if err != nil {
		t.Fatal(err)
	}
	c.Description = "written for " + out
	if err := toolenv.WriteCollection(src, c); err != nil {
		t.Fatal(err)
	}
	if _, err := RunCached(ctx, Job{Source: Source{In: src}, Out: out, Options: Options{Seed: 2}}, cache); err != nil {
		t.Fatal(err)
	}
	if names, _ := filepath.Glob(filepath.Join(cache.Dir, "*.drift")); len(names) != 0 {
		t.Errorf("an output naming its folder was stored: %v", names)
	}
}

// TestCacheKeyCoversJob: every field of Job, Source and Options is in
// the key or said not to shape the output; a new field fails here until
// it is one or the other.
func TestCacheKeyCoversJob(t *testing.T) {
	keyed := map[string]bool{
		"In": true, "ToolBench": true, "OpenAPI": true, "Demo": true, "Tasks": true, "Rules": true,
		"Seed": true, "Operators": true, "Rates": true, "Version": true, "Validation": true, "Mode": true, "Feedback": true,
		"Out": true, // where it lies from the inputs
	}
	unkeyed := map[string]string{
		"Force":   "lets --out be replaced; the output is the same",
		"Logger":  "logging only",
		"Source":  "embedded: its fields are checked",
		"Options": "embedded: its fields are checked",
	}
	for _, typ := range []reflect.Type{reflect.TypeOf(Job{}), reflect.TypeOf(Source{}), reflect.TypeOf(Options{})} {
		for i := 0; i < typ.NumField(); i++ {
			name := typ.Field(i).Name
			if typ == reflect.TypeOf(Options{}) && (name == "Rules" || name == "Tasks") {
				continue // set in code: such a job is not cached (cacheable)
			}
			if !keyed[name] && unkeyed[name] == "" {
				t.Errorf("%s.%s is neither keyed nor said not to shape the output", typ.Name(), name)
			}
		}
	}
	id := "prog"
	base := Job{Source: Source{Demo: true}, Out: "out/a", Options: Options{Seed: 1}}
	k0, err := base.key(id)
	if err != nil {
		t.Fatal(err)
	}
	for name, j := range map[string]Job{
		"seed":       {Source: Source{Demo: true}, Out: "out/a", Options: Options{Seed: 2}},
		"operators":  {Source: Source{Demo: true}, Out: "out/a", Options: Options{Seed: 1, Operators: []string{"rename"}}},
		"rates":      {Source: Source{Demo: true}, Out: "out/a", Options: Options{Seed: 1, Rates: map[string]float64{"rename": 0.5}}},
		"version":    {Source: Source{Demo: true}, Out: "out/a", Options: Options{Seed: 1, Version: "v9"}},
		"validation": {Source: Source{Demo: true}, Out: "out/a", Options: Options{Seed: 1, Validation: "lenient"}},
		"mode":       {Source: Source{Demo: true}, Out: "out/a", Options: Options{Seed: 1, Mode: "compat"}},
		"feedback":   {Source: Source{Demo: true}, Out: "out/a", Options: Options{Seed: 1, Feedback: "terse"}},
	} {
		k, err := j.key(id)
		if err != nil || k == k0 {
			t.Errorf("%s: the key did not change (%v)", name, err)
		}
	}
	if k, _ := base.key("other prog"); k == k0 {
		t.Error("another program has the same key")
	}
}
