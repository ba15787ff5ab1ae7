package nl2api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/foldercache"
)

// BuildCacheEnv is the environment variable that names the folder of the
// build cache (BuildCache) when no flag or configuration key does; "off"
// turns the cache off.
const BuildCacheEnv = foldercache.Env

// BuildCacheOff, as the cache folder, turns the build cache off.
const BuildCacheOff = foldercache.Off

// DefaultBuildCacheMaxBytes is the build cache's size cap when
// BuildCache.MaxBytes is 0.
const DefaultBuildCacheMaxBytes = foldercache.DefaultMaxBytes

// buildFormat versions the key's recipe and the entry's layout: change it
// whenever either changes, so that no entry of the old format is read.
const buildFormat = 2

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
func DefaultBuildCacheDir() string { return foldercache.DefaultDir() }

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
func buildKey(opt *Options, identity string) (foldercache.Key, error) {
	fromOut, err := foldercache.RelFrom(opt.Out, opt.Data)
	if err != nil {
		return foldercache.Key{}, err
	}
	ko, err := json.Marshal(keyOptions{Data: opt.Data, DataFromOut: fromOut, DBs: opt.DBs, Flavors: opt.Flavors, Obfuscate: opt.Obfuscate,
		Seed: opt.Seed, Shrink: opt.Shrink, Workers: opt.Workers, CallTimeout: opt.CallTimeout, MaxCallTimeout: opt.MaxCallTimeout,
		Writes: opt.Writes, WriteTasks: opt.WriteTasks})
	if err != nil {
		return foldercache.Key{}, err
	}
	h := foldercache.NewHasher("toolenv build bird", buildFormat)
	h.String("program", identity)
	h.String("options", string(ko))
	if err := h.Tree("data", opt.Data); err != nil {
		return foldercache.Key{}, fmt.Errorf("key the --data folder %s: %w", opt.Data, err)
	}
	return h.Sum(), nil
}

// buildMagic starts the cache's entries (foldercache.Cache.Magic).
var buildMagic = [8]byte{'t', 'o', 'o', 'l', 'b', 'l', 'd', 1}

// entries is the store of the cache's entries.
func (c *BuildCache) entries() *foldercache.Cache {
	return &foldercache.Cache{Dir: c.Dir, Ext: ".build", Magic: buildMagic, Logger: c.Logger}
}

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

// reuse writes the output of the entry under key into opt.Out and
// returns its report, marked reused; fs.ErrNotExist when there is no
// entry, another error when it is damaged (and removed).
func (c *BuildCache) reuse(key foldercache.Key, opt *Options, start time.Time) (*Report, error) {
	store := c.entries()
	raw, files, err := store.Read(key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var meta entryMeta
	var rep Report
	if err == nil {
		if err = json.Unmarshal(raw, &meta); err != nil {
			err = fmt.Errorf("the entry's meta: %w", err)
		} else if err = json.Unmarshal(meta.Report, &rep); err != nil {
			err = fmt.Errorf("the entry's report: %w", err)
		}
	}
	if err != nil {
		store.Remove(key)
		return nil, err
	}
	if err := foldercache.WriteFiles(opt.Out, files); err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	rep.rebase(meta.Data, opt.Data, meta.Out, opt.Out)
	rep.Seed = opt.Seed
	rep.Reused = &Reuse{Key: key.String(), Cache: c.Dir, Built: meta.Built, Seconds: meta.Seconds}
	rep.Seconds = time.Since(start).Seconds()
	if err := rep.write(opt.Out, opt); err != nil {
		return nil, err
	}
	c.log().Debug("build reused from the cache", "entry", store.Path(key), "out", opt.Out)
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
func (c *BuildCache) save(key foldercache.Key, opt *Options, rep *Report) {
	log := c.log()
	meta := &entryMeta{Built: time.Now().UTC(), Seconds: rep.Seconds, Data: opt.Data, Out: opt.Out}
	raw, err := json.Marshal(rep)
	if err != nil {
		log.Warn("build not cached: its report is not writable as JSON", "err", err)
		return
	}
	meta.Report = raw
	files, err := opt.outputs.files(opt.Out)
	if err == nil {
		raw, err = json.Marshal(meta)
	}
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
	if f, n, found := foldercache.Naming(append(files, foldercache.File{Name: "report.json", Data: bareRaw}), foldercache.FolderNames(opt.Out, opt.Data)); found {
		log.Info("build not cached: its output names its folder", "file", f, "names", n)
		return
	}
	name, err := c.entries().Keep(key, raw, files, c.MaxBytes)
	if err != nil {
		log.Warn("cannot write the build cache; set --build-cache to a writable folder or \"off\"", "dir", c.Dir, "err", err)
		return
	}
	log.Debug("build cached", "entry", name, "files", len(files))
}

// files reads back the recorded output files (report.json and report.md,
// which reuse writes anew, left out), named relative to out.
func (o *outputs) files(out string) ([]foldercache.File, error) {
	o.mu.Lock()
	paths := append([]string(nil), o.paths...)
	o.mu.Unlock()
	return foldercache.ReadFiles(out, paths, func(name string) bool { return name == "report.json" || name == "report.md" })
}

// tryReuse reuses the entry under key when there is an intact one.
func (c *BuildCache) tryReuse(key foldercache.Key, opt *Options, start time.Time) (*Report, bool) {
	rep, err := c.reuse(key, opt, start)
	switch {
	case err == nil:
		return rep, true
	case !errors.Is(err, fs.ErrNotExist):
		c.log().Warn("cached build is damaged or cannot be written out; building again", "entry", c.entries().Path(key), "err", err)
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
	{
		unlock, err := c.entries().Lock(ctx, key)
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
