package rodb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"modernc.org/sqlite"
)

// Options configure how a database is opened.
type Options struct {
	// InMemoryMaxBytes is the largest database file copied into memory
	// with an index on every column. 0 means 64 MiB; a negative value
	// never copies (queries run on the file).
	InMemoryMaxBytes int64
	// MaxConns bounds the connection pool. 0 means 4.
	MaxConns int
	// Logger receives open/index timings at debug level; nil discards.
	Logger *slog.Logger
	// Images, when set, shares the indexed in-memory images of database
	// files between the opens given the same Images: a file is copied
	// and indexed once (see Images).
	Images *Images
	// Cache, when set, keeps the indexed images on disk for every
	// process to reuse (see DiskCache); nil: each process indexes its
	// own.
	Cache *DiskCache
}

const defaultInMemoryMaxBytes = 64 << 20

// DB is one read-only database.
type DB struct {
	// Name is the database's name (BIRD's db_id).
	Name string
	// Path is the file it was opened from.
	Path string
	// InMemory says the database is served from an indexed in-memory copy.
	InMemory bool

	db *sql.DB
	// connector is the in-memory image's (nil: the file's).
	connector driver.Connector
	tables    []*Table
	byName    map[string]*Table
}

// Table is a table of the database's schema.
type Table struct {
	Name    string
	Columns []*Column
	// WithoutRowID says the table was created WITHOUT ROWID: its rows are
	// identified by their primary key only.
	WithoutRowID bool
	byName       map[string]*Column
}

// RowKey returns SQL expressions, over the table under alias (quoted by
// the caller's scope), that identify each of its rows and order them:
// the rowid, under the first of rowid, _rowid_ and oid that no column
// takes as its name; for a WITHOUT ROWID table (or one whose columns take
// all three names) the primary key columns in key order; failing that,
// every column.
func (t *Table) RowKey(alias string) []string {
	q := Quote(alias) + "."
	if !t.WithoutRowID {
		for _, n := range []string{"rowid", "_rowid_", "oid"} {
			if t.Column(n) == nil {
				return []string{q + n}
			}
		}
	}
	var pk []*Column
	for _, c := range t.Columns {
		if c.PK {
			pk = append(pk, c)
		}
	}
	sort.SliceStable(pk, func(i, j int) bool { return pk[i].pkSeq < pk[j].pkSeq })
	if len(pk) == 0 {
		pk = t.Columns
	}
	out := make([]string, len(pk))
	for i, c := range pk {
		out[i] = q + Quote(c.Name)
	}
	return out
}

// Column is a column of a table.
type Column struct {
	Name string
	// Type is the declared type as written ("INTEGER", "TEXT", "REAL", "").
	Type string
	// PK says the column is (part of) the primary key.
	PK bool
	// NotNull says the column is declared NOT NULL.
	NotNull bool

	pkSeq int // position in the primary key, from 1
}

// Kind returns the JSON Schema type of a declared SQLite type, following
// SQLite's affinity rules: "integer", "number" or "string".
func (c *Column) Kind() string { return Kind(c.Type) }

// Kind maps a declared SQLite type to "integer", "number" or "string"
// with SQLite's affinity rules (section 3.1 of the datatype docs).
func Kind(declared string) string {
	t := strings.ToUpper(declared)
	switch {
	case strings.Contains(t, "INT"):
		return "integer"
	case strings.Contains(t, "CHAR"), strings.Contains(t, "CLOB"), strings.Contains(t, "TEXT"):
		return "string"
	case strings.Contains(t, "REAL"), strings.Contains(t, "FLOA"), strings.Contains(t, "DOUB"),
		strings.Contains(t, "NUM"), strings.Contains(t, "DEC"):
		return "number"
	}
	return "string"
}

