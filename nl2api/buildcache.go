package nl2api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/buildinfo"
)

// BuildCacheEnv is the environment variable that names the folder of the
// build cache (BuildCache) when no flag or configuration key does; "off"
// turns the cache off.
const BuildCacheEnv = "TOOLENV_BUILD_CACHE"

// BuildCacheOff, as the cache folder, turns the build cache off.
const BuildCacheOff = "off"

// DefaultBuildCacheMaxBytes is the build cache's size cap when
// BuildCache.MaxBytes is 0.
const DefaultBuildCacheMaxBytes = 1 << 30

// buildFormat versions the key's recipe and the entry's layout: change it
// whenever either changes, so that no entry of the old format is read.
const buildFormat = 1

// BuildCache keeps the outputs of builds in a folder, so that a build
// asked again with the same inputs — the same toolenv, the same --data
// folder's every byte, the same options — writes the stored output
// instead of planning and verifying every question again.
//
// An entry is stored under the SHA-256 of everything the output depends
// on: the running program's own file (buildinfo.Executable, so a new
// toolenv never reuses an old build), the entry format, every file under
// Options.Data (its name and content), the options that shape the output
// (databases, flavors, obfuscation, seed, shrinking, writes, time
// limits, workers), the --data folder as given and where it lies from
// the output folder (collections name their databases by a path relative
// to their folder). Each entry holds its length and SHA-256, checked on
// every read: a damaged entry is removed and the build made again, never
// served. Entries are written to a temporary name and renamed into place,
// so builds storing the same entry at once never leave a partial one; and
// a build takes the lock of its key before building, so identical builds
// started at once (pages of the doc test, processes of a test suite)
// make the output once, the others waiting for its entry. The
// folder is kept under MaxBytes by removing the entries used least
// recently.
//
// A reused build is marked, never passed off as made: its Report.Reused
// says which entry, from which folder, built when, and toolenv build
// bird prints it. The report's paths are those of this build; its
// timings and time limits are those of the build that made the entry.
// A build whose output names its own folders outside the report (an
// absolute path of --out or --data in a file) is not stored. A failure to
// read or write the folder is logged and the build made as without a
// cache: the cache never fails a build. A BuildCache is safe for
// concurrent use, by any number of processes.
type BuildCache struct {
	// Dir is the folder of the cache (created when missing).
	Dir string
	// MaxBytes caps the folder's entries; 0 means
	// DefaultBuildCacheMaxBytes, a negative value no cap.
	MaxBytes int64
	// Logger is told about damaged entries and folders that cannot be
	// written (warn) and about hits and stores (debug); nil discards.
	Logger *slog.Logger
}

// Reuse says that a build's output was written from the build cache.
type Reuse struct {
	// Key is the entry's key (hex SHA-256).
	Key string `json:"key"`
	// Cache is the cache's folder.
	Cache string `json:"cache"`
	// Built is when the build that made the entry finished.
	Built time.Time `json:"built"`
	// Seconds is how long that build took.
	Seconds float64 `json:"build_seconds"`
}

// DefaultBuildCacheDir is the folder of the build cache when no flag or
// key names one: $TOOLENV_BUILD_CACHE (BuildCacheEnv) when set, else
// toolenv/builds in the user's cache folder (os.UserCacheDir), else in
// the system's temporary folder.
func DefaultBuildCacheDir() string {
	if d := os.Getenv(BuildCacheEnv); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "toolenv", "builds")
	}
	return filepath.Join(os.TempDir(), "toolenv-builds")
}

// BuildCacheAt returns the cache in folder dir, or nil (no cache) for ""
// and BuildCacheOff.
func BuildCacheAt(dir string, logger *slog.Logger) *BuildCache {
	if dir = strings.TrimSpace(dir); dir == "" || dir == BuildCacheOff {
		return nil
	}
	return &BuildCache{Dir: dir, Logger: logger}
}

