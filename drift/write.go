package drift

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/openapi"
)

// The files of a drifted collection folder besides collection.json,
// tools.json and tasks.jsonl.
const (
	ChangelogFile    = "CHANGELOG.md"
	BreakingFile     = "breaking.md"
	BreakingJSONFile = "breaking.json"
	OpenAPIFile      = "openapi.json"
	BaseFolder       = "base"
)

// WriteOptions configure Write.
type WriteOptions struct {
	// BaseDir is the folder the chain's base collection was read from
	// (empty when it was not read from a folder). Its backend resolves
	// relative paths against it, so the drifted folder records it,
	// relative to itself.
	BaseDir string
	// Force replaces an existing output folder whatever it holds.
	Force bool
}

// Write writes the drifted version d into the folder dir: collection.json,
// tools.json, tasks.jsonl (when there are tasks), manifest.json,
// CHANGELOG.md, the oasdiff report (breaking.md, breaking.json),
// openapi.json and the base collection (base/). Everything is written into
// a temporary folder beside dir that is renamed into place at the end, so
// dir is never left half-written. An existing dir is replaced only when
// it holds the same drift (same collection, versions and seed: the output
// is then byte-identical) or when opts.Force is set.
func Write(dir string, d *Drifted, opts WriteOptions) error {
	if err := CheckOutput(dir, d, opts.Force); err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("drift: %w", err)
	}
	cfg := BackendConfig{Manifest: ManifestFile, Base: BaseFolder}
	if opts.BaseDir != "" {
		b, err := filepath.Abs(opts.BaseDir)
		if err != nil {
			return fmt.Errorf("drift: %w", err)
		}
		if rel, err := filepath.Rel(abs, b); err == nil {
			cfg.BaseDir = filepath.ToSlash(rel)
		} else {
			cfg.BaseDir = b
		}
	}
	c := *d.Lineage.Current
	c.Backend = toolenv.BackendSpec{Type: BackendType, Config: backendConfig(cfg)}

	// The breaking-change report, most of a large drift's write, is made
	// while the other files are written; every step only reads the drift.
	var (
		report    *BreakingReport
		reportErr error
		reported  = make(chan struct{})
	)
	go func() {
		defer close(reported)
		if report, reportErr = Breaking(d.From, d.Lineage.Current); reportErr != nil {
			reportErr = fmt.Errorf("breaking-change report: %w", reportErr)
		}
	}()
	withReport := func(write func(*BreakingReport) error) func() error {
		return func() error {
			<-reported
			if reportErr != nil {
				return reportErr
			}
			return write(report)
		}
	}
	err = fillFolder(dir, abs, func(tmp string) error {
		steps := []func() error{
			func() error { return toolenv.WriteCollection(tmp, &c) },
			func() error {
				if len(d.Tasks) == 0 {
					return nil
				}
				return toolenv.WriteTasks(filepath.Join(tmp, toolenv.TasksFile), d.Tasks)
			},
			func() error { return d.Lineage.Manifest.Write(filepath.Join(tmp, ManifestFile)) },
			func() error {
				return toolenv.WriteFileAtomic(filepath.Join(tmp, ChangelogFile), Changelog(d.Lineage.Manifest))
			},
			withReport(func(r *BreakingReport) error {
				return toolenv.WriteFileAtomic(filepath.Join(tmp, BreakingFile), r.Markdown())
			}),
			withReport(func(r *BreakingReport) error {
				return toolenv.WriteJSONFile(filepath.Join(tmp, BreakingJSONFile), r)
			}),
			func() error {
				return toolenv.WriteJSONFile(filepath.Join(tmp, OpenAPIFile), openapi.Document(&c, ""))
			},
			func() error {
				base := *d.Lineage.Base
				base.Dir = ""
				return toolenv.WriteCollection(filepath.Join(tmp, BaseFolder), &base)
			},
		}
		// The files are written at once (each step its own file).
		errs := make([]error, len(steps))
		var wg sync.WaitGroup
		for i, step := range steps {
			wg.Go(func() { errs[i] = step() })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err // the first step's that failed
			}
		}
		return nil
	})
	<-reported // never leave the report running past the call
	return err
}

// fillFolder makes folder dir (abs, its absolute path) whole or not at
// all: fill writes into a temporary folder beside it, which is then
// swapped into place (what dir held before removed only after).
func fillFolder(dir, abs string, fill func(tmp string) error) error {
	parent := filepath.Dir(abs)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("drift: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(abs)+".tmp-")
	if err != nil {
		return fmt.Errorf("drift: %w", err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	if err := fill(tmp); err != nil {
		return fmt.Errorf("drift: write %s: %w", dir, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("drift: %w", err)
	}
	// Swap the finished folder into place.
	var old string
	if _, err := os.Stat(abs); err == nil {
		old = tmp + ".old"
		if err := os.Rename(abs, old); err != nil {
			return fmt.Errorf("drift: move the old %s aside: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, abs); err != nil {
		if old != "" {
			os.Rename(old, abs)
		}
		return fmt.Errorf("drift: move the new version into %s: %w", dir, err)
	}
	done = true
	if old != "" {
		os.RemoveAll(old)
	}
	return nil
}

// CheckOutput reports whether dir may receive d: it must not exist, be
// empty, or hold the same drift (same collection, versions and seed);
// force allows anything but a file.
func CheckOutput(dir string, d *Drifted, force bool) error {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("drift: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("drift: --out %s is a file, not a folder", dir)
	}
	if force {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("drift: %w", err)
	}
	if len(entries) == 0 {
		return nil
	}
	prev, err := toolenv.ReadCollection(dir)
	if err != nil || !IsDrifted(prev) {
		return fmt.Errorf("drift: --out %s already exists and is not a drifted collection; choose another folder or pass --force to replace it", dir)
	}
	m, err := ReadManifest(filepath.Join(dir, ManifestFile))
	if err != nil {
		return fmt.Errorf("drift: --out %s holds a drifted collection whose manifest cannot be read (%v); pass --force to replace it", dir, err)
	}
	cur := d.Lineage.Manifest
	last := m.Steps[len(m.Steps)-1]
	step := cur.Steps[len(cur.Steps)-1]
	if m.Collection != cur.Collection || last.From != step.From || last.To != step.To {
		return fmt.Errorf("drift: --out %s holds %s %s→%s, not %s %s→%s; choose another folder or pass --force", dir, m.Collection, last.From, last.To, cur.Collection, step.From, step.To)
	}
	if last.Seed != step.Seed {
		return fmt.Errorf("drift: --out %s was already drifted from %s %s with seed %d; this run uses seed %d, which would give another %s. Use --seed %d to reproduce it, another --out, or --force to replace it", dir, m.Collection, step.From, last.Seed, step.Seed, step.To, last.Seed)
	}
	if fmt.Sprint(last.Operators, last.Rates) != fmt.Sprint(step.Operators, step.Rates) {
		return fmt.Errorf("drift: --out %s was already drifted from %s %s with seed %d but other operators or rates (%v %v); choose another --out, or --force to replace it", dir, m.Collection, step.From, last.Seed, last.Operators, last.Rates)
	}
	return nil
}
