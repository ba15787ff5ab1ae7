package bird_test

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/toolenv/toolenv/nl2api/bird"
)

// FuzzReadQuestions reads any file as BIRD's dev.json: no panic; every
// question it returns names a database and has SQL, and its text is
// valid UTF-8 whatever the file's encoding.
func FuzzReadQuestions(f *testing.F) {
	for _, s := range []string{
		`[{"question_id": 0, "db_id": "shop", "question": "How many?", "evidence": "x = 1", "SQL": "SELECT COUNT(*) FROM t", "difficulty": "simple"}]`,
		"[{\"question_id\": 1, \"db_id\": \"caf\xe9\", \"question\": \"Gr\xf6\xdfe \x93q\x94\", \"SQL\": \"SELECT 1\"}]",
		`[{"question_id": 2, "db_id": "", "SQL": "SELECT 1"}]`, `[{"db_id": "d", "SQL": "  "}]`, `{}`, ``, "\xef\xbb\xbf[]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "dev.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		qs, err := bird.ReadQuestions(path)
		if err != nil {
			return
		}
		for _, q := range qs {
			if q.DB == "" || q.SQL == "" {
				t.Fatalf("a question without a database or SQL: %+v", q)
			}
			if !utf8.ValidString(q.Question) || !utf8.ValidString(q.SQL) || !utf8.ValidString(q.Evidence) {
				t.Fatalf("invalid UTF-8 in %+v", q)
			}
		}
	})
}

// FuzzReadTables reads any file as BIRD's dev_tables.json: no panic;
// the schemas are keyed by their database and hold no "*" column and
// no column without a name.
func FuzzReadTables(f *testing.F) {
	for _, s := range []string{
		`[{"db_id": "shop", "table_names_original": ["orders", "items"], "column_names_original": [[-1, "*"], [0, "id"], [1, "name"]], "column_types": ["text", "INTEGER", "text"]}]`,
		`[{"db_id": "d", "table_names_original": ["t"], "column_names_original": [[5, "x"], [0.5, "y"], ["0", "z"], [0, 7]], "column_types": []}]`,
		`[{"db_id": "d", "column_names_original": [[1e300, "x"], [-1e300, "y"], [NaN, "z"]]}]`, `[]`, `{}`, `[null]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "dev_tables.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		schemas, err := bird.ReadTables(path)
		if err != nil {
			return
		}
		for db, s := range schemas {
			if s == nil || s.DB != db {
				t.Fatalf("schema of %q is %+v", db, s)
			}
			for _, tb := range s.Tables {
				for _, c := range tb.Columns {
					if c.Name == "*" || c.Name == "" {
						t.Fatalf("%s.%s holds a column named %q", db, tb.Name, c.Name)
					}
				}
			}
		}
	})
}
