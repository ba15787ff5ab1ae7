package world

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/eval/endstate"
)

// Spec names a world's initial state, as the hidden init tool's
// arguments (and a task's initial_state) give it: the database of the
// collection it is over, then a named initial state of the collection,
// an SQLite file to start from instead of the database (inside the
// collection's folder) and an SQL script run over it, each optional.
type Spec struct {
	Database string `json:"database,omitempty"`
	Name     string `json:"initial_state,omitempty"`
	File     string `json:"from_file,omitempty"`
	SQL      string `json:"sql,omitempty"`
}

// Set is the bases of one backend: its databases (by name) and the
// database files initial states start from. Safe for concurrent use.
type Set struct {
	dbs   *rodb.Set
	dir   string
	named map[string]Spec
	opt   Options
	dbOpt rodb.Options

	mu    sync.Mutex
	bases map[string]*Base
	files map[string]*Base
}

// SetOptions configure a Set.
type SetOptions struct {
	// Dir is the collection's folder: initial states' database files
	// must be inside it, and relative paths are resolved against it.
	Dir string
	// Named are the collection's named initial states.
	Named map[string]Spec
	// World configures the bases, DB how initial states' files open.
	World Options
	DB    rodb.Options
}

// NewSet returns the bases of dbs.
func NewSet(dbs *rodb.Set, opt SetOptions) *Set {
	return &Set{dbs: dbs, dir: opt.Dir, named: opt.Named, opt: opt.World, dbOpt: opt.DB, bases: map[string]*Base{}, files: map[string]*Base{}}
}

// Close closes the bases' writable copies and the files initial states
// opened.
func (s *Set) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, b := range s.bases {
		errs = append(errs, b.Close())
	}
	for _, b := range s.files {
		errs = append(errs, b.Close(), b.DB.Close())
	}
	s.bases, s.files = map[string]*Base{}, map[string]*Base{}
	return errors.Join(errs...)
}

// Base returns the base of the database called name.
func (s *Set) Base(ctx context.Context, name string) (*Base, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.bases[name]; b != nil {
		return b, nil
	}
	db, err := s.dbs.Get(name)
	if err != nil {
		return nil, err
	}
	b, err := NewBase(ctx, db, s.opt)
	if err != nil {
		return nil, err
	}
	s.bases[name] = b
	return b, nil
}

// Database resolves the database a world is over: the one named, or
// the only one.
func (s *Set) Database(name string) (string, error) {
	names := s.dbs.Names()
	if name == "" {
		if len(names) == 1 {
			return names[0], nil
		}
		return "", &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: "this collection serves several databases: name the world's",
			Problems: []toolenv.Problem{{Param: "database", Code: "missing_required", Expected: strings.Join(names, ", "), Message: "name the database"}}}
	}
	for _, n := range names {
		if n == name {
			return n, nil
		}
	}
	return "", &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("unknown database %q", name),
		Problems: []toolenv.Problem{{Param: "database", Code: "not_in_enum", Expected: strings.Join(names, ", "), Message: "unknown database"}}}
}

// resolve fills spec from the named initial state it names, and its
// database.
func (s *Set) resolve(spec Spec) (Spec, error) {
	if spec.Name != "" {
		n, ok := s.named[spec.Name]
		if !ok {
			var known []string
			for k := range s.named {
				known = append(known, k)
			}
			sort.Strings(known)
			return spec, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("the collection declares no initial state %q", spec.Name),
				Problems: []toolenv.Problem{{Param: "initial_state", Code: "not_in_enum", Expected: strings.Join(known, ", "), Message: "unknown initial state"}}}
		}
		if spec.Database == "" {
			spec.Database = n.Database
		}
		if spec.File == "" {
			spec.File = n.File
		}
		if n.SQL != "" {
			spec.SQL = strings.TrimRight(n.SQL, "; \n") + ";\n" + spec.SQL
		}
	}
	db, err := s.Database(spec.Database)
	spec.Database = db
	return spec, err
}

