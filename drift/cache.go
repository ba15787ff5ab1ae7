package drift

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/foldercache"
)

// Cache keeps finished drifts, so that a drift asked again with the same
// inputs — the same toolenv, every byte of the source (and of --tasks
// and --rules), the same options, the same place of --out relative to
// the source — writes the stored output instead of drifting again. It
// shares its folder with toolenv build bird's cache (the folder of
// finished outputs, $TOOLENV_BUILD_CACHE): entries of each kind are
// read only by their kind, and the folder's cap counts both.
//
// A reuse is marked, never passed off as made: RunCached says which
// entry it wrote and when that entry was drifted, and toolenv drift
// prints it. The key covers the running program's own file
// (buildinfo.Executable, so a new toolenv never reuses an old drift);
// an entry is checked on every read, and a damaged one removed and the
// drift made again. A drift whose output names its own folders (an
// absolute path of --out or of an input) is not stored. Identical
// drifts started at once make the output once, the others waiting for
// its entry. A failure to read or write the folder is logged and the
// drift made as without a cache: the cache never fails a drift. A
// Cache is safe for concurrent use, by any number of processes.
type Cache struct {
	// Dir is the folder (created when missing).
	Dir string
	// MaxBytes caps the folder's entries; 0 means 1 GiB, a negative
	// value no cap.
	MaxBytes int64
	// Logger is told about damaged entries and folders that cannot be
	// written (warn) and about hits and stores (debug); nil discards.
	Logger *slog.Logger
}

// CacheAt returns the cache in folder dir, or nil (no cache) for "" and
// "off".
func CacheAt(dir string, logger *slog.Logger) *Cache {
	if dir = strings.TrimSpace(dir); dir == "" || dir == foldercache.Off {
		return nil
	}
	return &Cache{Dir: dir, Logger: logger}
}

// cacheFormat versions the key's recipe and the entry's layout.
const cacheFormat = 1

var cacheMagic = [8]byte{'t', 'o', 'o', 'l', 'd', 'r', 'f', 1}

func (c *Cache) log() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

func (c *Cache) entries() *foldercache.Cache {
	return &foldercache.Cache{Dir: c.Dir, Ext: ".drift", Magic: cacheMagic, Logger: c.Logger}
}

// Reuse says that a drift's output was written from the cache.
type Reuse struct {
	// Key is the entry's key (hex SHA-256).
	Key string `json:"key"`
	// Cache is the cache's folder.
	Cache string `json:"cache"`
	// Drifted is when the drift that made the entry finished, Seconds
	// how long it took.
	Drifted time.Time `json:"drifted"`
	Seconds float64   `json:"seconds"`
}

// Ran is what RunCached did.
type Ran struct {
	// Drifted is the drift made; nil when the output was reused.
	Drifted *Drifted
	// Reused says which entry was written instead; nil when the drift
	// was made.
	Reused *Reuse
	// Summary is what toolenv drift prints (Drifted.Summary), with a
	// last line naming the entry when the drift was reused.
	Summary string
}

// cacheMeta is what an entry says besides its files.
type cacheMeta struct {
	Drifted time.Time `json:"drifted"`
	Seconds float64   `json:"seconds"`
	// Head is the summary without its line naming --out.
	Head string `json:"head"`
}

// keyOptions are the options the output depends on, as the key holds
// them (TestCacheKeyCoversJob checks that every field of Job is here or
// said not to shape the output).
type keyOptions struct {
	Demo       bool               `json:"demo"`
	OpenAPI    string             `json:"openapi"`
	Seed       uint64             `json:"seed"`
	Operators  []string           `json:"ops"`
	Rates      map[string]float64 `json:"rates"`
	Version    string             `json:"version"`
	Validation string             `json:"validation"`
	Mode       string             `json:"mode"`
	Feedback   string             `json:"feedback"`
	Rules      bool               `json:"rules"`
}