// Open opens the database file at path read-only. A missing file, a file
// that is not a SQLite database or one that cannot be read is an error
// that names the file.
func Open(ctx context.Context, name, path string, opt Options) (*DB, error) {
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w (check the --data folder: BIRD keeps it at dev_databases/%s/%s.sqlite)", name, err, name, name)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("open database %s: %s is a folder, not a SQLite file", name, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", name, err)
	}
	fileDB, err := sql.Open("sqlite", fileURI(abs))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", name, err)
	}
	d := &DB{Name: name, Path: abs, db: fileDB}
	if err := d.readSchema(ctx); err != nil {
		fileDB.Close()
		return nil, fmt.Errorf("open database %s (%s): %w", name, abs, err)
	}
	limit := opt.InMemoryMaxBytes
	if limit == 0 {
		limit = defaultInMemoryMaxBytes
	}
	maxConns := opt.MaxConns
	if maxConns <= 0 {
		maxConns = 4
	}
	if limit > 0 && st.Size() <= limit {
		build := d.indexedImage
		if c := opt.Cache; c != nil {
			build = func(ctx context.Context) ([]byte, error) {
				var ver string
				if err := fileDB.QueryRowContext(ctx, `SELECT sqlite_version()`).Scan(&ver); err != nil {
					return nil, err
				}
				return c.image(ctx, abs, fmt.Sprintf("rules=%d sqlite=%s", indexRules, ver), d.indexedImage)
			}
		}
		var img []byte
		var err error
		if opt.Images != nil {
			img, err = opt.Images.get(ctx, abs, st, build)
		} else {
			img, err = build(ctx)
		}
		if err != nil {
			fileDB.Close()
			return nil, fmt.Errorf("open database %s (%s): copy into memory: %w", name, abs, err)
		}
		fileDB.Close()
		d.connector = &memConnector{image: img}
		d.db = sql.OpenDB(d.connector)
		d.InMemory = true
		log.Debug("database served from memory", "db", name, "file_bytes", st.Size(), "image_bytes", len(img))
	}
	d.db.SetMaxOpenConns(maxConns)
	d.db.SetMaxIdleConns(maxConns)
	return d, nil
}

// fileURI is the read-only, immutable SQLite URI of an absolute path.
func fileURI(abs string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	return u.String() + "?mode=ro&immutable=1"
}

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// Tables returns the schema's tables in the order SQLite lists them.
func (d *DB) Tables() []*Table { return d.tables }

// Table returns the named table (case-insensitive), or nil.
func (d *DB) Table(name string) *Table { return d.byName[strings.ToLower(name)] }

// Column returns the named column (case-insensitive), or nil.
func (t *Table) Column(name string) *Column { return t.byName[strings.ToLower(name)] }

