package foldercache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func testCache(t *testing.T) *Cache {
	return &Cache{Dir: filepath.Join(t.TempDir(), "cache"), Ext: ".test", Magic: [8]byte{'t', 'e', 's', 't', 'c', 'a', 'c', 1}}
}

// TestStoreRead: what is stored reads back byte for byte, for entries
// of random shapes (no files, empty files, names in folders, binary
// contents).
func TestStoreRead(t *testing.T) {
	c := testCache(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 50; i++ {
		key := NewHasher("test", 1)
		key.String("i", fmt.Sprint(i))
		k := key.Sum()
		meta := []byte(fmt.Sprintf(`{"i":%d}`, i))
		var files []File
		for j := 0; j < rng.IntN(5); j++ {
			data := make([]byte, rng.IntN(3000))
			for b := range data {
				data[b] = byte(rng.IntN(256))
			}
			files = append(files, File{Name: fmt.Sprintf("d%d/f%d.bin", j%2, j), Data: data})
		}
		if _, err := c.Store(k, meta, files); err != nil {
			t.Fatal(err)
		}
		gotMeta, got, err := c.Read(k)
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if !bytes.Equal(gotMeta, meta) || len(got) != len(files) {
			t.Fatalf("entry %d: meta %s, %d files; want %s, %d", i, gotMeta, len(got), meta, len(files))
		}
		for j := range files {
			if got[j].Name != files[j].Name || !bytes.Equal(got[j].Data, files[j].Data) {
				t.Fatalf("entry %d file %d differs", i, j)
			}
		}
	}
	if _, _, err := c.Read(Key{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing entry reads as %v, want fs.ErrNotExist", err)
	}
}

// TestDamagedEntriesAreErrors: every single-byte change, every cut and
// another kind's magic make Read fail; none is served.
func TestDamagedEntriesAreErrors(t *testing.T) {
	c := testCache(t)
	h := NewHasher("test", 1)
	k := h.Sum()
	if _, err := c.Store(k, []byte(`{}`), []File{{Name: "a.json", Data: []byte(`{"x": 1}`)}, {Name: "b/c.txt", Data: []byte("hello")}}); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(c.Path(k))
	if err != nil {
		t.Fatal(err)
	}
	write := func(b []byte) {
		if err := os.WriteFile(c.Path(k), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range good {
		b := bytes.Clone(good)
		b[i] ^= 0x01
		write(b)
		if _, _, err := c.Read(k); err == nil {
			t.Errorf("byte %d of %d changed: read without error", i, len(good))
		}
	}
	for n := 0; n < len(good); n += 7 {
		write(good[:n])
		if _, _, err := c.Read(k); err == nil {
			t.Errorf("cut to %d of %d bytes: read without error", n, len(good))
		}
	}
	write(good)
	other := *c
	other.Magic[7]++
	if _, _, err := other.Read(k); err == nil {
		t.Error("an entry of another format read without error")
	}
	if _, _, err := c.Read(k); err != nil {
		t.Errorf("the intact entry: %v", err)
	}
	c.Remove(k)
	if _, _, err := c.Read(k); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a removed entry reads as %v", err)
	}
}

// TestHasherFraming: inputs that differ anywhere give different keys,
// including moves of bytes between names and values.
func TestHasherFraming(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("xy"), 0o644)
	keys := map[Key]string{}
	add := func(what string, f func(h *Hasher)) {
		h := NewHasher("test", 1)
		f(h)
		k := h.Sum()
		if prev, dup := keys[k]; dup {
			t.Errorf("%s and %s have the same key", what, prev)
		}
		keys[k] = what
	}
	add("ab=c", func(h *Hasher) { h.String("ab", "c") })
	add("a=bc", func(h *Hasher) { h.String("a", "bc") })
	add("a= b", func(h *Hasher) { h.String("a", " b") })
	add("tree", func(h *Hasher) { h.Tree("in", dir) })
	add("tree named otherwise", func(h *Hasher) { h.Tree("other", dir) })
	add("format 2", func(h *Hasher) {})
	other := NewHasher("test", 2)
	if k := other.Sum(); keys[k] != "" {
		t.Error("format 2 has the key of an input of format 1")
	}
	os.WriteFile(filepath.Join(dir, "a"), []byte("xz"), 0o644)
	add("tree with a changed file", func(h *Hasher) { h.Tree("in", dir) })
	os.WriteFile(filepath.Join(dir, "b"), nil, 0o644)
	add("tree with an empty file added", func(h *Hasher) { h.Tree("in", dir) })
	os.Symlink(dir, filepath.Join(dir, "loop"))
	if err := NewHasher("test", 1).Tree("in", dir); !errors.Is(err, ErrUncacheable) {
		t.Errorf("a tree holding a link to a folder: %v, want ErrUncacheable", err)
	}
}

// TestEvictKeepsNewestAndOtherKinds: over the limit, the least recently
// used entries of the cache's kind go (never the one kept); another
// kind's entries count towards the size but stay.
func TestEvictKeepsNewestAndOtherKinds(t *testing.T) {
	c := testCache(t)
	other := &Cache{Dir: c.Dir, Ext: ".other", Magic: [8]byte{'o'}}
	var names []string
	for i := 0; i < 5; i++ {
		h := NewHasher("test", 1)
		h.String("i", fmt.Sprint(i))
		name, err := c.Store(h.Sum(), nil, []File{{Name: "f", Data: make([]byte, 1000)}})
		if err != nil {
			t.Fatal(err)
		}
		used := time.Now().Add(time.Duration(i-10) * time.Minute)
		os.Chtimes(name, used, used)
		names = append(names, name)
	}
	otherName, err := other.Store(NewHasher("other", 1).Sum(), nil, []File{{Name: "f", Data: make([]byte, 1000)}})
	if err != nil {
		t.Fatal(err)
	}
	size := func(n string) int64 { st, _ := os.Stat(n); return st.Size() }
	limit := 3*size(names[0]) + size(otherName)
	c.Evict(names[0], limit)
	for i, n := range names {
		_, err := os.Stat(n)
		gone := errors.Is(err, fs.ErrNotExist)
		if want := i == 1 || i == 2; gone != want {
			t.Errorf("entry %d (used %d min ago): gone %v, want %v", i, 10-i, gone, want)
		}
	}
	if _, err := os.Stat(otherName); err != nil {
		t.Errorf("another kind's entry was removed: %v", err)
	}
}

// TestLockWaitsAndCancels: while one holder has a key's lock another
// waits, and gives up with ctx's error when ctx ends; once the holder
// lets go, the next takes it.
func TestLockWaitsAndCancels(t *testing.T) {
	c := testCache(t)
	k := NewHasher("test", 1).Sum()
	unlock, err := c.Lock(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		u, err := c.Lock(ctx, k)
		if err == nil {
			u()
		}
		got <- err
	}()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("a wait for a held lock ended with %v, want context.Canceled", err)
	}
	unlock()
	u, err := c.Lock(context.Background(), k)
	if err != nil {
		t.Fatalf("the lock let go could not be taken: %v", err)
	}
	u()
}

// TestMentions: a folder's absolute path in a file is a mention, the
// same path as the tail of a relative one is not.
func TestMentions(t *testing.T) {
	for _, tc := range []struct {
		data string
		want bool
	}{
		{`{"db": "/work/data/x.sqlite"}`, true},
		{`{"db": "../../work/data/x.sqlite"}`, false},
		{`{"db": "../../work/data/x", "log": "/work/data/y"}`, true},
		{`/work/data`, true},
		{`{}`, false},
	} {
		if got := Mentions([]byte(tc.data), "/work/data"); got != tc.want {
			t.Errorf("Mentions(%s) = %v, want %v", tc.data, got, tc.want)
		}
	}
}
