// Package foldercache keeps the output folders of toolenv's deterministic
// commands (toolenv build bird, toolenv drift) in a folder of entries,
// each stored under the SHA-256 of everything its output depends on, so
// that the same command asked again writes the stored output instead of
// making it again.
//
// An entry is one file: a magic that names its kind, its key, its
// payload's length and SHA-256, then the payload (the caller's meta,
// JSON, and the output's files, each a length-prefixed name and
// content). Every read checks all of it: a damaged entry is an error,
// never served. Entries are written to a temporary name and renamed into
// place, so writers of the same entry never leave a partial one; Lock
// serializes the makers of one key, across processes, so that identical
// commands started at once make the output once. Evict keeps the folder
// under a size by removing the entries used least recently.
//
// What goes into a key is the caller's: Hasher helps write it (the
// program's identity, options, the contents of input folders and files).
package foldercache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
)

// Env is the environment variable that names the folder of finished
// outputs (builds and drifts) when no flag or configuration key does;
// Off, as the folder, turns the cache off.
const (
	Env = "TOOLENV_BUILD_CACHE"
	Off = "off"
)

// DefaultMaxBytes caps a cache folder's entries when its user sets no
// cap.
const DefaultMaxBytes = 1 << 30

// DefaultDir is the folder of finished outputs when no flag or key
// names one: $TOOLENV_BUILD_CACHE (Env) when set, else toolenv/builds in
// the user's cache folder (os.UserCacheDir), else in the system's
// temporary folder.
func DefaultDir() string {
	if d := os.Getenv(Env); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "toolenv", "builds")
	}
	return filepath.Join(os.TempDir(), "toolenv-builds")
}

// Key is an entry's key: the SHA-256 of what its output depends on.
type Key [sha256.Size]byte

// String is the key in hex.
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// File is one output file, its name relative to the output folder
// (slash-separated).
type File struct {
	Name string
	Data []byte
}

// Cache is a folder of entries of one kind. It is safe for concurrent
// use, by any number of processes.
type Cache struct {
	// Dir is the folder (created when missing).
	Dir string
	// Ext ends the entries' file names (".build", ".drift"): kinds that
	// share a folder evict each other's entries by their common size but
	// never read them.
	Ext string
	// Magic starts every entry: it names the kind and its format's
	// version (change it when the layout or the key's recipe changes).
	Magic [8]byte
	// Logger is told about evictions (debug); nil discards.
	Logger *slog.Logger
}

func (c *Cache) log() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// Path is the file of the entry under key.
func (c *Cache) Path(key Key) string { return filepath.Join(c.Dir, key.String()+c.Ext) }

const headerLen = 8 + sha256.Size + 8 + sha256.Size

// Read reads and checks the entry under key and marks it used. A
// missing entry is fs.ErrNotExist; a damaged one another error (the
// caller removes it with Remove and makes the output again).
func (c *Cache) Read(key Key) (meta []byte, files []File, err error) {
	name := c.Path(key)
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, nil, err
	}
	if len(b) < headerLen || !bytes.Equal(b[:8], c.Magic[:]) {
		return nil, nil, fmt.Errorf("not a toolenv %s entry (%d bytes)", strings.TrimPrefix(c.Ext, "."), len(b))
	}
	if !bytes.Equal(b[8:8+sha256.Size], key[:]) {
		return nil, nil, errors.New("the file holds another entry")
	}
	n := binary.LittleEndian.Uint64(b[8+sha256.Size:])
	p := b[headerLen:]
	if uint64(len(p)) != n {
		return nil, nil, fmt.Errorf("entry of %d bytes, header says %d (truncated?)", len(p), n)
	}
	if sum := sha256.Sum256(p); !bytes.Equal(sum[:], b[8+sha256.Size+8:headerLen]) {
		return nil, nil, errors.New("the entry does not match its checksum")
	}
	next := func() ([]byte, error) {
		l, k := binary.Uvarint(p)
		if k <= 0 || l > uint64(len(p)-k) {
			return nil, errors.New("the entry's contents are malformed")
		}
		v := p[k : k+int(l)]
		p = p[k+int(l):]
		return v, nil
	}
	if meta, err = next(); err != nil {
		return nil, nil, err
	}
	count, k := binary.Uvarint(p)
	if k <= 0 {
		return nil, nil, errors.New("the entry's contents are malformed")
	}
	p = p[k:]
	for i := uint64(0); i < count; i++ {
		nm, err := next()
		if err != nil {
			return nil, nil, err
		}
		data, err := next()
		if err != nil {
			return nil, nil, err
		}
		if name := string(nm); !filepath.IsLocal(filepath.FromSlash(name)) {
			return nil, nil, fmt.Errorf("the entry names a file outside the output folder: %q", name)
		}
		files = append(files, File{Name: string(nm), Data: data})
	}
	if len(p) != 0 {
		return nil, nil, errors.New("the entry's contents are malformed")
	}
	now := time.Now()
	_ = os.Chtimes(name, now, now) // least recently used goes first
	return meta, files, nil
}

