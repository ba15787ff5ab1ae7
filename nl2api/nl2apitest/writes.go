package nl2apitest

import (
	"fmt"
	"math/rand/v2"
)

// Names of the write shapes' tables and columns: keywords, toolenv's
// own fields, Unicode, spaces.
var (
	selfTableNames = []string{"Mitarbeiter", "order", "größe_tabelle", "staff"}
	compTableNames = []string{"Zuordnung", "select", "tag map", "links"}
	logTableNames  = []string{"protokoll", "label", "Ereignis-Log", "history"}
)

// addWriteShapes adds to d the tables writes must handle beyond the
// others': one referring to itself (ON DELETE SET NULL) with columns
// mostly NULL, one with a composite primary key (a rowid table) whose
// rows go with the main table's (ON DELETE CASCADE), and one without a
// primary key holding identical rows, referring to the first (CASCADE).
func addWriteShapes(r *rand.Rand, d *database, tn *namer) {
	p := d.main
	pk := p.col("pk").name
	s := &table{name: tn.from(selfTableNames), encoding: "utf-8"}
	s.cols = []*column{
		{name: "id", typ: "INTEGER PRIMARY KEY", role: "pk"},
		{name: "name", typ: "TEXT NOT NULL UNIQUE", role: "name"},
		{name: "chef", typ: "INTEGER REFERENCES " + quote(s.name) + " (id) ON DELETE SET NULL", role: "chef"},
		{name: "notiz", typ: "TEXT", role: "note"},
		{name: "stufe", typ: "REAL", role: "level"},
	}
	given := []string{"Ada", "Ümit", "O'Brien", "Zoë", "Li Na", "Björk", "Ñandú", "Kai", "Mia", "Noor", "Олег", "Jo"}
	for i := 0; i < 12; i++ {
		var chef, note, level any
		if i > 0 && r.IntN(4) != 0 {
			chef = int64(1 + r.IntN(i))
		}
		if r.IntN(5) == 0 {
			note = []string{"remote", "part time", "x&y", "100%"}[r.IntN(4)]
		}
		if r.IntN(2) == 0 {
			level = float64(r.IntN(6)) + 0.5
		}
		s.rows = append(s.rows, []any{int64(i + 1), given[i], chef, note, level})
	}
	c := &table{name: tn.from(compTableNames), encoding: "utf-8"}
	c.cols = []*column{
		{name: "p_ref", typ: "INTEGER NOT NULL REFERENCES " + quote(p.name) + " (" + quote(pk) + ") ON DELETE CASCADE", role: "ref"},
		{name: "tag", typ: "TEXT NOT NULL", role: "tag"},
		{name: "anteil", typ: "REAL", role: "share"},
	}
	c.constraints = []string{"PRIMARY KEY (p_ref, tag)"}
	pks := p.values("pk")
	for i := 0; i < 10 && i < len(pks); i++ {
		for _, tag := range []string{"rot", "grün"}[:1+r.IntN(2)] {
			var share any
			if r.IntN(3) != 0 {
				share = float64(r.IntN(100)) / 100
			}
			c.rows = append(c.rows, []any{pks[i], tag, share})
		}
	}
	l := &table{name: tn.from(logTableNames), encoding: "utf-8"}
	l.cols = []*column{
		{name: "wer", typ: "INTEGER REFERENCES " + quote(s.name) + " (id) ON DELETE CASCADE", role: "who"},
		{name: "eintrag", typ: "TEXT", role: "entry"},
		{name: "wert", typ: "INTEGER", role: "value"},
	}
	for i := 0; i < 14; i++ {
		var who any
		if r.IntN(5) != 0 {
			who = int64(1 + r.IntN(12))
		}
		row := []any{who, []string{"start", "stop", "pause"}[r.IntN(3)], int64(r.IntN(4))}
		l.rows = append(l.rows, row)
		if i%5 == 0 {
			l.rows = append(l.rows, append([]any(nil), row...)) // an identical row
		}
	}
	d.self, d.comp, d.log = s, c, l
	d.tables = append(d.tables, s, c, l)
}

// writeQuestions adds questions over the write shapes' tables, whose
// WHERE conditions write tasks are made from.
func (qb *questions) writeQuestions() {
	d, r := qb.d, qb.r
	s, c, l := d.self, d.comp, d.log
	S, C, L := qb.id(s.name), qb.id(c.name), qb.id(l.name)
	name := s.rows[r.IntN(len(s.rows))][1]
	qb.add("write_self_eq", fmt.Sprintf("What is the note of %v?", name),
		fmt.Sprintf("SELECT notiz FROM %s WHERE name = %s", S, lit(name)), allFlavors, "")
	chef := int64(1 + r.IntN(3))
	qb.add("write_self_ref", "Who reports to this person?",
		fmt.Sprintf("SELECT name FROM %s WHERE chef = %d", S, chef), allFlavors, "")
	qb.add("write_self_null", "Who has no note and a high level?",
		fmt.Sprintf("SELECT name FROM %s WHERE notiz IS NULL AND stufe > %d", S, 3), allFlavors, "")
	ref := c.rows[r.IntN(len(c.rows))][0]
	qb.add("write_comp", "Which tags does this row have, with a small share?",
		fmt.Sprintf("SELECT tag FROM %s WHERE p_ref = %v AND tag = 'rot'", C, ref), allFlavors, "")
	qb.add("write_log", "Which entries have this value?",
		fmt.Sprintf("SELECT eintrag FROM %s WHERE wert = %d AND eintrag = 'pause'", L, r.IntN(4)), allFlavors, "")
}