func (c *BuildCache) log() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// outputs records the files a build writes under its output folder.
type outputs struct {
	mu    sync.Mutex
	paths []string
}

func (o *outputs) add(paths ...string) {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.paths = append(o.paths, paths...)
	o.mu.Unlock()
}

// keyOptions are the options the output depends on, as the key holds
// them (TestBuildKeyCoversOptions checks that every field of Options is
// here or said not to shape the output).
type keyOptions struct {
	Data           string        `json:"data"`
	DataFromOut    string        `json:"data_from_out"`
	DBs            []string      `json:"dbs"`
	Flavors        []string      `json:"flavors"`
	Obfuscate      bool          `json:"obfuscate"`
	Seed           int64         `json:"seed"`
	Shrink         []int         `json:"shrink"`
	Workers        int           `json:"workers"`
	CallTimeout    time.Duration `json:"call_timeout"`
	MaxCallTimeout time.Duration `json:"max_call_timeout"`
	Writes         bool          `json:"writes"`
	WriteTasks     int           `json:"write_tasks"`
}

// errUncacheable says a build's inputs cannot be keyed.
var errUncacheable = errors.New("not cacheable")

// buildKey is the SHA-256 of everything the output of a build with opt
// (defaults applied) depends on; identity is the program's
// (buildinfo.Executable).
func buildKey(opt *Options, identity string) ([sha256.Size]byte, error) {
	var key [sha256.Size]byte
	absOut, err := filepath.Abs(opt.Out)
	if err != nil {
		return key, err
	}
	absData, err := filepath.Abs(opt.Data)
	if err != nil {
		return key, err
	}
	fromOut := absData
	if rel, err := filepath.Rel(absOut, absData); err == nil {
		fromOut = filepath.ToSlash(rel)
	}
	ko, err := json.Marshal(keyOptions{Data: opt.Data, DataFromOut: fromOut, DBs: opt.DBs, Flavors: opt.Flavors, Obfuscate: opt.Obfuscate,
		Seed: opt.Seed, Shrink: opt.Shrink, Workers: opt.Workers, CallTimeout: opt.CallTimeout, MaxCallTimeout: opt.MaxCallTimeout,
		Writes: opt.Writes, WriteTasks: opt.WriteTasks})
	if err != nil {
		return key, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "toolenv build bird\x00format %d\x00program %s\x00options %d %s\x00", buildFormat, identity, len(ko), ko)
	root, err := filepath.EvalSymlinks(opt.Data)
	if err != nil {
		return key, err
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			fmt.Fprintf(h, "dir %q\x00", rel)
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
			// A link to a folder (which the walk does not enter) or a
			// device: what the build would read is not keyed.
			return fmt.Errorf("%w: %s is not a regular file", errUncacheable, path)
		}
		fmt.Fprintf(h, "file %q %d\x00", rel, st.Size())
		n, err := io.Copy(h, f)
		if err != nil {
			return err
		}
		if n != st.Size() {
			return fmt.Errorf("%w: %s changed while it was read", errUncacheable, path)
		}
		return nil
	})
	if err != nil {
		return key, fmt.Errorf("key the --data folder %s: %w", opt.Data, err)
	}
	copy(key[:], h.Sum(nil))
	return key, nil
}

// The entry format: magic, the key, the payload's length (little-endian),
// the payload's SHA-256, then the payload: the entry's meta (JSON) and
// then its files, each a length-prefixed name and content.
var buildMagic = [8]byte{'t', 'o', 'o', 'l', 'b', 'l', 'd', 1}

const buildHeaderLen = 8 + sha256.Size + 8 + sha256.Size

// entryMeta is what an entry says besides its files.
type entryMeta struct {
	Built   time.Time `json:"built"`
	Seconds float64   `json:"seconds"`
	// Data and Out are the build's --data and --out as given; Report is
	// its report, whose paths start with them.
	Data   string          `json:"data"`
	Out    string          `json:"out"`
	Report json.RawMessage `json:"report"`
}

