package rodb

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
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
