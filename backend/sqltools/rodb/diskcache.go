package rodb

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolenv/toolenv/internal/foldercache"
)

// CacheEnv is the environment variable that names the folder of the
// image cache (DiskCache) when no flag or configuration key does; "off"
// turns the cache off.
const CacheEnv = "TOOLENV_IMAGE_CACHE"

// CacheOff, as the cache folder, turns the image cache off.
const CacheOff = "off"

// DefaultCacheMaxBytes is the image cache's size cap when
// DiskCache.MaxBytes is 0.
const DefaultCacheMaxBytes = 4 << 30

// indexRules versions how indexedImage indexes a database: change it
// whenever indexedImage would make a different image of the same file,
// so that no image made by the old rules is served.
const indexRules = 1

// DiskCache keeps the indexed images Open makes (see Options.InMemoryMaxBytes)
// in a folder, so that every process opening the same database — each
// toolenv serve, eval or map, each test — reads the image instead of
// copying and indexing the database again.
//
// An image is stored under the SHA-256 of the database file's content
// together with the version of the indexing rules and SQLite's, so a
// changed file (whatever its size and modification time) never finds the
// image of its old content, and a new toolenv never serves an image its
// rules would not make. Each file holds the image's length and SHA-256,
// checked on every read: a truncated or damaged file is removed and the
// image made again, never served. Files are written to a temporary name
// and renamed into place, so processes building the same image at once
// (or one killed while writing) never leave a partial image under the
// final name. The folder is kept under MaxBytes by removing the images
// used least recently. A failure to read or write the folder is logged
// and the image made in memory as without a cache: the cache never fails
// an open. A DiskCache is safe for concurrent use, by any number of
// processes.
type DiskCache struct {
	// Dir is the folder of the cache (created when missing).
	Dir string
	// MaxBytes caps the folder's images; 0 means DefaultCacheMaxBytes, a
	// negative value no cap.
	MaxBytes int64
	// Logger is told about damaged images and folders that cannot be
	// written (warn) and about hits and builds (debug); nil discards.
	Logger *slog.Logger
}

// DefaultCacheDir is the folder of the image cache when no flag or key
// names one: $TOOLENV_IMAGE_CACHE (CacheEnv) when set, else
// toolenv/images in the user's cache folder (os.UserCacheDir), else in
// the system's temporary folder.
func DefaultCacheDir() string {
	if d := os.Getenv(CacheEnv); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "toolenv", "images")
	}
	return filepath.Join(os.TempDir(), "toolenv-images")
}

// CacheAt returns the cache in folder dir, or nil (no cache) for "" and
// CacheOff.
func CacheAt(dir string, logger *slog.Logger) *DiskCache {
	if dir = strings.TrimSpace(dir); dir == "" || dir == CacheOff {
		return nil
	}
	return &DiskCache{Dir: dir, Logger: logger}
}

// The file format: magic, the key, the image's length (little-endian),
// the image's SHA-256, then the image.
var imageMagic = [8]byte{'t', 'o', 'o', 'l', 'i', 'm', 'g', 1}

const headerLen = 8 + sha256.Size + 8 + sha256.Size

func (c *DiskCache) log() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// contentKey is the SHA-256 of rules and the content of the file at path.
func contentKey(path, rules string) ([sha256.Size]byte, error) {
	var key [sha256.Size]byte
	f, err := os.Open(path)
	if err != nil {
		return key, err
	}
	defer f.Close()
	h := sha256.New()
	fmt.Fprintf(h, "toolenv rodb image\x00%s\x00", rules)
	if _, err := io.Copy(h, f); err != nil {
		return key, err
	}
	copy(key[:], h.Sum(nil))
	return key, nil
}

// image returns the image of the database file at path made under rules:
// the cached one when it is there and intact, else build's, which it
// stores.
func (c *DiskCache) image(ctx context.Context, path, rules string, build func(context.Context) ([]byte, error)) ([]byte, error) {
	log := c.log()
	key, err := contentKey(path, rules)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	name := filepath.Join(c.Dir, hex.EncodeToString(key[:])+".img")
	if img, err := readImage(name, key); err == nil {
		now := time.Now()
		_ = os.Chtimes(name, now, now) // least recently used goes first
		log.Debug("database image from the cache", "db", path, "image", name)
		return img, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		log.Warn("cached database image is damaged; making it again", "image", name, "err", err)
		_ = os.Remove(name)
	}
	img, err := build(ctx)
	if err != nil {
		return nil, err
	}
	// A file changed while it was indexed must not store its image under
	// the old content's key.
	if again, err := contentKey(path, rules); err != nil || again != key {
		log.Warn("database changed while it was indexed; its image is not cached", "db", path)
		return img, nil
	}
	if err := c.store(name, key, img); err != nil {
		log.Warn("cannot write the database image cache; set --image-cache to a writable folder or \"off\"", "dir", c.Dir, "err", err)
		return img, nil
	}
	log.Debug("database image cached", "db", path, "image", name, "bytes", len(img))
	c.evict(name)
	return img, nil
}

// readImage reads and checks the image file at name.
func readImage(name string, key [sha256.Size]byte) ([]byte, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	if len(b) < headerLen || !bytes.Equal(b[:8], imageMagic[:]) {
		return nil, fmt.Errorf("not a toolenv image file (%d bytes)", len(b))
	}
	if !bytes.Equal(b[8:8+sha256.Size], key[:]) {
		return nil, errors.New("the file holds the image of another database")
	}
	n := binary.LittleEndian.Uint64(b[8+sha256.Size:])
	img := b[headerLen:]
	if uint64(len(img)) != n {
		return nil, fmt.Errorf("image of %d bytes, header says %d (truncated?)", len(img), n)
	}
	if sum := sha256.Sum256(img); !bytes.Equal(sum[:], b[8+sha256.Size+8:headerLen]) {
		return nil, errors.New("the image does not match its checksum")
	}
	return img, nil
}

// store writes the image to a temporary file and renames it to name.
func (c *DiskCache) store(name string, key [sha256.Size]byte, img []byte) error {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(c.Dir, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	hdr := make([]byte, 0, headerLen)
	hdr = append(hdr, imageMagic[:]...)
	hdr = append(hdr, key[:]...)
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(img)))
	sum := sha256.Sum256(img)
	hdr = append(hdr, sum[:]...)
	_, err = f.Write(hdr)
	if err == nil {
		_, err = f.Write(img)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// evict removes the least recently used images (never keep, the one just
// written) while the folder's images exceed the cap, and temporary files
// left by killed writers: foldercache's eviction, the images being
// entries of their own kind (.img) in a folder of their own.
func (c *DiskCache) evict(keep string) {
	limit := c.MaxBytes
	if limit == 0 {
		limit = DefaultCacheMaxBytes
	}
	(&foldercache.Cache{Dir: c.Dir, Ext: ".img", Logger: c.log()}).Evict(keep, limit)
}