// entryFile is one output file, its name relative to the output folder.
type entryFile struct {
	Name string
	Data []byte
}

func (c *BuildCache) entryPath(key [sha256.Size]byte) string {
	return filepath.Join(c.Dir, hex.EncodeToString(key[:])+".build")
}

// readEntry reads and checks the entry file at name.
func readEntry(name string, key [sha256.Size]byte) (*entryMeta, []entryFile, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, nil, err
	}
	if len(b) < buildHeaderLen || !bytes.Equal(b[:8], buildMagic[:]) {
		return nil, nil, fmt.Errorf("not a toolenv build entry (%d bytes)", len(b))
	}
	if !bytes.Equal(b[8:8+sha256.Size], key[:]) {
		return nil, nil, errors.New("the file holds the entry of another build")
	}
	n := binary.LittleEndian.Uint64(b[8+sha256.Size:])
	p := b[buildHeaderLen:]
	if uint64(len(p)) != n {
		return nil, nil, fmt.Errorf("entry of %d bytes, header says %d (truncated?)", len(p), n)
	}
	if sum := sha256.Sum256(p); !bytes.Equal(sum[:], b[8+sha256.Size+8:buildHeaderLen]) {
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
	raw, err := next()
	if err != nil {
		return nil, nil, err
	}
	var meta entryMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, nil, fmt.Errorf("the entry's meta: %w", err)
	}
	count, k := binary.Uvarint(p)
	if k <= 0 {
		return nil, nil, errors.New("the entry's contents are malformed")
	}
	p = p[k:]
	var files []entryFile
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
		files = append(files, entryFile{Name: string(nm), Data: data})
	}
	if len(p) != 0 {
		return nil, nil, errors.New("the entry's contents are malformed")
	}
	return &meta, files, nil
}

