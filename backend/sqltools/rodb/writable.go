package rodb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"modernc.org/sqlite"
)

// Writable returns a connector whose every connection holds its own
// private, writable copy of the database, for callers that write and
// always roll back (package world): the database is never changed. A
// database served from memory gives each connection a copy of its
// indexed image; one served from its file gives each connection a copy
// of the file, made in dir (the system's temporary folder when empty)
// when the connection opens and unlinked at once, with its journal in
// memory. The copies start equal to the database; what a connection
// commits stays in its copy.
func (d *DB) Writable(dir string) driver.Connector {
	if mc, ok := d.connector.(*memConnector); ok {
		return &memConnector{image: mc.image, writable: true}
	}
	return &fileCopyConnector{path: d.Path, dir: dir}
}

// fileCopyConnector opens connections on private copies of a file.
type fileCopyConnector struct {
	path, dir string
}

// Connect copies the file and opens the copy read-write.
func (f *fileCopyConnector) Connect(ctx context.Context) (driver.Conn, error) {
	src, err := os.Open(f.path)
	if err != nil {
		return nil, fmt.Errorf("copy %s for writing: %w", f.path, err)
	}
	defer src.Close()
	dst, err := os.CreateTemp(f.dir, "toolenv-world-*.sqlite")
	if err != nil {
		return nil, fmt.Errorf("copy %s for writing: %w (set the temporary folder to one with room)", f.path, err)
	}
	name := dst.Name()
	defer os.Remove(name) // the open connection keeps the unlinked file
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return nil, fmt.Errorf("copy %s to %s: %w", f.path, name, err)
	}
	if err := dst.Close(); err != nil {
		return nil, fmt.Errorf("copy %s to %s: %w", f.path, name, err)
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, err
	}
	c, err := (&sqlite.Driver{}).Open("file:" + filepath.ToSlash(abs) + "?mode=rw&_defensive=1")
	if err != nil {
		return nil, err
	}
	ex, ok := c.(driver.ExecerContext)
	if !ok {
		c.Close()
		return nil, errors.New("the SQLite driver cannot execute statements")
	}
	for _, p := range []string{`PRAGMA journal_mode = MEMORY`, `PRAGMA synchronous = OFF`, `PRAGMA locking_mode = EXCLUSIVE`} {
		if _, err := ex.ExecContext(ctx, p, nil); err != nil {
			c.Close()
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return c, nil
}

// Driver returns the SQLite driver.
func (f *fileCopyConnector) Driver() driver.Driver { return &sqlite.Driver{} }
