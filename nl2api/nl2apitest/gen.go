package nl2apitest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolenv/toolenv/nl2api/bird"
	_ "modernc.org/sqlite" // the database/sql driver that writes the files
)

// Options configure Generate. The zero value is ready to use.
type Options struct {
	// Seed makes the corpus; the same seed gives the same files.
	Seed uint64
	// Databases is how many databases to make (default 2).
	Databases int
	// Writes adds to every database the shapes writes must handle
	// (a table referring to itself with columns mostly NULL, a composite
	// primary key with ON DELETE CASCADE, a table without a primary key
	// holding identical rows) and questions over them.
	Writes bool
	// BigRows, when positive, adds to the first database a table with
	// this many rows (give more than the serving row cap, 10,000, to
	// test intermediate results over it) and questions whose answers are
	// small.
	BigRows int
}

// Question is one generated question: BIRD's fields and what a correct
// builder must do with it.
type Question struct {
	bird.Question
	// Kind names the SQL shape ("filter_eq", "union", ...).
	Kind string
	// Keep lists the flavors ("slot", "sel", "rest") that must keep the
	// question.
	Keep []string
	// Reject, when set, is the rejection stage every flavor must report
	// (e.g. "gold": SQLite rejects the gold SQL), or only the flavors of
	// RejectIn when it is set.
	Reject string
	// RejectIn, when set, are the flavors Reject applies to.
	RejectIn []string
	// RejectReason, when set, is the reason the rejection must give.
	RejectReason string
}

// MustReject returns the stage at which flavor must reject q, or "".
func (q *Question) MustReject(flavor string) string {
	if q.Reject == "" {
		return ""
	}
	if len(q.RejectIn) == 0 {
		return q.Reject
	}
	for _, f := range q.RejectIn {
		if f == flavor {
			return q.Reject
		}
	}
	return ""
}

// Corpus is a generated BIRD-layout folder.
type Corpus struct {
	Dir       string
	Seed      uint64
	Questions []Question
	// Databases are the database names.
	Databases []string
	// Identifiers are every table and column name of every database, as
	// the databases spell them.
	Identifiers []string
}

// Question returns the question with id, or nil.
func (c *Corpus) Question(id int) *Question {
	for i := range c.Questions {
		if c.Questions[i].ID == id {
			return &c.Questions[i]
		}
	}
	return nil
}

// column is one generated column; role says what the question
// templates use it for.
type column struct {
	name string
	typ  string // SQL type as declared
	role string
}

// table is one generated table with its rows.
type table struct {
	name         string
	cols         []*column
	rows         [][]any
	pk           []string // WITHOUT ROWID primary key
	withoutRowid bool
	constraints  []string // table constraints after the columns
	encoding     string   // of its description CSV: "utf-8", "utf-8-bom", "windows-1252", "latin1-mojibake"
}

func (t *table) col(role string) *column {
	for _, c := range t.cols {
		if c.role == role {
			return c
		}
	}
	panic("nl2apitest: no column with role " + role + " in " + t.name)
}

func (t *table) colIndex(role string) int {
	for i, c := range t.cols {
		if c.role == role {
			return i
		}
	}
	panic("nl2apitest: no column with role " + role)
}

// tiedAtTop reports whether several rows share the largest value of
// column key (SQLite's order: NULL least, numbers before text) and differ
// in column val.
func (t *table) tiedAtTop(key, val string) bool {
	k, v := t.colIndex(key), t.colIndex(val)
	var top any
	var vals []any
	for _, row := range t.rows {
		switch c := compareInt(row[k], top); {
		case c > 0 || vals == nil:
			top, vals = row[k], []any{row[v]}
		case c == 0:
			vals = append(vals, row[v])
		}
	}
	for _, x := range vals {
		if x != vals[0] {
			return true
		}
	}
	return false
}