// store writes an entry to a temporary file and renames it into place.
func (c *BuildCache) store(key [sha256.Size]byte, meta *entryMeta, files []entryFile) (string, error) {
	raw, err := json.Marshal(meta)
	if err != nil {
		return "", err
	}
	size := binary.MaxVarintLen64 * (2 + 2*len(files))
	size += len(raw)
	for _, f := range files {
		size += len(f.Name) + len(f.Data)
	}
	p := make([]byte, 0, size) // one allocation: entries are megabytes
	p = binary.AppendUvarint(p, uint64(len(raw)))
	p = append(p, raw...)
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
	name := c.entryPath(key)
	f, err := os.CreateTemp(c.Dir, ".tmp-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	hdr := make([]byte, 0, buildHeaderLen)
	hdr = append(hdr, buildMagic[:]...)
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

// reuse writes the output of the entry under key into opt.Out and
// returns its report, marked reused; fs.ErrNotExist when there is no
// entry, another error when it is damaged (and removed).
func (c *BuildCache) reuse(key [sha256.Size]byte, opt *Options, start time.Time) (*Report, error) {
	name := c.entryPath(key)
	meta, files, err := readEntry(name, key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var rep Report
	if err == nil {
		if err = json.Unmarshal(meta.Report, &rep); err != nil {
			err = fmt.Errorf("the entry's report: %w", err)
		}
	}
	if err != nil {
		_ = os.Remove(name)
		return nil, err
	}
	now := time.Now()
	_ = os.Chtimes(name, now, now) // least recently used goes first
	if err := os.MkdirAll(opt.Out, 0o755); err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	for _, f := range files {
		path := filepath.Join(opt.Out, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("build: %w", err)
		}
		if err := toolenv.WriteFileAtomic(path, f.Data); err != nil {
			return nil, fmt.Errorf("build: %w", err)
		}
	}
	rep.rebase(meta.Data, opt.Data, meta.Out, opt.Out)
	rep.Seed = opt.Seed
	rep.Reused = &Reuse{Key: hex.EncodeToString(key[:]), Cache: c.Dir, Built: meta.Built, Seconds: meta.Seconds}
	rep.Seconds = time.Since(start).Seconds()
	if err := rep.write(opt.Out, opt); err != nil {
		return nil, err
	}
	c.log().Debug("build reused from the cache", "entry", name, "out", opt.Out)
	return &rep, nil
}

// rebase moves the report's paths from the folders of the build that
// made it to this build's.
func (r *Report) rebase(fromData, toData, fromOut, toOut string) {
	move := func(p, from, to string) string {
		if rel, err := filepath.Rel(from, p); err == nil && filepath.IsLocal(rel) {
			return filepath.Join(to, rel)
		}
		if filepath.Clean(p) == filepath.Clean(from) {
			return to
		}
		return p
	}
	r.Data, r.Out = toData, toOut
	for i := range r.Databases {
		r.Databases[i].Path = move(r.Databases[i].Path, fromData, toData)
	}
	for i := range r.Flavors {
		r.Flavors[i].Dir = move(r.Flavors[i].Dir, fromOut, toOut)
	}
	for i := range r.Variants {
		r.Variants[i].Dir = move(r.Variants[i].Dir, fromOut, toOut)
	}
}

// save stores the output of the build just made (rep, its files recorded
// in opt's outputs) under key, unless it names its own folders.
func (c *BuildCache) save(key [sha256.Size]byte, opt *Options, rep *Report) {
	log := c.log()
	meta := &entryMeta{Built: time.Now().UTC(), Seconds: rep.Seconds, Data: opt.Data, Out: opt.Out}
	raw, err := json.Marshal(rep)
	if err != nil {
		log.Warn("build not cached: its report is not writable as JSON", "err", err)
		return
	}
	meta.Report = raw
	files, err := opt.outputs.files(opt.Out)
	if err != nil {
		log.Warn("build not cached: cannot read its output back", "out", opt.Out, "err", err)
		return
	}
	// The report's own paths are moved on reuse; any other mention of
	// the folders would be served to a build elsewhere.
	bare := *rep
	bare.Data, bare.Out, bare.Provenance = "", "", nil
	bare.Databases = append([]DatabaseReport(nil), rep.Databases...)
	for i := range bare.Databases {
		bare.Databases[i].Path = ""
	}
	bare.Flavors = append([]FlavorReport(nil), rep.Flavors...)
	for i := range bare.Flavors {
		bare.Flavors[i].Dir = ""
	}
	bare.Variants = append([]VariantReport(nil), rep.Variants...)
	for i := range bare.Variants {
		bare.Variants[i].Dir = ""
	}
	bareRaw, err := json.Marshal(&bare)
	if err != nil {
		log.Warn("build not cached: its report is not writable as JSON", "err", err)
		return
	}
	needles := folderNames(opt.Out, opt.Data)
	for _, f := range append(files, entryFile{Name: "report.json", Data: bareRaw}) {
		for _, n := range needles {
			if mentions(f.Data, n) {
				log.Info("build not cached: its output names its folder", "file", f.Name, "names", n)
				return
			}
		}
	}
	name, err := c.store(key, meta, files)
	if err != nil {
		log.Warn("cannot write the build cache; set --build-cache to a writable folder or \"off\"", "dir", c.Dir, "err", err)
		return
	}
	log.Debug("build cached", "entry", name, "files", len(files))
	c.evict(name)
}

// mentions reports whether data holds path, not as the tail of a
// relative path ("../../work/data" holds "/work/data" as the tail of a
// path relative to the output, which the key covers).
func mentions(data []byte, path string) bool {
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

// folderNames are the spellings of the output and data folders a file
// must not hold to be served elsewhere: their absolute paths (lexical and
// with links resolved) and the output folder as given.
func folderNames(out, data string) []string {
	var names []string
	add := func(p string) {
		if p != "" && p != "." && p != string(filepath.Separator) {
			names = append(names, p)
		}
	}
	for _, p := range []string{out, data} {
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

// files reads back the recorded output files (report.json and report.md,
// which reuse writes anew, left out), named relative to out.
func (o *outputs) files(out string) ([]entryFile, error) {
	o.mu.Lock()
	paths := append([]string(nil), o.paths...)
	o.mu.Unlock()
	sort.Strings(paths)
	var files []entryFile
	seen := map[string]bool{}
	for _, p := range paths {
		rel, err := filepath.Rel(out, p)
		if err != nil || !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("%s is outside the output folder", p)
		}
		rel = filepath.ToSlash(rel)
		if seen[rel] || rel == "report.json" || rel == "report.md" {
			continue
		}
		seen[rel] = true
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		files = append(files, entryFile{Name: rel, Data: b})
	}
	return files, nil
}

// staleBuildTemp is the age after which a temporary file is taken as left
// by a process killed while writing it.
const staleBuildTemp = time.Hour

// evict removes the least recently used entries (never keep, the one
// just written) while the folder's entries exceed the cap, and temporary
// files and locks of entries gone older than staleBuildTemp.
func (c *BuildCache) evict(keep string) {
	limit := c.MaxBytes
	if limit == 0 {
		limit = DefaultBuildCacheMaxBytes
	}
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
			if time.Since(info.ModTime()) > staleBuildTemp {
				os.Remove(name)
			}
		case strings.HasSuffix(e.Name(), ".build.lock"):
			// An old lock of an entry gone: at worst two identical builds
			// then run at once, each correct.
			if _, err := os.Stat(strings.TrimSuffix(name, ".lock")); errors.Is(err, fs.ErrNotExist) && time.Since(info.ModTime()) > staleBuildTemp {
				os.Remove(name)
			}
		case strings.HasSuffix(e.Name(), ".build"):
			files = append(files, file{name, info.Size(), info.ModTime()})
			total += info.Size()
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
			c.log().Debug("build evicted from the cache", "entry", f.name, "bytes", f.size)
		}
	}
}

// tryReuse reuses the entry under key when there is an intact one.
func (c *BuildCache) tryReuse(key [sha256.Size]byte, opt *Options, start time.Time) (*Report, bool) {
	rep, err := c.reuse(key, opt, start)
	switch {
	case err == nil:
		return rep, true
	case !errors.Is(err, fs.ErrNotExist):
		c.log().Warn("cached build is damaged or cannot be written out; building again", "entry", c.entryPath(key), "err", err)
	}
	return nil, false
}

// cachedBuild runs build through the cache: the stored output when an
// intact entry has this build's key, else a build that is then stored.
func (c *BuildCache) cachedBuild(ctx context.Context, opt *Options, start time.Time, build func() (*Report, error)) (*Report, error) {
	log := c.log()
	identity, err := buildinfo.Executable()
	if err != nil {
		log.Warn("build not cached: cannot identify the running program", "err", err)
		return build()
	}
	key, err := buildKey(opt, identity)
	if err != nil {
		log.Warn("build not cached", "err", err)
		return build()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if rep, ok := c.tryReuse(key, opt, start); ok {
		return rep, nil
	}
	// One build per key at a time: the others wait for its entry.
	if err := os.MkdirAll(c.Dir, 0o755); err == nil {
		unlock, err := lockBuild(ctx, c.entryPath(key)+".lock")
		switch {
		case err == nil:
			defer unlock()
			if rep, ok := c.tryReuse(key, opt, start); ok {
				return rep, nil
			}
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default:
			log.Warn("cannot lock the build cache; building without waiting for an identical build", "dir", c.Dir, "err", err)
		}
	}
	opt.outputs = &outputs{}
	rep, err := build()
	if err != nil {
		return nil, err
	}
	// Inputs changed while the build read them must not store its output
	// under the old inputs' key.
	if again, err := buildKey(opt, identity); err != nil || again != key {
		log.Warn("the --data folder changed during the build; its output is not cached", "data", opt.Data)
		return rep, nil
	}
	c.save(key, opt, rep)
	return rep, nil
}
