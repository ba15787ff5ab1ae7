package sqlplan_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/nl2api/bird"
	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

// catalogs builds a catalog per database from dev_tables.json.
func catalogs(t testing.TB) map[string]*sqlplan.Catalog {
	schemas, err := bird.ReadTables(bird.Layout{Dir: shareddata.Require(t, "bird")}.Tables())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*sqlplan.Catalog{}
	for db, s := range schemas {
		var tables []*sqlplan.Table
		for _, st := range s.Tables {
			tt := &sqlplan.Table{Name: st.Name}
			for _, c := range st.Columns {
				k := "string"
				switch c.Type {
				case "integer":
					k = "integer"
				case "real", "number":
					k = "number"
				}
				tt.Columns = append(tt.Columns, sqlplan.Column{Name: c.Name, Kind: k})
			}
			tables = append(tables, tt)
		}
		out[db] = sqlplan.NewCatalog(tables)
	}
	return out
}

func allQuestions(t testing.TB) []bird.Question {
	l := bird.Layout{Dir: shareddata.Require(t, "bird")}
	qs, err := bird.ReadQuestions(l.Questions())
	if err != nil {
		t.Fatal(err)
	}
	corpus, err := bird.ReadQuestions(l.Corpus())
	if err != nil {
		t.Fatal(err)
	}
	return append(qs, corpus...)
}

func TestCoverage(t *testing.T) {
	cats := catalogs(t)
	qs := allQuestions(t)
	parsed, built := 0, 0
	reasons := map[string][]int{}
	for _, q := range qs {
		if _, err := sqlplan.Parse(q.SQL); err != nil {
			reasons["parse: "+err.Error()] = append(reasons["parse: "+err.Error()], q.ID)
			continue
		}
		parsed++
		if _, err := sqlplan.Build(q.SQL, cats[q.DB]); err != nil {
			r := err.(*sqlplan.Error)
			reasons[r.Reason] = append(reasons[r.Reason], q.ID)
			t.Logf("%d %s: %v", q.ID, q.DB, err)
			continue
		}
		built++
	}
	var keys []string
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%-30s %d", k, len(reasons[k]))
	}
	t.Logf("parsed %d/%d, resolved %d/%d", parsed, len(qs), built, len(qs))
	if len(qs) != 1389 {
		t.Fatalf("%d queries, want 1389", len(qs))
	}
	if parsed*100 < 99*len(qs) {
		t.Fatalf("parsed %d of %d, under 99%%", parsed, len(qs))
	}
	_ = strings.TrimSpace
}
