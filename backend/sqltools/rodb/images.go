package rodb

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Images keeps the indexed in-memory images Open makes of database files,
// so that a program opening the same database several times (one
// environment per setting of a measurement, each with its backends)
// copies and indexes it once. An image is kept for a file's absolute path
// while its size and modification time stay the same; a file that
// changed is indexed again. The zero value is ready to use, and an Images
// is safe for concurrent use; give the same one to every Open (through
// Options.Images) that may share. Images holds the images until it is
// dropped.
type Images struct {
	mu      sync.Mutex
	entries map[string]*imageEntry
}

type imageEntry struct {
	size    int64
	modTime time.Time
	once    sync.Once
	img     []byte
	err     error
}

// get returns the image of the file at abs (of info st), made by build
// once per version of the file; an error is not kept (the next open
// tries again).
func (m *Images) get(ctx context.Context, abs string, st os.FileInfo, build func(context.Context) ([]byte, error)) ([]byte, error) {
	m.mu.Lock()
	if m.entries == nil {
		m.entries = map[string]*imageEntry{}
	}
	e := m.entries[abs]
	if e == nil || e.size != st.Size() || !e.modTime.Equal(st.ModTime()) {
		e = &imageEntry{size: st.Size(), modTime: st.ModTime()}
		m.entries[abs] = e
	}
	m.mu.Unlock()
	e.once.Do(func() { e.img, e.err = build(ctx) })
	if e.err != nil {
		m.mu.Lock()
		if m.entries[abs] == e {
			delete(m.entries, abs)
		}
		m.mu.Unlock()
		return nil, e.err
	}
	return e.img, nil
}

// imageRecipe names how indexedImage makes an image: change it whenever
// the indexes or statistics it adds change, so that images kept in an
// ImageDir by an older build are not used.
const imageRecipe = "toolenv rodb indexed image 1: an index on every column, ANALYZE\n"

// DefaultImageDir is the folder where programs keep indexed images
// between runs: toolenv/db-images in the user's cache folder
// ($XDG_CACHE_HOME, else ~/.cache), or "" (none kept) when there is none.
func DefaultImageDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "toolenv", "db-images")
}

// keptImage returns the image of the database file at abs kept in dir,
// else makes it with build and keeps it there. An image is kept under the
// SHA-256 of the file's bytes and of imageRecipe, followed by the SHA-256
// of the image, which is checked when it is read: a kept image that is
// torn or altered is made again (and replaced). Failing to keep one only
// logs: the image made is returned.
func keptImage(ctx context.Context, dir, abs string, log *slog.Logger, build func(context.Context) ([]byte, error)) ([]byte, error) {
	raw, err := os.ReadFile(abs)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	h.Write([]byte(imageRecipe))
	h.Write(raw)
	path := filepath.Join(dir, hex.EncodeToString(h.Sum(nil))+".sqlite-image")
	if kept, err := os.ReadFile(path); err == nil && len(kept) > sha256.Size {
		img, sum := kept[:len(kept)-sha256.Size], kept[len(kept)-sha256.Size:]
		if s := sha256.Sum256(img); bytes.Equal(s[:], sum) {
			log.Debug("indexed image read from the image folder", "file", abs, "image", path)
			return img, nil
		}
		log.Warn("a kept indexed image does not match its checksum: making it again", "image", path)
	}
	img, err := build(ctx)
	if err != nil {
		return nil, err
	}
	if err := keepImage(dir, path, img); err != nil {
		log.Warn("cannot keep the indexed image for the next run", "image", path, "err", err)
	}
	return img, nil
}

// keepImage writes img and its checksum to path through a temporary file
// renamed into place, so that a reader never sees half an image.
func keepImage(dir, path string, img []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	sum := sha256.Sum256(img)
	_, err = f.Write(append(append(make([]byte, 0, len(img)+len(sum)), img...), sum[:]...))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
