package decompose_test

import (
	"sort"
	"testing"

	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/nl2api/bird"
	"github.com/toolenv/toolenv/nl2api/decompose"
	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

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
				k := map[string]string{"integer": "integer", "real": "number"}[c.Type]
				if k == "" {
					k = "string"
				}
				tt.Columns = append(tt.Columns, sqlplan.Column{Name: c.Name, Kind: k})
			}
			tables = append(tables, tt)
		}
		out[db] = sqlplan.NewCatalog(tables)
	}
	return out
}

func TestDecomposeCoverage(t *testing.T) {
	cats := catalogs(t)
	l := bird.Layout{Dir: shareddata.Require(t, "bird")}
	for _, file := range []string{l.Questions(), l.Corpus()} {
		qs, err := bird.ReadQuestions(file)
		if err != nil {
			t.Fatal(err)
		}
		slot, sel := 0, 0
		reasons := map[string]int{}
		for _, q := range qs {
			p, err := sqlplan.Build(q.SQL, cats[q.DB])
			if err != nil {
				reasons["plan: "+err.(*sqlplan.Error).Reason]++
				continue
			}
			sp, err := decompose.Slot(p, q.DB, nil)
			if err != nil {
				reasons[err.(*sqlplan.Error).Reason]++
				if testing.Verbose() && file == l.Questions() {
					t.Logf("%d: %v | %s", q.ID, err, q.SQL)
				}
				continue
			}
			slot++
			if _, err := decompose.Sel(sp); err != nil {
				reasons["sel: "+err.(*sqlplan.Error).Reason]++
				continue
			}
			sel++
		}
		var keys []string
		for k := range reasons {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return reasons[keys[i]] > reasons[keys[j]] })
		for _, k := range keys {
			t.Logf("  %-40s %d", k, reasons[k])
		}
		t.Logf("%s: SLOT %d/%d, SEL %d/%d", file, slot, len(qs), sel, len(qs))
	}
}
