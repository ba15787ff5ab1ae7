package nl2api

import (
	"errors"
	"io/fs"
	"sort"

	"github.com/toolenv/toolenv/nl2api/bird"
	"github.com/toolenv/toolenv/nl2api/decompose"
	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

// ParserReport is the parser's coverage of every BIRD query available:
// dev.json (all databases) and the SQL-only corpus.
type ParserReport struct {
	Parser  string `json:"parser"`
	Queries int    `json:"queries"`
	// Parsed counts queries the parser accepts.
	Parsed int `json:"parsed"`
	// Planned counts queries resolved against their schema (from the
	// database, or dev_tables.json when the database is absent).
	Planned int `json:"planned"`
	// SlotDecomposed and SelDecomposed count queries the SLOT / SEL
	// decomposition accepts (not executed: no databases for the corpus).
	SlotDecomposed int `json:"slot_decomposed"`
	SelDecomposed  int `json:"sel_decomposed"`
	// Failures groups the others by stage and reason.
	Failures []ReasonGroup `json:"failures,omitempty"`
	// Files lists what was read.
	Files []string `json:"files"`
	// TablesError says why dev_tables.json, present, could not be read:
	// queries over absent databases then go unplanned.
	TablesError string `json:"tables_error,omitempty"`
}

// ReasonGroup is the questions that failed for one reason.
type ReasonGroup struct {
	Stage     string     `json:"stage"`
	Reason    string     `json:"reason"`
	Count     int        `json:"count"`
	Questions []Rejected `json:"questions"`
}

// Rejected is one question that failed, and the details.
type Rejected struct {
	ID     int    `json:"question_id"`
	DB     string `json:"db"`
	Detail string `json:"detail,omitempty"`
}

// parserCoverage parses and plans every query of dev.json and of the
// corpus (when present), resolving against the opened databases or, for
// the others, dev_tables.json.
func parserCoverage(l bird.Layout, dev []bird.Question, dbs map[string]*database) ParserReport {
	rep := ParserReport{Parser: "github.com/sqlc-dev/meyer (SQLite grammar)", Files: []string{bird.QuestionsFile}}
	qs := append([]bird.Question(nil), dev...)
	if corpus, err := bird.ReadQuestions(l.Corpus()); err == nil {
		qs = append(qs, corpus...)
		rep.Files = append(rep.Files, bird.CorpusFile)
	}
	schemas, err := bird.ReadTables(l.Tables())
	switch {
	case err == nil:
		rep.Files = append(rep.Files, bird.TablesFile)
	case !errors.Is(err, fs.ErrNotExist):
		rep.TablesError = err.Error()
	}
	cats := map[string]*sqlplan.Catalog{}
	catalog := func(db string) *sqlplan.Catalog {
		if d := dbs[db]; d != nil && d.cat != nil {
			return d.cat
		}
		if c, ok := cats[db]; ok {
			return c
		}
		var tables []*sqlplan.Table
		if s := schemas[db]; s != nil {
			for _, st := range s.Tables {
				t := &sqlplan.Table{Name: st.Name}
				for _, c := range st.Columns {
					k := map[string]string{"integer": "integer", "real": "number"}[c.Type]
					if k == "" {
						k = "string"
					}
					t.Columns = append(t.Columns, sqlplan.Column{Name: c.Name, Kind: k})
				}
				tables = append(tables, t)
			}
		}
		cats[db] = sqlplan.NewCatalog(tables)
		return cats[db]
	}
	groups := map[[2]string]*ReasonGroup{}
	add := func(stage string, q bird.Question, err error) {
		reason, detail := "error", err.Error()
		var pe *sqlplan.Error
		if errors.As(err, &pe) {
			reason, detail = pe.Reason, pe.Detail
		}
		k := [2]string{stage, reason}
		g := groups[k]
		if g == nil {
			g = &ReasonGroup{Stage: stage, Reason: reason}
			groups[k] = g
		}
		g.Count++
		g.Questions = append(g.Questions, Rejected{ID: q.ID, DB: q.DB, Detail: detail})
	}
	for _, q := range qs {
		rep.Queries++
		if _, err := sqlplan.Parse(q.SQL); err != nil {
			add("parse", q, err)
			continue
		}
		rep.Parsed++
		p, err := sqlplan.Build(q.SQL, catalog(q.DB))
		if err != nil {
			add("plan", q, err)
			continue
		}
		rep.Planned++
		sp, err := decompose.Slot(p, q.DB, nil)
		if err != nil {
			add("slot", q, err)
			continue
		}
		rep.SlotDecomposed++
		if _, err := decompose.Sel(sp); err != nil {
			add("sel", q, err)
			continue
		}
		rep.SelDecomposed++
	}
	rep.Failures = sortGroups(groups)
	return rep
}

var stageOrder = map[string]int{"database": 0, "parse": 1, "plan": 2, "gold": 3, "slot": 4, "sel": 5, "decompose": 6, "verify": 7}

func sortGroups(m map[[2]string]*ReasonGroup) []ReasonGroup {
	out := make([]ReasonGroup, 0, len(m))
	for _, g := range m {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if stageOrder[out[i].Stage] != stageOrder[out[j].Stage] {
			return stageOrder[out[i].Stage] < stageOrder[out[j].Stage]
		}
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}