// compareInt orders two integer column values as SQLite does (NULL
// first).
func compareInt(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	x, y := a.(int64), b.(int64)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// values returns the distinct non-null values of a column, in row order.
func (t *table) values(role string) []any {
	i := t.colIndex(role)
	seen := map[any]bool{}
	var out []any
	for _, row := range t.rows {
		v := row[i]
		if v == nil || seen[v] {
			continue
		}
		seen[v] = true
		out = append(out, v)
	}
	return out
}

// database is one generated database.
type database struct {
	name   string
	tables []*table
	main   *table // P
	child  *table // C, referencing P
	wr     *table // WITHOUT ROWID
	proto  *table // columns named like toolenv's protocol fields
	big    *table // over the row cap (optional)
	// self, comp and log are the write shapes (Options.Writes).
	self, comp, log *table
}

// Generate writes a corpus for opt.Seed under dir (created if missing).
func Generate(dir string, opt Options) (*Corpus, error) {
	if opt.Databases <= 0 {
		opt.Databases = 2
	}
	r := rand.New(rand.NewPCG(opt.Seed, 0x6e6c3273716c))
	c := &Corpus{Dir: dir, Seed: opt.Seed}
	var qs []Question
	used := map[string]bool{}
	for i := 0; i < opt.Databases; i++ {
		name := pick(r, dbNames)
		for base, n := name, 2; used[name]; n++ {
			name = fmt.Sprintf("%s_%d", base, n)
		}
		used[name] = true
		d := makeDatabase(r, name, i == 0 && opt.BigRows > 0, opt.BigRows)
		if opt.Writes {
			tn := &namer{r: r, used: map[string]bool{}}
			for _, t := range d.tables {
				tn.take(t.name)
			}
			addWriteShapes(r, d, tn)
		}
		if err := writeDatabase(dir, d); err != nil {
			return nil, err
		}
		c.Databases = append(c.Databases, name)
		for _, t := range d.tables {
			c.Identifiers = append(c.Identifiers, t.name)
			for _, col := range t.cols {
				c.Identifiers = append(c.Identifiers, col.name)
			}
		}
		qb := &questions{r: r, d: d, next: len(qs) + 1}
		qb.all()
		if opt.Writes {
			qb.writeQuestions()
		}
		qs = append(qs, qb.out...)
	}
	c.Questions = qs
	bq := make([]bird.Question, len(qs))
	for i, q := range qs {
		bq[i] = q.Question
	}
	raw, err := json.MarshalIndent(bq, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, bird.QuestionsFile), raw, 0o644); err != nil {
		return nil, fmt.Errorf("nl2apitest: %w", err)
	}
	return c, nil
}

func pick[T any](r *rand.Rand, list []T) T { return list[r.IntN(len(list))] }

// distinctNames picks one name per pool, no two equal (case-insensitive).
type namer struct {
	r    *rand.Rand
	used map[string]bool
}

func (n *namer) from(pool []string) string {
	for _, i := range n.r.Perm(len(pool)) {
		if !n.used[strings.ToLower(pool[i])] {
			n.used[strings.ToLower(pool[i])] = true
			return pool[i]
		}
	}
	for k := 2; ; k++ {
		s := fmt.Sprintf("%s_%d", pool[0], k)
		if !n.used[strings.ToLower(s)] {
			n.used[strings.ToLower(s)] = true
			return s
		}
	}
}

func (n *namer) take(name string) string {
	n.used[strings.ToLower(name)] = true
	return name
}

