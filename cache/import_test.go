package cache_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/cache"
	"github.com/toolenv/toolenv/internal/pgtest"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/toolbench"
	"github.com/toolenv/toolenv/toolbench/toolbenchtest"
	"github.com/toolenv/toolenv/validate"
)

// TestImportStoresEachEntryAsRecorded pins what cache import stores,
// byte for byte, on generated adversarial ToolBench tool sets and
// StableToolBench caches (keys in any order, ints beside strings of their
// digits, Unicode Python escapes, NaN keys and answers, recorded errors,
// colliding names, files cut short): the store holds exactly one entry
// per importable (tool, recorded key), the first in the import's order,
// with the tool the docs resolve the file's names to, the canonical JSON
// of the key's arguments after the pipeline's lenient validation, the
// recorded key as its exact key, and the recorded answer's bytes (NaN and
// the infinities as null), in SQLite and in PostgreSQL. The expectations come from the generator's own
// record of each entry, not from the importer's reader, so a faster
// reader cannot silently change a key, an argument or an answer.
func TestImportStoresEachEntryAsRecorded(t *testing.T) {
	stores := []struct {
		name  string
		open  func(t *testing.T) string
		seeds uint64
	}{
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "store.db") }, 6},
		{"postgres", func(t *testing.T) string { return pgtest.DB(t) }, 2},
	}
	for _, sk := range stores {
		for seed := uint64(1); seed <= sk.seeds; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", sk.name, seed), func(t *testing.T) {
				testImportAsRecorded(t, seed, sk.open(t), false)
			})
		}
	}
	// An import that stopped midway (the store failed after its first
	// batch) and ran again stores what one uninterrupted run stores.
	for seed := uint64(2); seed <= 4; seed += 2 {
		t.Run(fmt.Sprintf("sqlite/seed%d/resumed", seed), func(t *testing.T) {
			testImportAsRecorded(t, seed, filepath.Join(t.TempDir(), "store.db"), true)
		})
	}
}

func testImportAsRecorded(t *testing.T, seed uint64, dsn string, resume bool) {
	ctx := context.Background()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(seed, 29))
	toolsDir, cacheDir := filepath.Join(dir, "tools"), filepath.Join(dir, "cache")
	set, err := toolbenchtest.WriteToolSet(toolsDir, rng, toolbenchtest.Options{Tools: 30, MaxEntries: 40})
	if err != nil {
		t.Fatal(err)
	}
	gen, err := toolbenchtest.WriteCache(cacheDir, set, rng, toolbenchtest.Options{MaxEntries: 40})
	if err != nil {
		t.Fatal(err)
	}
	src, err := toolbench.Load(toolsDir)
	if err != nil {
		t.Fatal(err)
	}
	coll := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{Name: "toolbench"})
	want := expectedEntries(t, coll, gen)

	st, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Odd seeds import in one transaction, even ones in many small ones
	// (entries of one key in different batches).
	opts := cache.ImportOptions{Docs: coll}
	if seed%2 == 0 {
		opts.Batch = 40
	}
	before := 0
	if resume {
		if _, err := cache.Import(ctx, &failingStore{Store: st}, cacheDir, opts); err == nil {
			t.Fatal("the import into a store failing after one batch did not fail")
		}
		s, err := st.Stats(ctx)
		if err != nil || s.Entries == 0 {
			t.Fatalf("after the first batch: %+v %v", s, err)
		}
		before = int(s.Entries)
	}
	rep, err := cache.Import(ctx, st, cacheDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	rep.Imported += before // what the stopped run stored
	got := map[[2]string]*store.Entry{}
	if err := st.Each(ctx, func(e *store.Entry) error {
		k := [2]string{e.Tool, e.Exact}
		if got[k] != nil {
			t.Errorf("two entries of %s under key %s", e.Tool, e.Exact)
		}
		got[k] = e
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if rep.Imported != len(want) || len(got) != len(want) {
		t.Errorf("imported %d entries (store holds %d), want %d (report %+v)", rep.Imported, len(got), len(want), rep)
	}
	for k, w := range want {
		g := got[k]
		switch {
		case g == nil:
			t.Errorf("%s %s: not in the store", k[0], k[1])
		case g.Args != w.Args || g.Status != w.Status || string(g.Body) != string(w.Body) || g.Error != w.Error || g.Origin != "import":
			t.Errorf("%s %s: stored args %s status %s error %q body %s;\nwant args %s status %s error %q body %s",
				k[0], k[1], g.Args, g.Status, g.Error, g.Body, w.Args, w.Status, w.Error, w.Body)
		}
	}
}

// expectedEntries is what importing gen must store, keyed by tool and
// exact key, worked out from the generator's record of each entry: the
// file's names resolved against coll, the key parsed as a Python
// literal, validated leniently and made canonical.
func expectedEntries(t *testing.T, coll *toolenv.Collection, gen []*toolbenchtest.Entry) map[[2]string]*store.Entry {
	t.Helper()
	ix := toolbench.NewIndex(coll)
	var v validate.Validator
	// The import's order: file by file, each file's entries by key.
	gen = slices.Clone(gen)
	slices.SortStableFunc(gen, func(a, b *toolbenchtest.Entry) int {
		if c := strings.Compare(filepath.ToSlash(a.File), filepath.ToSlash(b.File)); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	want := map[[2]string]*store.Entry{}
	for _, e := range gen {
		if !e.Imported() {
			continue
		}
		parts := strings.Split(filepath.ToSlash(e.File), "/")
		cat, api := parts[0], strings.TrimSuffix(parts[2], ".json")
		tool := strings.TrimSuffix(parts[1], "_for_"+cat)
		pv, err := toolbench.ParsePyLiteral(e.Key)
		if err != nil {
			t.Fatalf("generated key %s: %v", e.Key, err)
		}
		args := pv.(map[string]any)
		id := toolenv.ToolID("toolbench", (&toolbench.CacheRecord{Tool: tool, API: api}).FunctionName())
		if tl, err := ix.Resolve(cat, tool, api); err == nil {
			id = tl.ID
			args = v.Args(tl.Input, args, coll.Policy.Validation != toolenv.ValidationStrict).Args
		}
		canon, err := toolenv.Canonical(args)
		if err != nil {
			continue
		}
		k := [2]string{id, e.Key}
		if want[k] != nil {
			continue // the first one stored is kept
		}
		status := toolenv.StatusOK
		if e.Error != "" {
			status = toolenv.StatusUpstreamError
		}
		want[k] = &store.Entry{Tool: id, Args: string(canon), Exact: e.Key, Status: status, Body: e.Want, Error: e.Error}
	}
	return want
}

// TestMain stops the PostgreSQL server the tests share.
func TestMain(m *testing.M) { pgtest.Main(m) }
