// Package mapevaltest generates BIRD-layout corpora whose REST endpoints
// are hard to map onto an obfuscated copy, for measuring failover on data
// nobody fitted to: tables that share column names, columns of one type
// described alike, near-duplicate endpoints that differ in one filter
// column, the same columns in another order, list endpoints that need no
// arguments. Blind then rewrites an obfuscated collection's documentation
// so that the columns of one type in one table get one name — what an
// obfuscation that renames columns too would leave — and documentation
// alone can no longer tell the near-duplicates apart.
package mapevaltest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/nl2api/bird"
	_ "modernc.org/sqlite" // the database/sql driver that writes the files
)

// Options configure Generate. The zero value is ready to use.
type Options struct {
	// Seed makes the corpus; the same seed gives the same files.
	Seed uint64
	// Tables per database (default 3) and Rows per table (default 40).
	Tables, Rows int
}

// Column is one generated column.
type Column struct {
	Name string
	// Type is "TEXT" or "INTEGER".
	Type string
}

// Table is one generated table.
type Table struct {
	Name    string
	Columns []Column
}

// Corpus is a generated BIRD-layout folder with one database.
type Corpus struct {
	Dir       string
	Database  string
	Tables    []Table
	Questions int
}

var (
	tableNames = []string{"team", "player", "venue", "league", "club", "coach", "match", "sponsor"}
	textCols   = []string{"city", "region", "colour", "category", "status", "country", "label", "brand"}
	intCols    = []string{"wins", "losses", "goals", "assists", "rank", "height", "weight", "points"}
	// words are the text values: one pool for every column, so that a
	// value found in one column is often found in another.
	words = []string{"north", "south", "east", "west", "red", "blue", "green", "gold", "alpha", "beta", "gamma", "delta", "river", "hill", "lake", "stone"}
)

// Generate writes a corpus for opt.Seed under dir (created if missing):
// dev.json, the database and its description CSVs.
func Generate(dir string, opt Options) (*Corpus, error) {
	if opt.Tables <= 0 {
		opt.Tables = 3
	}
	if opt.Rows <= 0 {
		opt.Rows = 40
	}
	opt.Tables = min(opt.Tables, len(tableNames))
	r := rand.New(rand.NewPCG(opt.Seed, 0x6d61706576616c))
	c := &Corpus{Dir: dir, Database: fmt.Sprintf("adversarial_%d", opt.Seed)}
	rows := map[string][][]any{}
	for _, ti := range r.Perm(len(tableNames))[:opt.Tables] {
		t := Table{Name: tableNames[ti], Columns: []Column{{"id", "INTEGER"}, {"name", "TEXT"}}}
		for _, i := range r.Perm(len(textCols))[:3] {
			t.Columns = append(t.Columns, Column{textCols[i], "TEXT"})
		}
		for _, i := range r.Perm(len(intCols))[:3] {
			t.Columns = append(t.Columns, Column{intCols[i], "INTEGER"})
		}
		for k := 0; k < opt.Rows; k++ {
			row := []any{k + 1, fmt.Sprintf("%s %s %d", t.Name, words[r.IntN(len(words))], k+1)}
			for _, col := range t.Columns[2:] {
				if col.Type == "TEXT" {
					row = append(row, words[r.IntN(6)+r.IntN(len(words)-6)])
				} else {
					row = append(row, r.IntN(10))
				}
			}
			rows[t.Name] = append(rows[t.Name], row)
		}
		c.Tables = append(c.Tables, t)
	}
	if err := writeDatabase(dir, c, rows); err != nil {
		return nil, err
	}
	var qs []bird.Question
	add := func(question, sql string) {
		qs = append(qs, bird.Question{ID: len(qs) + 1, DB: c.Database, Question: question, SQL: sql, Difficulty: "simple"})
	}
	for _, t := range c.Tables {
		vals := func(col string) []any {
			for i, cl := range t.Columns {
				if cl.Name == col {
					var out []any
					for _, row := range rows[t.Name] {
						out = append(out, row[i])
					}
					return out
				}
			}
			return nil
		}
		var texts, ints []string
		for _, col := range t.Columns[2:] {
			if col.Type == "TEXT" {
				texts = append(texts, col.Name)
			} else {
				ints = append(ints, col.Name)
			}
		}
		// Lists that need no arguments.
		for _, col := range t.Columns[2:] {
			add(fmt.Sprintf("List every %s of the %ss.", col.Name, t.Name), fmt.Sprintf("SELECT DISTINCT %s FROM %s", col.Name, t.Name))
		}
		// Near duplicates: the same answer column, one filter column apart.
		for _, col := range texts {
			v := vals(col)[r.IntN(opt.Rows)]
			add(fmt.Sprintf("Which %ss have the %s %s?", t.Name, col, v), fmt.Sprintf("SELECT name FROM %s WHERE %s = '%s'", t.Name, col, v))
		}
		for _, col := range ints {
			v := vals(col)[r.IntN(opt.Rows)]
			add(fmt.Sprintf("How many %ss have %d %s?", t.Name, v, col), fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s = %d", t.Name, col, v))
		}
		for _, col := range ints[:2] {
			add(fmt.Sprintf("Which %ss have more than 6 %s?", t.Name, col), fmt.Sprintf("SELECT name FROM %s WHERE %s > 6", t.Name, col))
		}
		// The same columns in another order.
		v := vals(texts[1])[r.IntN(opt.Rows)]
		add(fmt.Sprintf("Give the name and %s of the %ss whose %s is %s.", texts[0], t.Name, texts[1], v),
			fmt.Sprintf("SELECT name, %s FROM %s WHERE %s = '%s'", texts[0], t.Name, texts[1], v))
		add(fmt.Sprintf("Give the %s and name of the %ss whose %s is %s.", texts[0], t.Name, texts[1], v),
			fmt.Sprintf("SELECT %s, name FROM %s WHERE %s = '%s'", texts[0], t.Name, texts[1], v))
		// One column name in every table.
		add(fmt.Sprintf("What is the name of the %s with id 3?", t.Name), fmt.Sprintf("SELECT name FROM %s WHERE id = 3", t.Name))
	}
	raw, err := json.MarshalIndent(qs, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, bird.QuestionsFile), raw, 0o644); err != nil {
		return nil, fmt.Errorf("mapevaltest: %w", err)
	}
	c.Questions = len(qs)
	return c, nil
}

