package bird_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/nl2api/bird"
)

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want string
		enc  bird.Encoding
	}{
		{"ascii", []byte("plain"), "plain", bird.UTF8},
		{"utf-8", []byte("caf\xc3\xa9 \xe2\x80\xa2"), "café •", bird.UTF8},
		{"bom", []byte("\xef\xbb\xbfid,name"), "id,name", bird.UTF8BOM},
		{"cp1252 bullet", []byte("\x95 Closed"), "• Closed", bird.Windows1252},
		{"cp1252 quotes", []byte("member\x92s \x93x\x94"), "member’s “x”", bird.Windows1252},
		{"latin-1 letters", []byte("caf\xe9"), "café", bird.Windows1252},
		{"undefined byte", []byte("a\x81b"), "a\u0081b", bird.Windows1252},
		// Windows-1252 once read as Latin-1 and saved as UTF-8 (BIRD's
		// superhero alignment.csv): C1 controls become the punctuation.
		{"utf-8 with C1 controls", []byte("\xc2\x95 Bad: \xc2\x93x\xc2\x94 \xc2\x80"), "• Bad: “x” €", bird.UTF8C1},
		// UTF-8 with a stray Windows-1252 byte keeps its UTF-8 letters.
		{"mixed", []byte("Gr\xc3\xb6\xc3\x9fe \x95 caf\xe9"), "Größe • café", bird.Windows1252},
		{"bom and C1", []byte("\xef\xbb\xbf\xc2\x92"), "’", bird.UTF8C1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, enc := bird.Decode(tc.in)
			if got != tc.want || enc != tc.enc {
				t.Fatalf("Decode = %q, %s; want %q, %s", got, enc, tc.want, tc.enc)
			}
		})
	}
}

func TestParseDescriptionCSV(t *testing.T) {
	for _, tc := range []struct {
		file   string
		enc    bird.Encoding
		column string
		check  func(*bird.ColumnDescription) bool
	}{
		{"cp1252.csv", bird.Windows1252, "status", func(c *bird.ColumnDescription) bool {
			return strings.HasPrefix(c.Values, "• Closed") && strings.Contains(c.Values, "• Open")
		}},
		{"bom.csv", bird.UTF8BOM, "name", func(c *bird.ColumnDescription) bool {
			return c.Name == "full name" && c.Description == "name of the thing — long"
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			cols, enc, err := bird.ParseDescriptionCSV("t", data)
			if err != nil {
				t.Fatal(err)
			}
			if enc != tc.enc {
				t.Fatalf("encoding %s, want %s", enc, tc.enc)
			}
			var found *bird.ColumnDescription
			for _, c := range cols {
				if c.Column == tc.column {
					found = c
				}
			}
			if found == nil || !tc.check(found) {
				t.Fatalf("column %s: %+v", tc.column, found)
			}
		})
	}
}

func TestRealLayout(t *testing.T) {
	dir := shareddata.Require(t, "bird")
	l := bird.Layout{Dir: dir}
	qs, err := bird.ReadQuestions(l.Questions())
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 287 {
		t.Fatalf("%d questions, want 287", len(qs))
	}
	if got := bird.DatabaseNames(qs); strings.Join(got, ",") != "student_club,superhero" {
		t.Fatalf("databases %v", got)
	}
	corpus, err := bird.ReadQuestions(l.Corpus())
	if err != nil || len(corpus) != 1102 {
		t.Fatalf("corpus: %d, %v", len(corpus), err)
	}
	d, problems, err := bird.ReadDescriptions(l.Descriptions("student_club"))
	if err != nil || len(problems) > 0 {
		t.Fatalf("descriptions: %v %v", problems, err)
	}
	if d.Encodings["budget.csv"] != bird.Windows1252 || d.Encodings["zip_code.csv"] != bird.UTF8 {
		t.Fatalf("encodings %v", d.Encodings)
	}
	es := d.Column("budget", "event_status")
	if es == nil || !strings.Contains(es.Values, "• Closed") {
		t.Fatalf("budget.event_status = %+v", es)
	}
	if c := d.Column("Member", "FIRST_NAME"); c == nil || c.Description != "member's first name" {
		t.Fatalf("member.first_name = %+v", c)
	}
	schemas, err := bird.ReadTables(l.Tables())
	if err != nil {
		t.Fatal(err)
	}
	if len(schemas) != 10 || len(schemas["superhero"].Tables) != 10 {
		t.Fatalf("schemas: %d", len(schemas))
	}
}

func TestReadQuestionsErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, body, want string }{
		{"not json", "{", "want a JSON array"},
		{"no sql", `[{"question_id": 3, "db_id": "x"}]`, "question_id 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".json")
			os.WriteFile(p, []byte(tc.body), 0o644)
			_, err := bird.ReadQuestions(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func FuzzParseDescriptionCSV(f *testing.F) {
	for _, name := range []string{"cp1252.csv", "bom.csv"} {
		data, _ := os.ReadFile(filepath.Join("testdata", name))
		f.Add(data)
	}
	f.Add([]byte("original_column_name\n\"unterminated"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cols, _, err := bird.ParseDescriptionCSV("t", data)
		if err != nil {
			return
		}
		for _, c := range cols {
			if c.Column == "" {
				t.Fatal("a column without a name was returned")
			}
		}
	})
}

// Decode always returns valid UTF-8 without C1 controls other than the
// five bytes Windows-1252 leaves undefined, and keeps valid UTF-8 text
// without them as it is.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"plain", "\xc2\x95 x", "Gr\xc3\xb6\xc3\x9fe \x95", "\xef\xbb\xbf\xc2\x92", "\xff\xfe\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, enc := bird.Decode(data)
		if !utf8.ValidString(got) {
			t.Fatalf("%q decoded to invalid UTF-8", data)
		}
		for _, r := range got {
			if r >= 0x80 && r < 0xA0 && !strings.ContainsRune("\u0081\u008d\u008f\u0090\u009d", r) {
				t.Fatalf("%q decoded with C1 control %U", data, r)
			}
		}
		if enc == bird.UTF8 && got != string(data) {
			t.Fatalf("valid UTF-8 %q changed to %q", data, got)
		}
	})
}

// TestReadTablesRejectsMalformedColumns: a dev_tables.json entry that
// does not name a column of one of its tables is an error naming the
// database and the entry, never a column with an empty name.
func TestReadTablesRejectsMalformedColumns(t *testing.T) {
	const head = `[{"db_id": "shop", "table_names_original": ["orders", "items"], "column_types": ["text", "integer", "text"], "column_names_original": `
	for _, tc := range []struct {
		name, columns, want string
	}{
		{"good", `[[-1, "*"], [0, "id"], [1, "name"]]`, ""},
		{"name not a string", `[[-1, "*"], [0, 7]]`, `column_names_original[1]: column name 7`},
		{"empty name", `[[0, ""]]`, `column_names_original[0]: column name : want a non-empty string`},
		{"null name", `[[0, null]]`, `column name <nil>`},
		{"fractional index", `[[0.5, "y"]]`, `table index 0.5`},
		{"index past the tables", `[[2, "x"]]`, `one of its 2 tables`},
		{"index as a string", `[["0", "z"]]`, `table index 0`},
		{"star on a table", `[[0, "*"]]`, `only "*" has index -1`},
		{"column on no table", `[[-1, "id"]]`, `only "*" has index -1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dev_tables.json")
			if err := os.WriteFile(path, []byte(head+tc.columns+"}]"), 0o644); err != nil {
				t.Fatal(err)
			}
			schemas, err := bird.ReadTables(path)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				s := schemas["shop"]
				if len(s.Tables) != 2 || len(s.Tables[0].Columns) != 1 || s.Tables[0].Columns[0] != (bird.SchemaColumn{Name: "id", Type: "integer"}) || s.Tables[1].Columns[0].Name != "name" {
					t.Fatalf("schema %+v %+v", s.Tables[0], s.Tables[1])
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `database "shop"`) {
				t.Fatalf("err = %v; want it to name database \"shop\" and say %q", err, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, file, want string }{
		{"no db_id", `[{"table_names_original": []}]`, "entry 0 has no db_id"},
		{"twice", `[{"db_id": "a"}, {"db_id": "a"}]`, `database "a" is listed twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dev_tables.json")
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := bird.ReadTables(path); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want %q", err, tc.want)
			}
		})
	}
}
