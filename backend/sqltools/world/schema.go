package world

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/toolenv/toolenv/backend/sqltools/rodb"
)

// Schema is what writing a database needs to know of it: its tables,
// their stored columns and keys, the foreign keys between them.
type Schema struct {
	Tables []*Table
	// Triggers are the database's own triggers, by name: worlds do not
	// run them (a world replays row changes, which would fire them
	// again), so the writable copies drop them.
	Triggers []string
	byName   map[string]*Table
}

// Table is one table of a Schema.
type Table struct {
	Name string
	// Columns are the stored columns (generated ones left out), in
	// order: the values of a row.
	Columns []*Column
	// Key are the primary key's columns in key order; nil for a table
	// without a primary key, whose rows are then identified by their
	// contents.
	Key []*Column
	// WithoutRowID says the table was made WITHOUT ROWID: a row is its
	// primary key.
	WithoutRowID bool
	// RowID is the name the rowid is reached by (rowid, _rowid_ or oid,
	// the first no column takes); "" for a WITHOUT ROWID table, or when
	// columns take all three (the table cannot be written).
	RowID string
	// Alias is the INTEGER PRIMARY KEY column that is the rowid, or nil.
	Alias *Column
	// Virtual says the table is a virtual table (not writable here).
	Virtual bool
	// Generated says the table has generated columns (written only
	// through their inputs).
	Generated bool
	// FKs are the foreign keys of this table (it is the child); Refs
	// those of other tables that refer to it.
	FKs  []*ForeignKey
	Refs []*ForeignKey
	// Uniques are the column lists of the table's unique indexes and
	// constraints, the primary key included.
	Uniques [][]string
	index   int
	byName  map[string]*Column
}

// Column is a stored column.
type Column struct {
	Name string
	// Type is the declared type; Kind its affinity as values are checked:
	// "integer", "number", "string" or "any" (no type, BLOB).
	Type, Kind string
	NotNull    bool
	// Default is the default expression as declared ("" : none);
	// Volatile says it changes with time or chance (CURRENT_TIMESTAMP,
	// random()), so a write must give the column's value for the world
	// to stay a function of its calls.
	Default  string
	Volatile bool
	// PK is the column's position in the primary key, from 1 (0: not in
	// it).
	PK    int
	index int
}

// ForeignKey is one foreign key: Child's columns refer to Parent's.
type ForeignKey struct {
	Child, Parent        *Table
	ChildCols            []*Column
	ParentCols           []*Column
	OnDelete, OnUpdate   string // NO ACTION, RESTRICT, CASCADE, SET NULL, SET DEFAULT
	id                   int
	parentName, onParent []string
}

// Table returns the named table (case-insensitive), or nil.
func (s *Schema) Table(name string) *Table { return s.byName[foldASCII(name)] }

// Column returns the named column (case-insensitive), or nil.
func (t *Table) Column(name string) *Column { return t.byName[foldASCII(name)] }

// Names returns the stored columns' names.
func (t *Table) Names() []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Name
	}
	return out
}

// KeyNames returns the key columns' names (nil without a key).
func (t *Table) KeyNames() []string {
	var out []string
	for _, c := range t.Key {
		out = append(out, c.Name)
	}
	return out
}

// Writable says why rows of t cannot be written, or "".
func (t *Table) Writable() string {
	switch {
	case t.Virtual:
		return "it is a virtual table"
	case !t.WithoutRowID && t.RowID == "":
		return "its columns are named rowid, _rowid_ and oid, so its rows cannot be told apart"
	case len(t.Key) > maxKeyColumns:
		return fmt.Sprintf("its primary key has more than %d columns", maxKeyColumns)
	}
	return ""
}

// maxKeyColumns bounds the width of a primary key worlds handle.
const maxKeyColumns = 16

var volatileDefault = regexp.MustCompile(`(?i)current_(time|date|timestamp)|random|'now'|"now"`)

// ReadSchema reads the schema of db.
func ReadSchema(ctx context.Context, db *rodb.DB) (*Schema, error) {
	s := &Schema{byName: map[string]*Table{}}
	rows, err := db.Query(ctx, `SELECT name, type FROM pragma_table_list WHERE schema = 'main' AND name NOT LIKE 'sqlite_%' ORDER BY name`, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("read the schema: %w", err)
	}
	for _, r := range rows.Rows {
		name, _ := r[0].(string)
		typ, _ := r[1].(string)
		if typ != "table" && typ != "virtual" {
			continue
		}
		t := &Table{Name: name, Virtual: typ == "virtual", index: len(s.Tables), byName: map[string]*Column{}}
		if rt := db.Table(name); rt != nil {
			t.WithoutRowID = rt.WithoutRowID
		}
		s.Tables = append(s.Tables, t)
		s.byName[foldASCII(name)] = t
	}
	for _, t := range s.Tables {
		if err := readTable(ctx, db, t); err != nil {
			return nil, err
		}
	}
	for _, t := range s.Tables {
		if err := readForeignKeys(ctx, db, s, t); err != nil {
			return nil, err
		}
	}
	trig, err := db.Query(ctx, `SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name`, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("read the triggers: %w", err)
	}
	for _, r := range trig.Rows {
		if n, ok := r[0].(string); ok {
			s.Triggers = append(s.Triggers, n)
		}
	}
	return s, nil
}

