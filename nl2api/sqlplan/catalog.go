package sqlplan

import "strings"

// Table is a table of a Catalog.
type Table struct {
	Name    string
	Columns []Column
	byName  map[string]int
}

// Column is a column of a Table.
type Column struct {
	Name string
	// Kind is "integer", "number" or "string".
	Kind string
}

// Column returns the named column (case-insensitive), or nil.
func (t *Table) Column(name string) *Column {
	if t.byName == nil {
		t.byName = make(map[string]int, len(t.Columns))
		for i, c := range t.Columns {
			t.byName[strings.ToLower(c.Name)] = i
		}
	}
	i, ok := t.byName[strings.ToLower(name)]
	if !ok {
		return nil
	}
	return &t.Columns[i]
}

// Catalog holds the tables SQL is resolved against.
type Catalog struct {
	tables map[string]*Table
}

// NewCatalog returns a catalog of tables (names are case-insensitive).
func NewCatalog(tables []*Table) *Catalog {
	c := &Catalog{tables: make(map[string]*Table, len(tables))}
	for _, t := range tables {
		c.tables[strings.ToLower(t.Name)] = t
	}
	return c
}

// Table returns the named table, or nil.
func (c *Catalog) Table(name string) *Table {
	if c == nil {
		return nil
	}
	return c.tables[strings.ToLower(name)]
}