// cacheable reports whether the job's output can be keyed: options set
// in code (Options.Rules, Options.Tasks, Options.Now and the like), not
// from files the key reads, are not.
func (job *Job) cacheable() bool {
	o := job.Options
	return o.Rules == nil && o.Tasks == nil
}

// key is the SHA-256 of everything the output of job depends on;
// identity is the program's (buildinfo.Executable).
func (job *Job) key(identity string) (foldercache.Key, error) {
	o := job.Options
	openapiName := job.OpenAPI
	ko, err := json.Marshal(keyOptions{Demo: job.Demo, OpenAPI: openapiName, Seed: o.Seed, Operators: o.Operators, Rates: o.Rates,
		Version: o.Version, Validation: o.Validation, Mode: o.Mode, Feedback: o.Feedback, Rules: job.Rules != ""})
	if err != nil {
		return foldercache.Key{}, err
	}
	h := foldercache.NewHasher("toolenv drift", cacheFormat)
	h.String("program", identity)
	h.String("options", string(ko))
	// Every input as given and from --out (outputs name the source's
	// folder by a path relative to their own), and every byte of it.
	tree := func(what, path string) error {
		fromOut, err := foldercache.RelFrom(job.Out, path)
		if err != nil {
			return err
		}
		h.String(what, path)
		h.String(what+" from out", fromOut)
		if err := h.Tree(what, path); err != nil {
			return fmt.Errorf("key %s %s: %w", what, path, err)
		}
		return nil
	}
	if job.In != "" {
		if err := tree("in", job.In); err != nil {
			return foldercache.Key{}, err
		}
	}
	for _, tb := range job.ToolBench {
		if err := tree("toolbench", tb); err != nil {
			return foldercache.Key{}, err
		}
	}
	if job.OpenAPI != "" {
		file := job.OpenAPI
		if i := strings.IndexByte(file, '='); i >= 0 {
			file = file[i+1:]
		}
		if err := tree("openapi", file); err != nil {
			return foldercache.Key{}, err
		}
	}
	if job.Tasks != "" {
		if err := tree("tasks", job.Tasks); err != nil {
			return foldercache.Key{}, err
		}
	}
	if job.Rules != "" {
		if err := tree("rules", job.Rules); err != nil {
			return foldercache.Key{}, err
		}
	}
	return h.Sum(), nil
}

// RunCached is Run through cache (nil: Run): the stored output when an
// intact entry has this job's key, else a drift that is then stored.
func RunCached(ctx context.Context, job Job, cache *Cache) (*Ran, error) {
	made := func() (*Ran, error) {
		d, err := Run(ctx, job)
		if err != nil {
			return nil, err
		}
		return &Ran{Drifted: d, Summary: d.Summary(job.Out)}, nil
	}
	if cache == nil || job.Out == "" || !job.cacheable() {
		return made()
	}
	log := cache.log()
	identity, err := buildinfo.Executable()
	if err != nil {
		log.Warn("drift not cached: cannot identify the running program", "err", err)
		return made()
	}
	key, err := job.key(identity)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) { // a missing input is Run's to report
			log.Warn("drift not cached", "err", err)
		}
		return made()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	store := cache.entries()
	if ran, ok, err := cache.tryReuse(key, &job); ok || err != nil {
		return ran, err
	}
	// One drift per key at a time: the others wait for its entry.
	unlock, err := store.Lock(ctx, key)
	switch {
	case err == nil:
		defer unlock()
		if ran, ok, err := cache.tryReuse(key, &job); ok || err != nil {
			return ran, err
		}
	case ctx.Err() != nil:
		return nil, ctx.Err()
	default:
		log.Warn("cannot lock the build cache; drifting without waiting for an identical drift", "dir", cache.Dir, "err", err)
	}
	start := time.Now()
	ran, err := made()
	if err != nil {
		return nil, err
	}
	// Inputs changed while the drift read them must not store its
	// output under the old inputs' key.
	if again, err := job.key(identity); err != nil || again != key {
		log.Warn("an input of the drift changed while it ran; its output is not cached")
		return ran, nil
	}
	cache.save(key, &job, ran.Drifted, time.Since(start))
	return ran, nil
}

