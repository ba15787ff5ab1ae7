package rodb

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/toolenv/toolenv/internal/shareddata"
)

// TestImagesShareOnePerFileVersion: an image is made once per file
// however many opens ask for it at once; a file whose size or
// modification time changed is made again; a failure is returned to
// every waiting open and not kept.
func TestImagesShareOnePerFileVersion(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.sqlite")
	if err := os.WriteFile(path, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	builds := 0
	build := func(context.Context) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		builds++
		b, err := os.ReadFile(path)
		return append([]byte("image of "), b...), err
	}
	stat := func() os.FileInfo {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	var m Images
	var wg sync.WaitGroup
	imgs := make([][]byte, 8)
	for i := range imgs {
		wg.Go(func() {
			img, err := m.get(ctx, path, stat(), build)
			if err != nil {
				t.Error(err)
			}
			imgs[i] = img
		})
	}
	wg.Wait()
	for _, img := range imgs {
		if string(img) != "image of one" {
			t.Fatalf("image %q, want %q", img, "image of one")
		}
	}
	if builds != 1 {
		t.Fatalf("%d builds for 8 opens of one file, want 1", builds)
	}
	if err := os.WriteFile(path, []byte("two!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, time.Now(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if img, err := m.get(ctx, path, stat(), build); err != nil || string(img) != "image of two!" || builds != 2 {
		t.Fatalf("after the file changed: %q, %v, %d builds; want the new image, made again", img, err, builds)
	}
	boom := errors.New("boom")
	other := filepath.Join(t.TempDir(), "b.sqlite")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(other)
	if _, err := m.get(ctx, other, st, func(context.Context) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("failed build: err %v, want boom", err)
	}
	if img, err := m.get(ctx, other, st, func(context.Context) ([]byte, error) { return []byte("ok"), nil }); err != nil || string(img) != "ok" {
		t.Fatalf("after a failed build: %q, %v; want a new build", img, err)
	}
}

// TestKeptImage: an image kept in the folder is read back by the next
// program instead of being made again; one torn or altered is made again
// and replaced; another database file (or another content) has its own.
func TestKeptImage(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "images")
	src := filepath.Join(t.TempDir(), "a.sqlite")
	if err := os.WriteFile(src, []byte("database bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	builds := 0
	build := func(context.Context) ([]byte, error) { builds++; return []byte("the image"), nil }
	log := slog.New(slog.DiscardHandler)
	for i := range 2 {
		img, err := keptImage(ctx, dir, src, log, build)
		if err != nil || string(img) != "the image" {
			t.Fatalf("run %d: %q, %v", i, img, err)
		}
	}
	if builds != 1 {
		t.Fatalf("%d builds over two runs, want 1 (the second reads the kept image)", builds)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, "*.sqlite-image"))
	if len(kept) != 1 {
		t.Fatalf("kept images %v, want one", kept)
	}
	for name, corrupt := range map[string]func([]byte) []byte{
		"torn":    func(b []byte) []byte { return b[:len(b)-3] },
		"altered": func(b []byte) []byte { b[0] ^= 1; return b },
		"empty":   func([]byte) []byte { return nil },
	} {
		raw, err := os.ReadFile(kept[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(kept[0], corrupt(raw), 0o644); err != nil {
			t.Fatal(err)
		}
		before := builds
		if img, err := keptImage(ctx, dir, src, log, build); err != nil || string(img) != "the image" || builds != before+1 {
			t.Fatalf("%s kept image: %q, %v, %d builds; want the image made again", name, img, err, builds-before)
		}
		if img, _ := keptImage(ctx, dir, src, log, build); string(img) != "the image" || builds != before+1 {
			t.Fatalf("%s kept image was not replaced", name)
		}
	}
	if err := os.WriteFile(src, []byte("other bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := builds
	if _, err := keptImage(ctx, dir, src, log, build); err != nil || builds != before+1 {
		t.Fatalf("changed database: %v, %d builds; want its own image made", err, builds-before)
	}
}

// TestOpenKeptImage: a database opened from its kept image answers as
// the one indexed in this program.
func TestOpenKeptImage(t *testing.T) {
	path := studentClubPath(t)
	ctx := context.Background()
	dir := t.TempDir()
	for i := range 2 {
		db, err := Open(ctx, "student_club", path, Options{ImageDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		n, err := db.QueryValue(ctx, `SELECT COUNT(*) FROM zip_code WHERE state = ?`, []any{"New Jersey"})
		db.Close()
		if err != nil || n != int64(732) || !db.InMemory {
			t.Fatalf("open %d: count %v, %v, in memory %v; want 732 from memory", i, n, err, db.InMemory)
		}
	}
	if kept, _ := filepath.Glob(filepath.Join(dir, "*.sqlite-image")); len(kept) != 1 {
		t.Fatalf("kept images %v, want one", kept)
	}
}

func studentClubPath(t testing.TB) string {
	return shareddata.Require(t, "bird", "dev_databases", "student_club", "student_club.sqlite")
}
