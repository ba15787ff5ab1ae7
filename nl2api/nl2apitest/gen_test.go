package nl2apitest_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/toolenv/toolenv/nl2api/bird"
	"github.com/toolenv/toolenv/nl2api/nl2apitest"
)

// The same seed writes the same corpus; another seed another one.
func TestGenerateDeterministic(t *testing.T) {
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	ca, err := nl2apitest.Generate(a, nl2apitest.Options{Seed: 7, BigRows: 200})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nl2apitest.Generate(b, nl2apitest.Options{Seed: 7, BigRows: 200}); err != nil {
		t.Fatal(err)
	}
	if _, err := nl2apitest.Generate(c, nl2apitest.Options{Seed: 8, BigRows: 200}); err != nil {
		t.Fatal(err)
	}
	if fa, fb := dump(t, a, ca.Databases), dump(t, b, ca.Databases); fa != fb {
		t.Error("seed 7 twice gave different corpora")
	}
	qa, _ := os.ReadFile(filepath.Join(a, bird.QuestionsFile))
	qc, _ := os.ReadFile(filepath.Join(c, bird.QuestionsFile))
	if bytes.Equal(qa, qc) {
		t.Error("seeds 7 and 8 gave the same questions")
	}
	if len(ca.Questions) < 30 || len(ca.Identifiers) < 20 {
		t.Errorf("%d questions, %d identifiers", len(ca.Questions), len(ca.Identifiers))
	}
}

// The description files come in every encoding the generator promises,
// and the databases have an index on every column.
func TestGenerateEncodingsAndIndexes(t *testing.T) {
	dir := t.TempDir()
	c, err := nl2apitest.Generate(dir, nl2apitest.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	l := bird.Layout{Dir: dir}
	kinds := map[string]bool{}
	for _, db := range c.Databases {
		entries, err := os.ReadDir(l.Descriptions(db))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, _ := os.ReadFile(filepath.Join(l.Descriptions(db), e.Name()))
			switch {
			case !utf8.Valid(data):
				kinds["windows-1252"] = true
			case bytes.ContainsRune(data, 0x93):
				kinds["latin1-mojibake"] = true
			default:
				kinds["utf-8"] = true
			}
		}
		h, err := sql.Open("sqlite", "file:"+l.Database(db)+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		var cols, indexed int
		err = h.QueryRowContext(context.Background(), `SELECT (SELECT COUNT(*) FROM sqlite_master m, pragma_table_info(m.name) WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'),
			(SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL)`).Scan(&cols, &indexed)
		h.Close()
		if err != nil {
			t.Fatal(err)
		}
		if indexed != cols {
			t.Errorf("%s: %d columns, %d indexes", db, cols, indexed)
		}
	}
	for _, k := range []string{"windows-1252", "latin1-mojibake", "utf-8"} {
		if !kinds[k] {
			t.Errorf("no description file in %s", k)
		}
	}
}

// dump is every file of a corpus and every row of its databases.
func dump(t *testing.T, dir string, dbs []string) string {
	t.Helper()
	var b bytes.Buffer
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && filepath.Ext(p) != ".sqlite" {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			fmt.Fprintf(&b, "%s\n%s\n", rel, data)
		}
		return nil
	})
	for _, db := range dbs {
		h, err := sql.Open("sqlite", "file:"+bird.Layout{Dir: dir}.Database(db)+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		rows, err := h.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		var tables []string
		for rows.Next() {
			var n string
			rows.Scan(&n)
			tables = append(tables, n)
		}
		rows.Close()
		for _, tb := range tables {
			r, err := h.Query(`SELECT * FROM "` + tb + `"`)
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := r.Columns()
			for r.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				r.Scan(ptrs...)
				fmt.Fprintf(&b, "%s %v\n", tb, vals)
			}
			r.Close()
		}
		h.Close()
	}
	return b.String()
}