func makeDatabase(r *rand.Rand, name string, withBig bool, bigRows int) *database {
	d := &database{name: name}
	tn := &namer{r: r, used: map[string]bool{}}
	// P: the main table.
	pn := &namer{r: r, used: map[string]bool{}}
	p := &table{name: tn.from(tableNames), encoding: "windows-1252"}
	pair := pick(r, collisionPairs)
	long := []string{"north", "south", "east", "west"}
	la := r.IntN(len(long))
	lb := (la + 1 + r.IntN(len(long)-1)) % len(long)
	p.cols = []*column{
		{name: pn.from(pkNames), typ: "INTEGER PRIMARY KEY", role: "pk"},
		{name: pn.from(protocolNames), typ: "TEXT", role: "cat"},
		{name: pn.from(textNames), typ: "TEXT", role: "txt"},
		{name: pn.from(intNames), typ: "INTEGER", role: "n"},
		{name: pn.from(realNames), typ: "REAL", role: "x"},
		{name: pn.from(dateNames), typ: "TEXT", role: "d"},
		{name: pn.from(uniqueNames), typ: "INTEGER", role: "u"},
		{name: pn.take(pair[0]), typ: "TEXT", role: "pair_a"},
		{name: pn.take(pair[1]), typ: "TEXT", role: "pair_b"},
		{name: pn.take(longPrefix + long[la]), typ: "INTEGER", role: "long_a"},
		{name: pn.take(longPrefix + long[lb]), typ: "INTEGER", role: "long_b"},
		{name: pn.take("item_id"), typ: "INTEGER", role: "item_id"},
	}
	// Every main table has a non-ASCII column name (its amount column
	// when no other is), which tools must transliterate and titles keep.
	if !slices.ContainsFunc(p.cols, func(c *column) bool { return !isASCII(c.name) }) {
		var uni []string
		for _, n := range realNames {
			if !isASCII(n) {
				uni = append(uni, n)
			}
		}
		p.cols[4].name = pick(r, uni)
	}
	cats := pickDistinct(r, nastyStrings, 5)
	nP := 30 + r.IntN(30)
	perm := r.Perm(nP)
	for i := 0; i < nP; i++ {
		var cat any = cats[r.IntN(len(cats))]
		switch r.IntN(12) {
		case 0:
			cat = nil
		case 1:
			cat = ""
		}
		var x any = float64(r.IntN(100000)) / 100
		if r.IntN(7) == 0 {
			x = nil
		}
		row := []any{
			int64(i + 1), cat, fmt.Sprintf("%s %d", pick(r, nastyStrings), i), int64(r.IntN(6)), x,
			fmt.Sprintf("%d-%02d-%02d", 2019+r.IntN(5), 1+r.IntN(12), 1+r.IntN(28)), int64(perm[i] + 1),
			pick(r, nastyStrings), pick(r, nastyStrings), int64(r.IntN(4)), int64(r.IntN(4)), int64(r.IntN(50)),
		}
		p.rows = append(p.rows, row)
	}
	// C: a child of P whose name makes <C>_id equal to <P>_item_id, and
	// with a column called rowid.
	cn := &namer{r: r, used: map[string]bool{}}
	c := &table{name: tn.take(p.name + "_item"), encoding: "latin1-mojibake"}
	c.cols = []*column{
		{name: cn.take("id"), typ: "INTEGER PRIMARY KEY", role: "pk"},
		{name: cn.from(fkNames), typ: "INTEGER", role: "fk"},
		{name: cn.from(childText), typ: "TEXT", role: "ctext"},
		{name: cn.from(childInt), typ: "INTEGER", role: "cint"},
		{name: cn.take("rowid"), typ: "TEXT", role: "rowid"},
	}
	nC := 40 + r.IntN(40)
	for i := 0; i < nC; i++ {
		c.rows = append(c.rows, []any{int64(100 + i), int64(1 + r.IntN(nP)), pick(r, nastyStrings), int64(r.IntN(10)), fmt.Sprintf("r%d", r.IntN(1000))})
	}
	// W: WITHOUT ROWID, composite primary key.
	wn := &namer{r: r, used: map[string]bool{}}
	w := &table{name: tn.from(tableNames), withoutRowid: true, encoding: "utf-8"}
	w.cols = []*column{
		{name: wn.from(wKeyNames), typ: "TEXT", role: "wk"},
		{name: wn.from(wSeqNames), typ: "INTEGER", role: "wn"},
		{name: wn.from(wValNames), typ: "TEXT", role: "wv"},
	}
	w.pk = []string{w.cols[0].name, w.cols[1].name}
	keys := pickDistinct(r, nastyStrings, 4)
	for _, k := range keys {
		for j := 0; j < 3+r.IntN(4); j++ {
			w.rows = append(w.rows, []any{k, int64(j), pick(r, nastyStrings)})
		}
	}
	r.Shuffle(len(w.rows), func(i, j int) { w.rows[i], w.rows[j] = w.rows[j], w.rows[i] })
	// Proto: every column named after a toolenv protocol field, or
	// starting with the underscore toolenv's own query options use.
	pr := &table{name: tn.from(tableNames), encoding: "utf-8"}
	for i, n := range []string{"label", "session", "tool", "name", "_feedback", "select", "order", "args"} {
		typ := "TEXT"
		if n == "order" || n == "args" {
			typ = "INTEGER"
		}
		pr.cols = append(pr.cols, &column{name: n, typ: typ, role: fmt.Sprintf("proto%d", i)})
	}
	for i := 0; i < 20; i++ {
		row := make([]any, len(pr.cols))
		for j, col := range pr.cols {
			if col.typ == "INTEGER" {
				row[j] = int64(r.IntN(5))
			} else {
				row[j] = fmt.Sprintf("%s%d", pick(r, nastyStrings), r.IntN(3))
			}
		}
		pr.rows = append(pr.rows, row)
	}
	d.main, d.child, d.wr, d.proto = p, c, w, pr
	d.tables = []*table{p, c, w, pr}
	if withBig {
		bn := &namer{r: r, used: map[string]bool{}}
		b := &table{name: tn.from(tableNames), encoding: "utf-8-bom"}
		b.cols = []*column{
			{name: bn.from(pkNames), typ: "INTEGER PRIMARY KEY", role: "pk"},
			{name: bn.from(protocolNames), typ: "TEXT", role: "bcat"},
			{name: bn.from(intNames), typ: "INTEGER", role: "bnum"},
		}
		bcats := pickDistinct(r, nastyStrings, 3)
		for i := 0; i < bigRows; i++ {
			b.rows = append(b.rows, []any{int64(i + 1), bcats[r.IntN(len(bcats))], int64(r.IntN(1000))})
		}
		d.big = b
		d.tables = append(d.tables, b)
	}
	return d
}

