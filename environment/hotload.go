package environment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/drift"
)

// Reload hot-loads the collection folder dir into the running
// environment: the collection it holds now (a new version of one that is
// served, a drifted one written over it by toolenv drift --force, or a
// collection not served yet) is read, its backend built, and it takes the
// place of the served collection of the same name (invoke.Registry.Replace).
// From then on every front-end serves it: /virtual, REST, the listings,
// and MCP, whose sessions are sent notifications/tools/list_changed. A
// drifted version is enforced at once; the version it replaces stops
// being enforced. Calls in flight finish on the old version, whose backend
// is closed a call timeout later. Tasks stay those loaded by Open.
//
// Nothing changes when the folder does not hold a valid collection: the
// error says why, and the served version stays.
func (env *Environment) Reload(ctx context.Context, dir string) (*toolenv.Collection, error) {
	env.reloadMu.Lock()
	defer env.reloadMu.Unlock()
	col, err := toolenv.ReadCollection(dir)
	if err != nil {
		return nil, fmt.Errorf("hot-load %s: %w (the served version stays)", dir, err)
	}
	if drift.IsDrifted(col) && env.enforcer == nil {
		return nil, fmt.Errorf("hot-load %s: collection %s is a drifted version, and drift enforcement is off in this server: start it with watch set (--watch) or with a drifted collection loaded", dir, col.Name)
	}
	backend, err := env.newBackend(ctx, col)
	if err != nil {
		return nil, fmt.Errorf("hot-load %s: collection %s: %w (the served version stays)", dir, col.Name, err)
	}
	if env.Config.Drift.DocsTool {
		drift.AddDocsTool(col)
	}
	var lineage *drift.Lineage
	if b, ok := backend.(*driftBackend); ok {
		lineage = b.lineage
	}
	// Enforcement first for a drifted version (its calls must never
	// reach the base backend unchecked), after the swap otherwise.
	if lineage != nil {
		env.enforcer.Set(lineage)
	}
	old, err := env.Registry.Replace(col, backend)
	if err != nil {
		return nil, fmt.Errorf("hot-load %s: %w (the served version stays)", dir, err)
	}
	if lineage == nil && env.enforcer != nil {
		env.enforcer.Remove(col.Name)
	}
	if env.docs != nil {
		if lineage == nil {
			lineage = drift.NewLineage(col)
		}
		env.docs.Set(lineage)
	}
	if cl, ok := old.(io.Closer); ok {
		env.retire(cl)
	}
	env.log.Info("hot-loaded collection", "dir", dir, "collection", col.Name, "version", col.Version, "kind", col.Kind, "tools", len(col.Tools), "backend", col.Backend.Type)
	return col, nil
}

// retire closes the backend of a replaced version once the calls that
// may still use it are over (a call timeout later), and no more at Close.
func (env *Environment) retire(cl io.Closer) {
	env.closeMu.Lock()
	for i, c := range env.closers {
		if c == cl {
			env.closers = append(env.closers[:i:i], env.closers[i+1:]...)
			break
		}
	}
	env.closeMu.Unlock()
	grace := env.Config.Timeout
	if grace <= 0 {
		grace = 2 * time.Minute
	}
	time.AfterFunc(grace, func() {
		if err := cl.Close(); err != nil {
			env.log.Warn("closing the backend of a replaced version", "err", err)
		}
	})
}

// Watch hot-loads (Reload) every collection folder of Config.Collections
// whose collection.json or tools.json changes, checking every interval
// until ctx ends. A change is loaded once the files have stayed the same
// for one more interval, so a folder being written is never read half
// done; a folder that does not load is reported and tried again at its
// next change.
func (env *Environment) Watch(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		return errors.New("watch: the interval must be positive")
	}
	type state struct{ seen, pending string }
	states := map[string]*state{}
	for _, dir := range env.Config.Collections {
		states[dir] = &state{seen: stamp(dir)}
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		for _, dir := range env.Config.Collections {
			st := states[dir]
			now := stamp(dir)
			switch {
			case now == st.seen:
				st.pending = ""
			case now != st.pending:
				st.pending = now // changed: wait until it holds still
			default:
				st.seen, st.pending = now, ""
				if _, err := env.Reload(ctx, dir); err != nil {
					env.log.Error("hot-load failed", "dir", dir, "err", err)
				}
			}
		}
	}
}

// WatchInBackground runs Watch in a goroutine (nothing when every is not
// positive: Config.Watch off) and returns the function that stops it and
// waits until it is done.
func (env *Environment) WatchInBackground(ctx context.Context, every time.Duration) (stop func()) {
	if every <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		env.Watch(ctx, every)
	}()
	env.log.Info("hot-loading changed collection folders", "every", every, "folders", len(env.Config.Collections))
	return func() { cancel(); <-done }
}

// stamp sums up a collection folder's files: their sizes and times.
func stamp(dir string) string {
	s := ""
	for _, f := range []string{toolenv.CollectionFile, toolenv.ToolsFile} {
		st, err := os.Stat(filepath.Join(dir, f))
		if errors.Is(err, fs.ErrNotExist) {
			s += "-;"
			continue
		}
		if err != nil {
			s += "?;"
			continue
		}
		s += fmt.Sprintf("%d/%d;", st.Size(), st.ModTime().UnixNano())
	}
	return s
}