// Remove removes the entry under key (a damaged one).
func (c *Cache) Remove(key Key) { _ = os.Remove(c.Path(key)) }

// Store writes the entry under key to a temporary file and renames it
// into place; it returns the entry's file.
func (c *Cache) Store(key Key, meta []byte, files []File) (string, error) {
	size := binary.MaxVarintLen64 * (2 + 2*len(files))
	size += len(meta)
	for _, f := range files {
		size += len(f.Name) + len(f.Data)
	}
	p := make([]byte, 0, size) // one allocation: entries are megabytes
	p = binary.AppendUvarint(p, uint64(len(meta)))
	p = append(p, meta...)
	p = binary.AppendUvarint(p, uint64(len(files)))
	for _, f := range files {
		p = binary.AppendUvarint(p, uint64(len(f.Name)))
		p = append(p, f.Name...)
		p = binary.AppendUvarint(p, uint64(len(f.Data)))
		p = append(p, f.Data...)
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return "", err
	}
	name := c.Path(key)
	f, err := os.CreateTemp(c.Dir, ".tmp-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	hdr := make([]byte, 0, headerLen)
	hdr = append(hdr, c.Magic[:]...)
	hdr = append(hdr, key[:]...)
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(p)))
	sum := sha256.Sum256(p)
	hdr = append(hdr, sum[:]...)
	_, err = f.Write(hdr)
	if err == nil {
		_, err = f.Write(p)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return name, nil
}

// Keep stores the entry under key (Store) and then keeps the folder
// under maxBytes (Evict; 0 means DefaultMaxBytes, negative no cap),
// never evicting the entry just stored. It returns the entry's file.
func (c *Cache) Keep(key Key, meta []byte, files []File, maxBytes int64) (string, error) {
	name, err := c.Store(key, meta, files)
	if err != nil {
		return "", err
	}
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	c.Evict(name, maxBytes)
	return name, nil
}

// Lock takes the lock of key's entry, waiting while another process or
// goroutine holds it: the maker of an output holds it until the entry
// is stored, so that identical commands started at once make the
// output once (the others, once they hold it, find the entry). It
// returns ctx's error when ctx ends first.
func (c *Cache) Lock(ctx context.Context, key Key) (unlock func(), err error) {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, err
	}
	return lockFile(ctx, c.Path(key)+".lock")
}

// StaleTemp is the age after which a temporary file is taken as left by
// a process killed while writing it.
const StaleTemp = time.Hour

// Evict removes the least recently used entries of this kind (never
// keep, the one just written) while the folder's entries of every kind
// exceed limit (negative: no limit), and temporary files and locks of
// entries gone older than StaleTemp.
func (c *Cache) Evict(keep string, limit int64) {
	entries, err := os.ReadDir(c.Dir)
	if err != nil {
		return
	}
	type file struct {
		name string
		size int64
		used time.Time
	}
	var files []file
	var total int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		name := filepath.Join(c.Dir, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), ".tmp-"):
			if time.Since(info.ModTime()) > StaleTemp {
				os.Remove(name)
			}
		case strings.HasSuffix(e.Name(), ".lock"):
			// An old lock of an entry gone: at worst two identical
			// commands then run at once, each correct.
			if _, err := os.Stat(strings.TrimSuffix(name, ".lock")); errors.Is(err, fs.ErrNotExist) && time.Since(info.ModTime()) > StaleTemp {
				os.Remove(name)
			}
		case strings.HasSuffix(e.Name(), c.Ext):
			files = append(files, file{name, info.Size(), info.ModTime()})
			total += info.Size()
		case isEntryName(e.Name()):
			total += info.Size() // another kind's: counted, not removed
		}
	}
	if limit < 0 || total <= limit {
		return
	}
	sort.Slice(files, func(i, j int) bool { return files[i].used.Before(files[j].used) })
	for _, f := range files {
		if total <= limit {
			break
		}
		if f.name == keep {
			continue
		}
		if err := os.Remove(f.name); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= f.size
			c.log().Debug("entry evicted from the cache", "entry", f.name, "bytes", f.size)
		}
	}
}

// isEntryName reports whether name is an entry's file name: a key in
// hex and an extension.
func isEntryName(name string) bool {
	i := strings.IndexByte(name, '.')
	if i != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(name[:i])
	return err == nil
}

