package bird

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Question is one BIRD question.
type Question struct {
	ID         int    `json:"question_id"`
	DB         string `json:"db_id"`
	Question   string `json:"question"`
	Evidence   string `json:"evidence"`
	SQL        string `json:"SQL"`
	Difficulty string `json:"difficulty"`
}

// The files of the BIRD layout, relative to its folder.
const (
	QuestionsFile = "dev.json"
	CorpusFile    = "dev_sql_corpus.json"
	TablesFile    = "dev_tables.json"
	DatabasesDir  = "dev_databases"
)

// ReadQuestions reads a BIRD question file (dev.json or the corpus). A
// question without an id, a database or SQL is an error naming it.
func ReadQuestions(path string) ([]Question, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read BIRD questions: %w", err)
	}
	text, _ := Decode(data)
	var qs []Question
	if err := json.Unmarshal([]byte(text), &qs); err != nil {
		return nil, fmt.Errorf("read BIRD questions %s: %w (want a JSON array of {question_id, db_id, question, evidence, SQL, difficulty})", path, err)
	}
	for i, q := range qs {
		if q.DB == "" || strings.TrimSpace(q.SQL) == "" {
			return nil, fmt.Errorf("read BIRD questions %s: entry %d (question_id %d) has no db_id or SQL", path, i, q.ID)
		}
	}
	return qs, nil
}

// Layout locates the files of a BIRD folder.
type Layout struct{ Dir string }

// Questions is the path of dev.json.
func (l Layout) Questions() string { return filepath.Join(l.Dir, QuestionsFile) }

// Corpus is the path of dev_sql_corpus.json.
func (l Layout) Corpus() string { return filepath.Join(l.Dir, CorpusFile) }

// Tables is the path of dev_tables.json.
func (l Layout) Tables() string { return filepath.Join(l.Dir, TablesFile) }

// Database is the path of a database's SQLite file.
func (l Layout) Database(db string) string {
	return filepath.Join(l.Dir, DatabasesDir, db, db+".sqlite")
}

// Descriptions is the folder of a database's column descriptions.
func (l Layout) Descriptions(db string) string {
	return filepath.Join(l.Dir, DatabasesDir, db, "database_description")
}

// DatabaseNames lists the databases questions refer to, sorted.
func DatabaseNames(qs []Question) []string {
	seen := map[string]bool{}
	var out []string
	for _, q := range qs {
		if !seen[q.DB] {
			seen[q.DB] = true
			out = append(out, q.DB)
		}
	}
	sort.Strings(out)
	return out
}
