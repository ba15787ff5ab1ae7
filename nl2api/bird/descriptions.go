package bird

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ColumnDescription is one row of a database_description CSV.
type ColumnDescription struct {
	Table string `json:"table"`
	// Column is original_column_name, the name in the database.
	Column string `json:"column"`
	// Name is column_name, a readable name (often empty).
	Name string `json:"name,omitempty"`
	// Description is column_description.
	Description string `json:"description,omitempty"`
	// Format is data_format ("integer", "text", "real", ...).
	Format string `json:"format,omitempty"`
	// Values is value_description: units, codes, commonsense evidence.
	Values string `json:"values,omitempty"`
}

// Descriptions holds a database's column descriptions by table and
// column (both lower-cased).
type Descriptions struct {
	tables map[string]map[string]*ColumnDescription
	// Encodings records the encoding each file was in, by file name.
	Encodings map[string]Encoding
}

// Column returns the description of table.column (case-insensitive), or
// nil.
func (d *Descriptions) Column(table, column string) *ColumnDescription {
	if d == nil {
		return nil
	}
	return d.tables[strings.ToLower(table)][strings.ToLower(strings.TrimSpace(column))]
}

// ReadDescriptions reads every <table>.csv in dir. A file that cannot be
// parsed is reported in problems and skipped, so one broken file never
// loses the others; a missing folder is an error.
func ReadDescriptions(dir string) (*Descriptions, []error, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read column descriptions: %w", err)
	}
	d := &Descriptions{tables: map[string]map[string]*ColumnDescription{}, Encodings: map[string]Encoding{}}
	var problems []error
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() && strings.EqualFold(filepath.Ext(e.Name()), ".csv") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", name, err))
			continue
		}
		table := strings.TrimSuffix(name, filepath.Ext(name))
		cols, enc, err := ParseDescriptionCSV(table, data)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", name, err))
			continue
		}
		d.Encodings[name] = enc
		m := map[string]*ColumnDescription{}
		for _, c := range cols {
			m[strings.ToLower(c.Column)] = c
		}
		d.tables[strings.ToLower(table)] = m
	}
	return d, problems, nil
}

// ParseDescriptionCSV parses one description file of table. The header
// names the columns (original_column_name, column_name,
// column_description, data_format, value_description); rows with fewer
// fields are padded, fields are trimmed.
func ParseDescriptionCSV(table string, data []byte) ([]*ColumnDescription, Encoding, error) {
	text, enc := Decode(data)
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	header, err := r.Read()
	if err != nil {
		return nil, enc, fmt.Errorf("no header: %w", err)
	}
	idx := map[string]int{}
	for i, h := range header {
		idx[strings.ToLower(strings.TrimSpace(h))] = i
	}
	orig, ok := idx["original_column_name"]
	if !ok {
		return nil, enc, errors.New("no original_column_name column in the header")
	}
	field := func(rec []string, name string) string {
		i, ok := idx[name]
		if !ok || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	var out []*ColumnDescription
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, enc, err
		}
		if orig >= len(rec) || strings.TrimSpace(rec[orig]) == "" {
			continue
		}
		out = append(out, &ColumnDescription{
			Table:       table,
			Column:      strings.TrimSpace(rec[orig]),
			Name:        field(rec, "column_name"),
			Description: field(rec, "column_description"),
			Format:      field(rec, "data_format"),
			Values:      field(rec, "value_description"),
		})
	}
	return out, enc, nil
}