// tryReuse writes the entry under key into job.Out when there is an
// intact one (ok). A damaged entry is removed and logged (not ok, no
// error); an Out that may not receive the drift is the error Run gives.
func (c *Cache) tryReuse(key foldercache.Key, job *Job) (*Ran, bool, error) {
	store := c.entries()
	raw, files, err := store.Read(key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	var meta cacheMeta
	var m *Manifest
	if err == nil {
		if err = json.Unmarshal(raw, &meta); err != nil {
			err = fmt.Errorf("the entry's meta: %w", err)
		}
	}
	if err == nil {
		m, err = manifestIn(files)
	}
	if err != nil {
		c.log().Warn("cached drift is damaged; drifting again", "entry", store.Path(key), "err", err)
		store.Remove(key)
		return nil, false, nil
	}
	invalid := func(err error) error { return &toolenv.Error{Status: toolenv.StatusInvalidArguments, Err: err} }
	if err := CheckOutput(job.Out, &Drifted{Lineage: &Lineage{Manifest: m}}, job.Force); err != nil {
		return nil, false, invalid(err)
	}
	abs, err := filepath.Abs(job.Out)
	if err != nil {
		return nil, false, invalid(err)
	}
	if err := fillFolder(job.Out, abs, func(tmp string) error { return foldercache.WriteFiles(tmp, files) }); err != nil {
		return nil, false, invalid(err)
	}
	r := &Reuse{Key: key.String(), Cache: c.Dir, Drifted: meta.Drifted, Seconds: meta.Seconds}
	c.log().Debug("drift reused from the cache", "entry", store.Path(key), "out", job.Out)
	return &Ran{Reused: r, Summary: meta.Head + wroteLine(job.Out) + r.Line()}, true, nil
}

// Line is the line toolenv drift prints for a reused drift.
func (r *Reuse) Line() string {
	return fmt.Sprintf("reused drift %s from %s (drifted %s in %.1f s)\n", r.Key[:12], r.Cache, r.Drifted.Format(time.RFC3339), r.Seconds)
}

// manifestIn reads the manifest among an entry's files.
func manifestIn(files []foldercache.File) (*Manifest, error) {
	for _, f := range files {
		if f.Name == ManifestFile {
			var m Manifest
			if err := json.Unmarshal(f.Data, &m); err != nil {
				return nil, fmt.Errorf("the entry's manifest: %w", err)
			}
			if len(m.Steps) == 0 {
				return nil, errors.New("the entry's manifest has no step")
			}
			return &m, nil
		}
	}
	return nil, errors.New("the entry holds no manifest")
}

// save stores the output just written into job.Out under key, unless it
// names its own folders.
func (c *Cache) save(key foldercache.Key, job *Job, d *Drifted, took time.Duration) {
	log := c.log()
	files, err := foldercache.ReadFolder(job.Out)
	if err != nil {
		log.Warn("drift not cached: cannot read its output back", "out", job.Out, "err", err)
		return
	}
	folders := append([]string{job.In, job.Tasks, job.Rules}, job.ToolBench...)
	if f, n, found := foldercache.Naming(files, foldercache.FolderNames(job.Out, folders...)); found {
		log.Info("drift not cached: its output names its folder", "file", f, "names", n)
		return
	}
	raw, err := json.Marshal(cacheMeta{Drifted: time.Now().UTC(), Seconds: took.Seconds(), Head: d.summaryHead()})
	if err != nil {
		log.Warn("drift not cached", "err", err)
		return
	}
	name, err := c.entries().Keep(key, raw, files, c.MaxBytes)
	if err != nil {
		log.Warn("cannot write the build cache; set --build-cache to a writable folder or \"off\"", "dir", c.Dir, "err", err)
		return
	}
	log.Debug("drift cached", "entry", name, "files", len(files))
}