func isASCII(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r > 0x7F })
}

func pickDistinct(r *rand.Rand, pool []string, n int) []string {
	var out []string
	for _, i := range r.Perm(len(pool))[:n] {
		out = append(out, pool[i])
	}
	return out
}

// writeDatabase writes a database's SQLite file (an index on every
// column) and its description CSVs.
func writeDatabase(root string, d *database) error {
	dir := filepath.Join(root, bird.DatabasesDir, d.name)
	if err := os.MkdirAll(filepath.Join(dir, "database_description"), 0o755); err != nil {
		return fmt.Errorf("nl2apitest: %w", err)
	}
	path := filepath.Join(dir, d.name+".sqlite")
	_ = os.Remove(path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return fmt.Errorf("nl2apitest: %w", err)
	}
	defer db.Close()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("nl2apitest: %w", err)
	}
	defer tx.Rollback()
	for ti, t := range d.tables {
		var defs []string
		for _, c := range t.cols {
			defs = append(defs, quote(c.name)+" "+c.typ)
		}
		defs = append(defs, t.constraints...)
		stmt := "CREATE TABLE " + quote(t.name) + " (" + strings.Join(defs, ", ")
		if t.withoutRowid {
			var pk []string
			for _, k := range t.pk {
				pk = append(pk, quote(k))
			}
			stmt += ", PRIMARY KEY (" + strings.Join(pk, ", ") + ")) WITHOUT ROWID"
		} else {
			stmt += ")"
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("nl2apitest: %s: %w", stmt, err)
		}
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(t.cols)), ", ")
		ins, err := tx.PrepareContext(ctx, "INSERT INTO "+quote(t.name)+" VALUES ("+marks+")")
		if err != nil {
			return fmt.Errorf("nl2apitest: %w", err)
		}
		for _, row := range t.rows {
			if _, err := ins.ExecContext(ctx, row...); err != nil {
				ins.Close()
				return fmt.Errorf("nl2apitest: insert into %s: %w", t.name, err)
			}
		}
		ins.Close()
		for ci, c := range t.cols {
			ix := fmt.Sprintf("ix_%d_%d", ti, ci)
			if _, err := tx.ExecContext(ctx, "CREATE INDEX "+quote(ix)+" ON "+quote(t.name)+" ("+quote(c.name)+")"); err != nil {
				return fmt.Errorf("nl2apitest: index %s.%s: %w", t.name, c.name, err)
			}
		}
		if err := writeDescriptions(filepath.Join(dir, "database_description", t.name+".csv"), t); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, "ANALYZE"); err != nil {
		return fmt.Errorf("nl2apitest: %w", err)
	}
	return tx.Commit()
}

func quote(id string) string { return `"` + strings.ReplaceAll(id, `"`, `""`) + `"` }
