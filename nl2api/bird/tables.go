package bird

import (
	"encoding/json"
	"fmt"
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
	for _, r := range raw {
		s := &Schema{DB: r.DB}
		for _, t := range r.Tables {
			s.Tables = append(s.Tables, &SchemaTable{Name: t})
		}
		for i, c := range r.Columns {
			ti, _ := c[0].(float64)
			name, _ := c[1].(string)
			if ti < 0 || int(ti) >= len(s.Tables) || name == "*" {
				continue
			}
			typ := ""
			if i < len(r.Types) {
				typ = strings.ToLower(r.Types[i])
			}
			t := s.Tables[int(ti)]
			t.Columns = append(t.Columns, SchemaColumn{Name: name, Type: typ})
		}
		out[r.DB] = s
	}
	return out, nil
}
