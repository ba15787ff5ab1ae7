package bird

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
)

// Schema is one database's schema as dev_tables.json gives it: enough to
// resolve the columns of SQL over databases that are not present.
type Schema struct {
	DB     string
	Tables []*SchemaTable
}

// SchemaTable is a table of a Schema.
type SchemaTable struct {
	Name    string
	Columns []SchemaColumn
}

// SchemaColumn is a column of a SchemaTable.
type SchemaColumn struct {
	Name string
	// Type is BIRD's type: "integer", "real", "text", "date", ...
	Type string
}

// ReadTables reads dev_tables.json into schemas by database name.
func ReadTables(path string) (map[string]*Schema, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read BIRD tables: %w", err)
	}
	var raw []struct {
		DB      string   `json:"db_id"`
		Tables  []string `json:"table_names_original"`
		Columns [][2]any `json:"column_names_original"`
		Types   []string `json:"column_types"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("read BIRD tables %s: %w", path, err)
	}
	out := make(map[string]*Schema, len(raw))
	for n, r := range raw {
		if r.DB == "" {
			return nil, fmt.Errorf("read BIRD tables %s: entry %d has no db_id: every database needs its name", path, n)
		}
		if _, dup := out[r.DB]; dup {
			return nil, fmt.Errorf("read BIRD tables %s: database %q is listed twice: keep one entry per db_id", path, r.DB)
		}
		s := &Schema{DB: r.DB}
		for _, t := range r.Tables {
			s.Tables = append(s.Tables, &SchemaTable{Name: t})
		}
		for i, c := range r.Columns {
			ti, name, err := tableColumn(c, len(s.Tables))
			if err != nil {
				return nil, fmt.Errorf("read BIRD tables %s: database %q, column_names_original[%d]: %w", path, r.DB, i, err)
			}
			if ti < 0 {
				continue // the "*" column
			}
			typ := ""
			if i < len(r.Types) {
				typ = strings.ToLower(r.Types[i])
			}
			t := s.Tables[ti]
			t.Columns = append(t.Columns, SchemaColumn{Name: name, Type: typ})
		}
		out[r.DB] = s
	}
	return out, nil
}

// tableColumn checks one entry of column_names_original, [table index,
// "name"], against the database's n tables; the "*" column, [-1, "*"],
// has index -1.
func tableColumn(c [2]any, n int) (int, string, error) {
	f, ok := c[0].(float64)
	if !ok || f != math.Trunc(f) || f < -1 || f >= float64(n) {
		return 0, "", fmt.Errorf("table index %v: want the index of one of its %d tables (table_names_original), or -1 for \"*\"", c[0], n)
	}
	name, ok := c[1].(string)
	if !ok || name == "" {
		return 0, "", fmt.Errorf("column name %v: want a non-empty string", c[1])
	}
	if (f == -1) != (name == "*") {
		return 0, "", fmt.Errorf("column %q with table index %v: only \"*\" has index -1", name, f)
	}
	return int(f), name, nil
}
