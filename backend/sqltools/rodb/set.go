package rodb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	toolenv "github.com/toolenv/toolenv"
)

// Set is the named databases a backend serves: the files of its
// collection's config, opened read-only, or databases already open that
// it shares with other backends. A database that could not be opened
// stays in the set with the reason, so that calls on it can say why. A
// Set is safe for concurrent use.
type Set struct {
	dbs   map[string]*DB
	errs  map[string]error
	owned []*DB
	once  sync.Once
}

// SetOptions say how OpenSet finds and opens databases.
type SetOptions struct {
	// Dir is the folder relative paths are resolved against (the
	// collection's).
	Dir string
	// Shared are already-open databases by name, used instead of opening
	// the file of the same name; Close leaves them open.
	Shared map[string]*DB
	// DB configures how files are opened.
	DB Options
	// Logger is warned about databases that cannot be opened; nil
	// discards.
	Logger *slog.Logger
}

// ErrNoDatabase is wrapped by Get's error for a name the set does not
// hold.
var ErrNoDatabase = errors.New("no such database")

// OpenSet opens the databases files names (name → path of an SQLite
// file). A database that cannot be opened does not fail OpenSet: it is
// logged, and Get says why. Only a config that names no database is an
// error.
func OpenSet(ctx context.Context, files map[string]string, opt SetOptions) (*Set, error) {
	if len(files) == 0 {
		return nil, errors.New(`backend config names no databases (want {"databases": {"name": "path.sqlite"}})`)
	}
	logger := opt.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Set{dbs: map[string]*DB{}, errs: map[string]error{}}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if db := opt.Shared[name]; db != nil {
			s.dbs[name] = db
			continue
		}
		db, err := Open(ctx, name, ResolvePath(opt.Dir, files[name]), opt.DB)
		if err != nil {
			s.errs[name] = err
			logger.Warn("database unavailable", "db", name, "err", err)
			continue
		}
		s.dbs[name] = db
		s.owned = append(s.owned, db)
	}
	return s, nil
}

// ResolvePath resolves a database path of a collection's config against
// the collection folder dir.
func ResolvePath(dir, path string) string {
	if filepath.IsAbs(path) || dir == "" {
		return path
	}
	return filepath.Join(dir, path)
}

// Get returns the database called name, or an *toolenv.Error with status
// unavailable that says why not: the error opening it, or ErrNoDatabase.
func (s *Set) Get(name string) (*DB, error) {
	if db := s.dbs[name]; db != nil {
		return db, nil
	}
	err := s.errs[name]
	if err == nil {
		err = ErrNoDatabase
	}
	return nil, &toolenv.Error{Status: toolenv.StatusUnavailable, Message: fmt.Sprintf("database %s is unavailable", name), Err: err,
		Hint: "the server could not open this database; check its file"}
}

// Names returns the names of the open databases, sorted.
func (s *Set) Names() []string {
	names := make([]string, 0, len(s.dbs))
	for n := range s.dbs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Open returns the open databases by name, to share with another
// backend (which must not close them).
func (s *Set) Open() map[string]*DB {
	out := make(map[string]*DB, len(s.dbs))
	for n, db := range s.dbs {
		out[n] = db
	}
	return out
}

// Close closes the databases the set opened (not the shared ones).
func (s *Set) Close() error {
	var errs []error
	s.once.Do(func() {
		for _, db := range s.owned {
			errs = append(errs, db.Close())
		}
	})
	return errors.Join(errs...)
}

// QueryError classifies an error a query returned: a *toolenv.Error is
// kept; a value SQLite refused ("too big", "too complex") is the
// caller's (invalid_arguments); anything else is an internal error, and
// is logged.
func QueryError(err error, logger *slog.Logger) error {
	var te *toolenv.Error
	if errors.As(err, &te) {
		return err
	}
	msg := err.Error()
	if strings.Contains(msg, "too complex") || strings.Contains(msg, "too big") {
		return &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: "SQLite refused a value: " + msg, Hint: "use a shorter or simpler value"}
	}
	if logger != nil {
		logger.Error("query failed", "err", err)
	}
	return &toolenv.Error{Status: toolenv.StatusInternal, Message: "the query failed", Err: err}
}
