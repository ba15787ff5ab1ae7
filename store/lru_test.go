package store

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// TestResolvedExactKeyFromMemory: an exact key resolved to a canonical
// entry is answered from memory (another process's later entry under
// that exact key is not read yet), until the resolution expires; then
// the lookup reads the database again and finds the new entry.
func TestResolvedExactKeyFromMemory(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	a, err := OpenSQLite(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenSQLite(ctx, path, Options{MemoryBytes: -1}) // another process
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const tool, args, exact = "c/t", `{"a":1}`, "{'a': 1}"
	body := func(s string) *Entry {
		return &Entry{Tool: tool, Args: args, Status: toolenv.StatusOK, Body: json.RawMessage(s), Origin: "simulator"}
	}
	if _, err := b.Put(ctx, body(`"canonical"`)); err != nil {
		t.Fatal(err)
	}
	get := func(what, want string) {
		t.Helper()
		e, ok, err := a.GetExact(ctx, tool, exact, args)
		if err != nil || !ok || string(e.Body) != want {
			t.Fatalf("%s: %+v ok=%v err=%v, want %s", what, e, ok, err, want)
		}
	}
	get("first lookup", `"canonical"`)
	if _, ok := a.mem.get(lruKey{tool, args, exact}); !ok {
		t.Fatal("the resolution is not kept in memory")
	}
	own := body(`"its own"`)
	own.Exact = exact
	if ok, err := b.Put(ctx, own); err != nil || !ok {
		t.Fatalf("other process's put: %v %v", ok, err)
	}
	get("within the resolution's lifetime", `"canonical"`)
	// Expire every resolution, as resolvedTTL passing does.
	for i := range a.mem.shards {
		for el := a.mem.shards[i].ll.Front(); el != nil; el = el.Next() {
			if it := el.Value.(*lruItem); it.expires != 0 {
				it.expires = 1
			}
		}
	}
	get("after the resolution expired", `"its own"`)
}

// TestSearchedUntilAnyWrite: a lenient search's result (Searched) is
// served from memory for the same (tool, exact, args), and is void after
// any write through the handle, or when the search began before a write.
func TestSearchedUntilAnyWrite(t *testing.T) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "s.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const tool, exact, sent = "c/t", "{'n': '1'}", `{"n":"1"}`
	put := func(tool, args string) {
		t.Helper()
		if _, err := s.Put(ctx, &Entry{Tool: tool, Args: args, Status: toolenv.StatusOK, Body: json.RawMessage(`"x"`), Origin: "simulator"}); err != nil {
			t.Fatal(err)
		}
	}
	found := func() bool {
		t.Helper()
		_, ok, err := s.GetExact(ctx, tool, exact, sent)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	put(tool, `{"n":1}`)
	w := s.Writes()
	e, ok, err := s.Get(ctx, tool, `{"n":1}`)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if found() {
		t.Fatal("the store holds nothing under the exact key or the sent arguments, yet GetExact found an entry")
	}
	s.Searched(tool, exact, sent, e, w)
	if !found() {
		t.Fatal("the search's result is not served")
	}
	put("c/other", `{}`) // any write may store an entry the search would have found first
	if found() {
		t.Fatal("the search's result is served after a write")
	}
	s.Searched(tool, exact, sent, e, w) // begun before that write
	if found() {
		t.Fatal("a search begun before a write is served after it")
	}
}