func (d *DB) readSchema(ctx context.Context) error {
	rows, err := d.db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid`)
	if err != nil {
		return fmt.Errorf("read schema (is it a SQLite database?): %w", err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return fmt.Errorf("read schema: %w", err)
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read schema (is it a SQLite database?): %w", err)
	}
	if len(names) == 0 {
		return errors.New("the database has no tables")
	}
	d.byName = make(map[string]*Table, len(names))
	for _, n := range names {
		t := &Table{Name: n, byName: map[string]*Column{}}
		crows, err := d.db.QueryContext(ctx, `SELECT name, type, "notnull", pk FROM pragma_table_info(?)`, n)
		if err != nil {
			return fmt.Errorf("read columns of %s: %w", n, err)
		}
		for crows.Next() {
			var c Column
			var notnull, pk int
			if err := crows.Scan(&c.Name, &c.Type, &notnull, &pk); err != nil {
				crows.Close()
				return fmt.Errorf("read columns of %s: %w", n, err)
			}
			c.NotNull, c.PK, c.pkSeq = notnull != 0, pk != 0, pk
			cc := c
			t.Columns = append(t.Columns, &cc)
			t.byName[strings.ToLower(c.Name)] = &cc
		}
		crows.Close()
		// pragma_table_list (SQLite 3.37) says whether a table has rowids.
		var wr int
		if err := d.db.QueryRowContext(ctx, `SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?`, n).Scan(&wr); err == nil {
			t.WithoutRowID = wr != 0
		}
		d.tables = append(d.tables, t)
		d.byName[strings.ToLower(n)] = t
	}
	return nil
}

// serializer is the part of modernc's connection used to copy a database.
type serializer interface {
	Serialize() ([]byte, error)
	Deserialize([]byte) error
}

// indexedImage copies the file into memory, adds an index on every column
// that is not already the first column of an index or the rowid, and
// returns the serialized copy.
func (d *DB) indexedImage(ctx context.Context) ([]byte, error) {
	src, err := d.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var img []byte
	err = src.Raw(func(dc any) error {
		s, ok := dc.(serializer)
		if !ok {
			return errors.New("the SQLite driver cannot serialize")
		}
		var err error
		img, err = s.Serialize()
		return err
	})
	src.Close()
	if err != nil {
		return nil, err
	}
	mem := sql.OpenDB(&memConnector{image: img, writable: true})
	defer mem.Close()
	mem.SetMaxOpenConns(1)
	conn, err := mem.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	indexed := map[string]bool{}
	irows, err := conn.QueryContext(ctx, `SELECT m.tbl_name, ii.name FROM sqlite_master AS m, pragma_index_info(m.name) AS ii WHERE m.type = 'index' AND ii.seqno = 0`)
	if err != nil {
		return nil, err
	}
	for irows.Next() {
		var t, c string
		if err := irows.Scan(&t, &c); err != nil {
			irows.Close()
			return nil, err
		}
		indexed[strings.ToLower(t+"."+c)] = true
	}
	irows.Close()
	for ti, t := range d.tables {
		for ci, c := range t.Columns {
			if indexed[strings.ToLower(t.Name+"."+c.Name)] || (c.PK && strings.EqualFold(c.Type, "INTEGER") && pkCount(t) == 1) {
				continue
			}
			stmt := fmt.Sprintf(`CREATE INDEX %s ON %s(%s)`, Quote(fmt.Sprintf("toolenv_ix_%d_%d", ti, ci)), Quote(t.Name), Quote(c.Name))
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return nil, fmt.Errorf("index %s.%s: %w", t.Name, c.Name, err)
			}
		}
	}
	if _, err := conn.ExecContext(ctx, `ANALYZE`); err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	err = conn.Raw(func(dc any) error {
		var err error
		img, err = dc.(serializer).Serialize()
		return err
	})
	return img, err
}

func pkCount(t *Table) int {
	n := 0
	for _, c := range t.Columns {
		if c.PK {
			n++
		}
	}
	return n
}

// memConnector opens connections on a private in-memory copy of image.
type memConnector struct {
	image    []byte
	writable bool
}

// Connect opens a connection on a fresh copy of the image.
func (m *memConnector) Connect(ctx context.Context) (driver.Conn, error) {
	name := ":memory:"
	if m.writable {
		// Defensive: no write reaches sqlite_dbpage or a shadow table.
		name = "file::memory:?_defensive=1"
	}
	c, err := (&sqlite.Driver{}).Open(name)
	if err != nil {
		return nil, err
	}
	s, ok := c.(serializer)
	if !ok {
		c.Close()
		return nil, errors.New("the SQLite driver cannot deserialize")
	}
	if err := s.Deserialize(m.image); err != nil {
		c.Close()
		return nil, err
	}
	if !m.writable {
		ex, ok := c.(driver.ExecerContext)
		if !ok {
			c.Close()
			return nil, errors.New("the SQLite driver cannot execute statements")
		}
		if _, err := ex.ExecContext(ctx, `PRAGMA query_only = ON`, nil); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// Driver returns the SQLite driver.
func (m *memConnector) Driver() driver.Driver { return &sqlite.Driver{} }

// Quote quotes an SQL identifier.
func Quote(id string) string { return `"` + strings.ReplaceAll(id, `"`, `""`) + `"` }

// errInterrupted is how SQLite reports an interrupted statement.
const errInterrupted = "interrupted"

// wrapQueryError turns a query failure into a toolenv error with a status.
func wrapQueryError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return &toolenv.Error{Status: toolenv.StatusTimeout, Message: "the query ran longer than the per-call time limit and was interrupted", Hint: "narrow the data first (filter it) or raise the call timeout", Err: ctxErr}
		}
		return &toolenv.Error{Status: toolenv.StatusCanceled, Message: "the query was canceled", Err: ctxErr}
	}
	if strings.Contains(err.Error(), errInterrupted) {
		return &toolenv.Error{Status: toolenv.StatusTimeout, Message: "the query was interrupted", Err: err}
	}
	return err
}