// ErrUncacheable says an input cannot be keyed (a link to a folder, a
// device, a file that changed while it was read): the command runs
// without the cache.
var ErrUncacheable = errors.New("not cacheable")

// Hasher writes a key: strings and the contents of input files and
// folders, each framed so that no two different inputs write the same
// bytes.
type Hasher struct{ h hash.Hash }

// NewHasher starts a key with the kind's name and the format version of
// its recipe.
func NewHasher(kind string, format int) *Hasher {
	h := &Hasher{h: sha256.New()}
	fmt.Fprintf(h.h, "%s\x00format %d\x00", kind, format)
	return h
}

// String adds a named value.
func (h *Hasher) String(name, value string) {
	fmt.Fprintf(h.h, "%s %d %s\x00", name, len(value), value)
}

// Tree adds a file, or a folder's every file and folder (names relative
// to it, in the walk's order, and contents), links followed at the root
// only. A link to a folder below the root, or anything not a regular
// file, is ErrUncacheable.
func (h *Hasher) Tree(name, root string) error {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	fmt.Fprintf(h.h, "tree %q\x00", name)
	return filepath.WalkDir(real, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(real, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			fmt.Fprintf(h.h, "dir %q\x00", rel)
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%w: %s is not a regular file", ErrUncacheable, path)
		}
		fmt.Fprintf(h.h, "file %q %d\x00", rel, st.Size())
		n, err := io.Copy(h.h, f)
		if err != nil {
			return err
		}
		if n != st.Size() {
			return fmt.Errorf("%w: %s changed while it was read", ErrUncacheable, path)
		}
		return nil
	})
}

// Sum is the key.
func (h *Hasher) Sum() Key {
	var k Key
	copy(k[:], h.h.Sum(nil))
	return k
}

// RelFrom is where target lies from folder (slash-separated), or
// target's absolute path when there is no relative path: a key holds it
// when outputs name inputs by a path relative to themselves.
func RelFrom(folder, target string) (string, error) {
	absFolder, err := filepath.Abs(folder)
	if err != nil {
		return "", err
	}
	absTarget, err := filepath.Abs(target)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(absFolder, absTarget); err == nil {
		return filepath.ToSlash(rel), nil
	}
	return absTarget, nil
}

// Mentions reports whether data holds path, not as the tail of a
// relative path ("../../work/data" holds "/work/data" as the tail of a
// path relative to the output, which a key covers).
func Mentions(data []byte, path string) bool {
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte(path))
		if j < 0 {
			return false
		}
		if at := i + j; at == 0 || data[at-1] != '.' {
			return true
		}
		i += j + 1
	}
}

// FolderNames are the spellings of folders an output must not hold to
// be served elsewhere: their absolute paths (lexical and with links
// resolved), and out as given when it is relative.
func FolderNames(out string, others ...string) []string {
	var names []string
	add := func(p string) {
		if p != "" && p != "." && p != string(filepath.Separator) {
			names = append(names, p)
		}
	}
	for _, p := range append([]string{out}, others...) {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			add(abs)
			if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
				add(real)
			}
		}
	}
	if !filepath.IsAbs(out) {
		add(filepath.Clean(out))
	}
	return names
}

// Naming returns the first of files that holds one of names, and the
// name it holds.
func Naming(files []File, names []string) (file, name string, found bool) {
	for _, f := range files {
		for _, n := range names {
			if Mentions(f.Data, n) {
				return f.Name, n, true
			}
		}
	}
	return "", "", false
}

// ReadFolder reads every regular file under dir, named relative to it,
// in sorted order.
func ReadFolder(dir string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%w: %s is not a regular file", ErrUncacheable, path)
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files = append(files, File{Name: filepath.ToSlash(rel), Data: b})
		return nil
	})
	return files, err
}

// ReadFiles reads back paths (files under out), named relative to out,
// sorted, each once; skip leaves names out.
func ReadFiles(out string, paths []string, skip func(name string) bool) ([]File, error) {
	paths = append([]string(nil), paths...)
	sort.Strings(paths)
	var files []File
	seen := map[string]bool{}
	for _, p := range paths {
		rel, err := filepath.Rel(out, p)
		if err != nil || !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("%s is outside the output folder", p)
		}
		rel = filepath.ToSlash(rel)
		if seen[rel] || (skip != nil && skip(rel)) {
			continue
		}
		seen[rel] = true
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: rel, Data: b})
	}
	return files, nil
}

// WriteFiles writes files into out, each atomically.
func WriteFiles(out string, files []File) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		path := filepath.Join(out, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := toolenv.WriteFileAtomic(path, f.Data); err != nil {
			return err
		}
	}
	return nil
}