func readTable(ctx context.Context, db *rodb.DB, t *Table) error {
	if t.Virtual {
		return nil
	}
	cols, err := db.Query(ctx, `SELECT name, type, "notnull", dflt_value, pk, hidden FROM pragma_table_xinfo(?)`, []any{t.Name}, 0)
	if err != nil {
		return fmt.Errorf("read the columns of %s: %w", t.Name, err)
	}
	for _, r := range cols.Rows {
		hidden, _ := r[5].(int64)
		if hidden != 0 {
			t.Generated = true
			continue
		}
		c := &Column{index: len(t.Columns)}
		c.Name, _ = r[0].(string)
		c.Type, _ = r[1].(string)
		nn, _ := r[2].(int64)
		c.NotNull = nn != 0
		c.Default, _ = r[3].(string)
		c.Volatile = c.Default != "" && volatileDefault.MatchString(c.Default)
		pk, _ := r[4].(int64)
		c.PK = int(pk)
		c.Kind = kind(c.Type)
		t.Columns = append(t.Columns, c)
		t.byName[foldASCII(c.Name)] = c
	}
	for _, c := range t.Columns {
		if c.PK > 0 {
			t.Key = append(t.Key, c)
		}
	}
	sort.SliceStable(t.Key, func(i, j int) bool { return t.Key[i].PK < t.Key[j].PK })
	if !t.WithoutRowID {
		for _, n := range []string{"rowid", "_rowid_", "oid"} {
			if t.Column(n) == nil {
				t.RowID = n
				break
			}
		}
		if len(t.Key) == 1 && strings.EqualFold(strings.TrimSpace(t.Key[0].Type), "INTEGER") {
			t.Alias = t.Key[0]
		}
	}
	idx, err := db.Query(ctx, `SELECT name, origin FROM pragma_index_list(?) WHERE "unique" = 1 ORDER BY name`, []any{t.Name}, 0)
	if err != nil {
		return fmt.Errorf("read the indexes of %s: %w", t.Name, err)
	}
	for _, r := range idx.Rows {
		name, _ := r[0].(string)
		ic, err := db.Query(ctx, `SELECT name FROM pragma_index_info(?) ORDER BY seqno`, []any{name}, 0)
		if err != nil {
			return fmt.Errorf("read index %s: %w", name, err)
		}
		var list []string
		for _, c := range ic.Rows {
			if n, ok := c[0].(string); ok {
				list = append(list, n)
			}
		}
		if len(list) > 0 {
			t.Uniques = append(t.Uniques, list)
		}
	}
	if t.Alias != nil {
		t.Uniques = append(t.Uniques, []string{t.Alias.Name})
	}
	return nil
}

func readForeignKeys(ctx context.Context, db *rodb.DB, s *Schema, t *Table) error {
	if t.Virtual {
		return nil
	}
	rows, err := db.Query(ctx, `SELECT id, seq, "table", "from", "to", on_update, on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq`, []any{t.Name}, 0)
	if err != nil {
		return fmt.Errorf("read the foreign keys of %s: %w", t.Name, err)
	}
	var cur *ForeignKey
	var fks []*ForeignKey
	for _, r := range rows.Rows {
		id, _ := r[0].(int64)
		if cur == nil || cur.id != int(id) {
			cur = &ForeignKey{Child: t, id: int(id)}
			cur.OnUpdate, _ = r[5].(string)
			cur.OnDelete, _ = r[6].(string)
			parent, _ := r[2].(string)
			cur.parentName = []string{parent}
			fks = append(fks, cur)
		}
		from, _ := r[3].(string)
		to, _ := r[4].(string) // NULL: the parent's primary key
		c := t.Column(from)
		if c == nil {
			return fmt.Errorf("foreign key %d of %s names column %s, which the table lacks", id, t.Name, from)
		}
		cur.ChildCols = append(cur.ChildCols, c)
		cur.onParent = append(cur.onParent, to)
	}
	for _, fk := range fks {
		p := s.Table(fk.parentName[0])
		if p == nil || p.Virtual {
			// SQLite itself refuses writes to such a child when keys are
			// enforced; a world leaves the key unchecked, as SQLite does
			// with them off.
			continue
		}
		fk.Parent = p
		for i, to := range fk.onParent {
			var pc *Column
			if to == "" {
				if i < len(p.Key) {
					pc = p.Key[i]
				}
			} else {
				pc = p.Column(to)
			}
			if pc == nil {
				fk.Parent = nil
				break
			}
			fk.ParentCols = append(fk.ParentCols, pc)
		}
		if fk.Parent == nil || len(fk.ParentCols) != len(fk.ChildCols) {
			continue
		}
		t.FKs = append(t.FKs, fk)
		p.Refs = append(p.Refs, fk)
	}
	return nil
}

// kind is the affinity values of a declared type are checked against:
// SQLite's rules (section 3.1 of its datatype page), with BLOB and no
// type as "any".
func kind(declared string) string {
	t := strings.ToUpper(declared)
	switch {
	case strings.Contains(t, "INT"):
		return "integer"
	case strings.Contains(t, "CHAR"), strings.Contains(t, "CLOB"), strings.Contains(t, "TEXT"):
		return "string"
	case strings.Contains(t, "BLOB"), strings.TrimSpace(t) == "":
		return "any"
	}
	return "number"
}

// String describes fk for messages: child(cols) → parent(cols).
func (fk *ForeignKey) String() string {
	return fmt.Sprintf("%s(%s) → %s(%s)", fk.Child.Name, names(fk.ChildCols), fk.Parent.Name, names(fk.ParentCols))
}

func names(cols []*Column) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return strings.Join(out, ", ")
}

// foldASCII lower-cases the ASCII letters of an identifier, as SQLite
// compares identifiers (other letters are compared as they are).
func foldASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
