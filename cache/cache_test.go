package cache_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/cache"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/toolbench"
)

// writeCache writes n entries of one API in StableToolBench's layout.
func writeCache(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	var recs []*toolbench.CacheRecord
	for i := range n {
		args := map[string]any{"page": i}
		recs = append(recs, &toolbench.CacheRecord{Category: "Data", Tool: "items", API: "list", Args: args,
			Key: toolbench.PyRepr(args), Response: json.RawMessage(fmt.Sprintf(`"item %d"`, i))})
	}
	if _, err := toolbench.WriteCache(dir, recs); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestImportStreamsEveryEntry: entries are written in several batches
// (more than one transaction's worth), each once; importing again keeps
// them.
func TestImportStreamsEveryEntry(t *testing.T) {
	ctx := context.Background()
	const n = 12345
	dir := writeCache(t, n)
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rep, err := cache.Import(ctx, st, dir, cache.ImportOptions{Batch: 1000})
	if err != nil || rep.Entries != n || rep.Imported != n || rep.Kept != 0 {
		t.Fatalf("import: %+v %v", rep, err)
	}
	s, err := st.Stats(ctx)
	if err != nil || s.Entries != n {
		t.Fatalf("stats %+v %v, want %d entries", s, err, n)
	}
	e, ok, err := st.GetExact(ctx, "toolbench/list_for_items", "{'page': 9876}", `{"page":9876}`)
	if err != nil || !ok || string(e.Body) != `"item 9876"` {
		t.Fatalf("entry 9876: %+v %v %v", e, ok, err)
	}
	rep, err = cache.Import(ctx, st, dir, cache.ImportOptions{Batch: 1000})
	if err != nil || rep.Imported != 0 || rep.Kept != n {
		t.Fatalf("import again: %+v %v", rep, err)
	}
}

// failingStore refuses writes after the first batch.
type failingStore struct {
	store.Store
	calls int
}

func (f *failingStore) PutMany(ctx context.Context, entries []*store.Entry, overwrite bool) (int, error) {
	f.calls++
	if f.calls > 1 {
		return 0, errors.New("cache put: database or disk is full (13)")
	}
	return f.Store.PutMany(ctx, entries, overwrite)
}

// TestImportStopsWhenTheStoreFails: a write error ends the import with
// that error (the reader stops; nothing hangs).
func TestImportStopsWhenTheStoreFails(t *testing.T) {
	ctx := context.Background()
	dir := writeCache(t, 30000)
	st, err := store.Open(ctx, ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = cache.Import(ctx, &failingStore{Store: st}, dir, cache.ImportOptions{Batch: 5000})
	if err == nil || !strings.Contains(err.Error(), "disk is full") {
		t.Fatalf("import into a failing store: %v", err)
	}
}