// Start returns a new world in the initial state spec names.
func (s *Set) Start(ctx context.Context, spec Spec) (*World, error) {
	spec, err := s.resolve(spec)
	if err != nil {
		return nil, err
	}
	b, err := s.Base(ctx, spec.Database)
	if err != nil {
		return nil, err
	}
	if spec.File != "" {
		if b, err = s.fileBase(ctx, b, spec.File); err != nil {
			return nil, err
		}
	}
	init, err := b.Script(ctx, spec.SQL)
	if err != nil {
		return nil, err
	}
	return b.New(init), nil
}

// fileBase returns the base over an initial state's database file,
// which must be inside the collection's folder and have the schema of
// the database it replaces (every table and column of it).
func (s *Set) fileBase(ctx context.Context, like *Base, path string) (*Base, error) {
	bad := func(format string, args ...any) error {
		return &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf(format, args...),
			Problems: []toolenv.Problem{{Param: "from_file", Code: "bad_file", Message: fmt.Sprintf(format, args...)}}}
	}
	if s.dir == "" {
		return nil, bad("this collection has no folder, so no database file can start a world (give the initial state as SQL)")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(s.dir, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, bad("%v", err)
	}
	dir, err := filepath.Abs(s.dir)
	if err != nil {
		return nil, bad("%v", err)
	}
	if rel, err := filepath.Rel(dir, abs); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, bad("the initial state's database %s is outside the collection's folder %s (put it there)", abs, dir)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, bad("the initial state's database: %v", err)
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", abs, st.Size(), st.ModTime().UnixNano())
	s.mu.Lock()
	b := s.files[key]
	s.mu.Unlock()
	if b != nil {
		return b, nil
	}
	db, err := rodb.Open(ctx, like.DB.Name, abs, s.dbOpt)
	if err != nil {
		return nil, bad("%v", err)
	}
	b, err = NewBase(ctx, db, s.opt)
	if err != nil {
		db.Close()
		return nil, bad("%v", err)
	}
	for _, t := range like.schema.Tables {
		ft := b.schema.Table(t.Name)
		if ft == nil {
			b.Close()
			db.Close()
			return nil, bad("the initial state's database %s has no table %s, which database %s has", abs, t.Name, like.DB.Name)
		}
		for _, c := range t.Columns {
			if ft.Column(c.Name) == nil {
				b.Close()
				db.Close()
				return nil, bad("table %s of the initial state's database %s has no column %s", t.Name, abs, c.Name)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.files[key]; old != nil {
		b.Close()
		db.Close()
		return old, nil
	}
	s.files[key] = b
	return b, nil
}

// Record is what a session's log keeps of a call that changed its
// world: the world started (Start, with its initial state's hash) and
// the rows a write changed, with the world's Digest after, which replay
// must reproduce.
type Record struct {
	Start   *Spec    `json:"start,omitempty"`
	Initial string   `json:"initial,omitempty"`
	Changes []Change `json:"changes,omitempty"`
	Hash    string   `json:"hash"`
}

// StartRecord is the record of starting w from spec.
func StartRecord(spec Spec, w *World) *Record {
	return &Record{Start: &spec, Initial: w.InitialHash(), Hash: w.Digest()}
}

// Replay applies r to w (nil: no world yet) and returns the world,
// checking that it reaches the logged state.
func (s *Set) Replay(ctx context.Context, w *World, r *Record) (*World, error) {
	if r.Start != nil {
		nw, err := s.Start(ctx, *r.Start)
		if err != nil {
			return nil, fmt.Errorf("start the world again: %w", err)
		}
		if nw.InitialHash() != r.Initial {
			return nil, fmt.Errorf("its initial state differs from the logged one (the database or the script changed)")
		}
		w = nw
	}
	if w == nil {
		return nil, fmt.Errorf("a write is logged before its world started")
	}
	if err := w.Apply(r.Changes); err != nil {
		return nil, err
	}
	if h := w.Digest(); h != r.Hash {
		return nil, fmt.Errorf("the world's history differs from the logged one after the call (digest %s, logged %s)", h, r.Hash)
	}
	return w, nil
}

// InitialHash is the hash of the world's initial state's changes from
// its base ("" for the base itself).
func (w *World) InitialHash() string { return w.initHash }

// ChangedRows counts the rows the world changed from its initial state
// (what Changes reports, without making it).
func (w *World) ChangedRows() int {
	if w.d == w.init {
		return 0
	}
	return w.Changes().Rows()
}

// Mark is a world's digest at one point (Marker), to Revert to.
type Mark [16]byte

// Marker returns the mark of the world as it is now.
func (w *World) Marker() Mark { return w.digest }

// Revert undoes a write's changes made since mark (a write whose log
// entry could not be appended): the world, and its digest, are as they
// were.
func (w *World) Revert(changes []Change, mark Mark) error {
	inv := make([]Change, len(changes))
	for i, ch := range changes {
		inv[len(changes)-1-i] = Change{Table: ch.Table, Key: ch.Key, Before: ch.After, After: ch.Before}
	}
	err := w.Apply(inv)
	w.digest = mark
	return err
}

// Check is an end-state check's query.
type Check struct {
	Name string `json:"name,omitempty"`
	SQL  string `json:"sql"`
}

// Inspect reports w's state and runs checks in it, read-only (a check
// that writes is refused and changes nothing); max bounds each check's
// rows.
func Inspect(ctx context.Context, w *World, checks []Check, max int) *endstate.Report {
	rep := &endstate.Report{Changes: w.Changes()}
	rep.Hash = rep.Changes.Hash()
	for _, c := range checks {
		out := endstate.CheckOutput{Name: c.Name, Rows: [][]any{}}
		rows, err := w.ReadOnly(ctx, c.SQL, max)
		if err != nil {
			out.Error = toolenv.ResultOf(err).Error
		} else {
			out.Columns = rows.Columns
			out.Rows = rows.Rows
			if rows.Truncated {
				out.Error = fmt.Sprintf("the query returns more than %d rows", max)
			}
		}
		rep.Checks = append(rep.Checks, out)
	}
	return rep
}

// ReadOnly runs a query of a caller's (an end-state check) in the
// world: whatever it tries to change is undone, and the world stays as
// it was.
func (w *World) ReadOnly(ctx context.Context, q string, max int) (*rodb.Rows, error) {
	if err := CheckQuery(q); err != nil {
		return nil, err
	}
	if !w.Changed() {
		// The base's handle refuses writes (query_only).
		return w.base.DB.Query(ctx, q, nil, max)
	}
	var out *rodb.Rows
	err := w.run(ctx, false, func(c *wconn) error {
		if err := c.exec(ctx, "SAVEPOINT toolenv_check"); err != nil {
			return internal("start a check", err)
		}
		defer func() {
			_ = c.exec(ctx, "ROLLBACK TO toolenv_check")
			_ = c.exec(ctx, "RELEASE toolenv_check")
		}()
		if _, err := c.c.ExecContext(ctx, "PRAGMA query_only = ON"); err != nil {
			return internal("start a check", err)
		}
		defer c.c.ExecContext(context.WithoutCancel(ctx), "PRAGMA query_only = OFF")
		rows, err := c.c.QueryContext(ctx, q)
		if err != nil {
			return rodb.WrapError(ctx, err)
		}
		out, err = rodb.Scan(ctx, rows, max)
		return err
	})
	return out, err
}

// DecodeSpec reads a Spec from the init tool's arguments.
func DecodeSpec(args map[string]any) (Spec, error) {
	var sp Spec
	raw, err := json.Marshal(args)
	if err != nil {
		return sp, err
	}
	err = toolenv.DecodeJSON(raw, &sp)
	return sp, err
}

// Changes reports how the initial state differs from its base.
func (i *Initial) Changes() *endstate.Changes {
	if i == nil {
		return &endstate.Changes{Tables: []endstate.TableChanges{}}
	}
	return changesSince(i.base.schema, nil, i.d)
}