// description is what a column's description CSV says: the same words
// for every column of one type in a table.
func description(t Table, col Column) string {
	switch {
	case col.Name == "id":
		return "the identifier of the " + t.Name
	case col.Name == "name":
		return "the name of the " + t.Name
	case col.Type == "TEXT":
		return "a text attribute of the " + t.Name
	}
	return "a whole number recorded for the " + t.Name
}

func writeDatabase(root string, c *Corpus, rows map[string][][]any) error {
	dir := filepath.Join(root, bird.DatabasesDir, c.Database)
	if err := os.MkdirAll(filepath.Join(dir, "database_description"), 0o755); err != nil {
		return fmt.Errorf("mapevaltest: %w", err)
	}
	path := filepath.Join(dir, c.Database+".sqlite")
	_ = os.Remove(path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return fmt.Errorf("mapevaltest: %w", err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, t := range c.Tables {
		var defs []string
		for _, col := range t.Columns {
			def := col.Name + " " + col.Type
			if col.Name == "id" {
				def += " PRIMARY KEY"
			}
			defs = append(defs, def)
		}
		if _, err := db.ExecContext(ctx, "CREATE TABLE "+t.Name+" ("+strings.Join(defs, ", ")+")"); err != nil {
			return fmt.Errorf("mapevaltest: %w", err)
		}
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(t.Columns)), ", ")
		for _, row := range rows[t.Name] {
			if _, err := db.ExecContext(ctx, "INSERT INTO "+t.Name+" VALUES ("+marks+")", row...); err != nil {
				return fmt.Errorf("mapevaltest: %w", err)
			}
		}
		var csv strings.Builder
		csv.WriteString("original_column_name,column_name,column_description,data_format,value_description\n")
		for _, col := range t.Columns {
			format := "text"
			if col.Type == "INTEGER" {
				format = "integer"
			}
			fmt.Fprintf(&csv, "%s,%s,%s,%s,\n", col.Name, strings.ReplaceAll(col.Name, "_", " "), description(t, col), format)
		}
		if err := os.WriteFile(filepath.Join(dir, "database_description", t.Name+".csv"), []byte(csv.String()), 0o644); err != nil {
			return fmt.Errorf("mapevaltest: %w", err)
		}
	}
	return nil
}

// placeholder is the one name Blind gives every column of a type.
func placeholder(col Column) string {
	if col.Type == "TEXT" {
		return "attribute"
	}
	return "amount"
}

// Blind rewrites the documentation (tools.json) of an obfuscated REST
// collection of the corpus so that every column of one type in one table
// but id and name is called by one name: "team.city" and "team.region"
// both become "team.attribute", "team.wins" and "team.losses"
// "team.amount", and so do the bare column names of the response
// descriptions. Endpoints that differ in one filter column of one type
// are then documented alike; what they answer is untouched.
func Blind(collectionDir string, c *Corpus) error {
	path := filepath.Join(collectionDir, toolenv.ToolsFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("mapevaltest: %w", err)
	}
	var tools []*toolenv.Tool
	if err := toolenv.DecodeJSON(raw, &tools); err != nil {
		return fmt.Errorf("mapevaltest: %s: %w", path, err)
	}
	qualified := map[string]string{} // table.column → table.placeholder
	bare := map[string]string{}
	for _, t := range c.Tables {
		for _, col := range t.Columns[2:] {
			qualified[t.Name+"."+col.Name] = t.Name + "." + placeholder(col)
			bare[col.Name] = placeholder(col)
		}
	}
	var names []string
	for n := range bare {
		names = append(names, regexp.QuoteMeta(n))
	}
	sort.Strings(names)
	word := regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)
	dotted := regexp.MustCompile(`\b([a-z_]+)\.([a-z_]+)\b`)
	rewrite := func(s string) string {
		s = dotted.ReplaceAllStringFunc(s, func(m string) string {
			if p, ok := qualified[m]; ok {
				return p
			}
			return m
		})
		return word.ReplaceAllStringFunc(s, func(m string) string { return bare[m] })
	}
	var schema func(s *toolenv.Schema, depth int)
	schema = func(s *toolenv.Schema, depth int) {
		if s == nil || depth > 16 {
			return
		}
		s.Description, s.Title = rewrite(s.Description), rewrite(s.Title)
		for _, p := range s.Properties {
			schema(p, depth+1)
		}
		schema(s.Items, depth+1)
	}
	for _, t := range tools {
		t.Description, t.Title = rewrite(t.Description), rewrite(t.Title)
		schema(t.Input, 0)
		schema(t.Output, 0)
	}
	return toolenv.WriteJSONFile(path, tools)
}
