package nl2api

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/nl2api/answer"
	"github.com/toolenv/toolenv/nl2api/bird"
	"github.com/toolenv/toolenv/nl2api/decompose"
	"github.com/toolenv/toolenv/nl2api/endpoint"
	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

// database is one BIRD database opened for a build.
type database struct {
	name  string
	path  string
	db    *rodb.DB
	desc  *bird.Descriptions
	cat   *sqlplan.Catalog
	err   error
	notes []string
}

func openDatabase(ctx context.Context, l bird.Layout, name string, opt *Options) *database {
	d := &database{name: name, path: l.Database(name)}
	db, err := rodb.Open(ctx, name, d.path, rodb.Options{Logger: opt.Logger, Cache: opt.ImageCache})
	if err != nil {
		d.err = err
		return d
	}
	d.db = db
	desc, problems, err := bird.ReadDescriptions(l.Descriptions(name))
	if err != nil {
		d.notes = append(d.notes, "no column descriptions: "+err.Error())
	}
	for _, p := range problems {
		d.notes = append(d.notes, "column descriptions: "+p.Error())
	}
	d.desc = desc
	var tables []*sqlplan.Table
	for _, t := range db.Tables() {
		st := &sqlplan.Table{Name: t.Name}
		for _, c := range t.Columns {
			st.Columns = append(st.Columns, sqlplan.Column{Name: c.Name, Kind: c.Kind()})
		}
		tables = append(tables, st)
	}
	d.cat = sqlplan.NewCatalog(tables)
	return d
}

// describe is the column description tools show: BIRD's description, its
// readable name when there is none, and the start of the value
// description (units, codes). A column without a description is named as
// the database spells it (table.column), which its ASCII column name may
// not show (größe → groesse).
func (d *database) describe(table, column string) string {
	c := d.desc.Column(table, column)
	if c == nil {
		return table + "." + column
	}
	s := c.Description
	if s == "" {
		s = c.Name
	}
	s = strings.Join(strings.Fields(s), " ")
	if v := strings.Join(strings.Fields(strings.TrimPrefix(strings.TrimSpace(c.Values), "commonsense evidence:")), " "); v != "" {
		if len(v) > 120 {
			v = v[:strings.LastIndex(v[:120], " ")+1] + "…"
		}
		s += " (" + strings.TrimSpace(v) + ")"
	}
	return s
}

func (d *database) endpointColumn(table, column string) endpoint.Column {
	c := d.desc.Column(table, column)
	if c == nil {
		return endpoint.Column{}
	}
	return endpoint.Column{Name: c.Name, Description: strings.Join(strings.Fields(c.Description), " "), Values: c.Values}
}

// rejection says why a question was not kept for a flavor.
type rejection struct {
	Stage  string // "database", "plan", "gold", "decompose", "verify"
	Reason string
	Detail string
}

// candidate is one question on its way through the build.
type candidate struct {
	q       bird.Question
	db      *database
	plan    *sqlplan.Query
	gold    *answer.Table
	ordered bool
	slot    *decompose.Plan
	sel     *decompose.Plan
	rest    *endpoint.Instance
	rejects map[string]*rejection
}

// what names the candidate's question for messages.
func (c *candidate) what() string {
	return fmt.Sprintf("question %d (%s)", c.q.ID, c.q.DB)
}

func (c *candidate) reject(flavors []string, r *rejection) {
	for _, f := range flavors {
		if c.rejects[f] == nil {
			c.rejects[f] = r
		}
	}
}

// maxGoldRows caps the rows of a gold answer a task may have.
const maxGoldRows = 10000

// prepare plans a question, computes its gold answer and its candidate
// SLOT, SEL and REST forms.
func prepare(ctx context.Context, c *candidate, opt *Options) {
	all := opt.Flavors
	// A build never fails because of one question: a bug that panics on
	// it rejects it, saying so.
	defer func() {
		if r := recover(); r != nil {
			c.reject(all, internalRejection(r))
		}
	}()
	if c.db.err != nil {
		c.reject(all, &rejection{Stage: "database", Reason: "database unavailable", Detail: c.db.err.Error()})
		return
	}
	// The gold SQL runs first: a question whose SQL SQLite itself rejects
	// (BIRD and Spider have some) has no answer to verify against, and
	// says so, whatever our parser makes of it.
	rows, err := opt.limits.query(ctx, c.db.db, c.q.SQL, maxGoldRows, "gold", c.what())
	if err != nil {
		c.reject(all, &rejection{Stage: "gold", Reason: "gold SQL fails in SQLite", Detail: err.Error()})
		return
	}
	if rows.Truncated {
		c.reject(all, &rejection{Stage: "gold", Reason: "gold answer over the row cap", Detail: fmt.Sprintf("more than %d rows", maxGoldRows)})
		return
	}
	c.gold = &answer.Table{Columns: rows.Columns, Rows: rows.Rows}
	// A subquery whose LIMIT keeps one of several tied rows leaves the
	// answer to SQLite's choice among them. REST endpoints run the SQL
	// and make the same choice; SLOT and SEL tools choose by row order,
	// and an agent may choose any: no honest task there.
	if why := nestedTies(ctx, c.db.db, c.q.SQL, c.what(), opt); why != "" {
		c.reject([]string{Slot, Sel}, &rejection{Stage: "gold", Reason: "a subquery's LIMIT cuts through tied rows", Detail: why})
	}
	plan, err := sqlplan.Build(c.q.SQL, c.db.cat)
	if err != nil {
		c.reject(all, planRejection("plan", err))
		return
	}
	c.plan = plan
	// The answer's columns are named in words, as the REST response names
	// them, not by SQLite's SQL text (AVG(`value`)).
	if names := endpoint.ResultNames(plan); len(names) == len(c.gold.Columns) && !strings.Contains(strings.Join(names, ""), "*") {
		c.gold.Columns = names
	}
	c.ordered = len(plan.OrderBy) > 0 && len(plan.Compound) == 0
	if c.ordered {
		c.gold.Ties = ties(ctx, c.db.db, c.q.SQL, c.what(), len(rows.Rows), opt)
	}
	if opt.wants(Slot) || opt.wants(Sel) {
		sp, err := decompose.Slot(plan, c.q.DB, c.db.describe)
		if err != nil {
			c.reject([]string{Slot, Sel}, planRejection("decompose", err))
		} else {
			c.slot = sp
			if opt.wants(Sel) {
				if c.sel, err = decompose.Sel(sp); err != nil {
					c.reject([]string{Sel}, planRejection("decompose", err))
				}
			}
		}
	}
	if opt.wants(Rest) {
		in, err := endpoint.Make(plan, c.q.SQL, c.q.DB, c.db.endpointColumn)
		if err != nil {
			c.reject([]string{Rest}, planRejection("decompose", err))
		} else {
			c.rest = in
		}
	}
}

// ties returns the ties of an ordered gold answer of n rows: the ORDER BY
// values of its rows and, where its LIMIT or OFFSET cuts through rows of
// equal keys, every row of those keys (sqlplan.RankQuery computes them
// with SQLite). It is nil when the ORDER BY decides every row, or when
// the query cannot be ranked.
func ties(ctx context.Context, db *rodb.DB, sql, what string, n int, opt *Options) *answer.Ties {
	r, ok := sqlplan.RankQuery(sql)
	if !ok || n == 0 {
		return nil
	}
	full, err := opt.limits.query(ctx, db, r.SQL, maxGoldRows, "ties", what)
	if err != nil || len(full.Rows) < int(r.Offset)+n {
		return nil
	}
	w := len(full.Columns) - r.Keys
	key := func(i int) []any { return full.Rows[i][w:] }
	same := func(a, b []any) bool {
		ok, _ := answer.Equal(&answer.Table{Rows: [][]any{a}}, &answer.Table{Rows: [][]any{b}}, answer.Options{Ordered: true})
		return ok
	}
	t := &answer.Ties{}
	tied := false
	for i := 0; i < n; i++ {
		t.Keys = append(t.Keys, key(int(r.Offset)+i))
		if i > 0 && same(t.Keys[i], t.Keys[i-1]) {
			tied = true
		}
	}
	var cut [][]any
	if first := int(r.Offset); first > 0 && same(key(first-1), t.Keys[0]) {
		cut = append(cut, t.Keys[0])
	}
	if next := int(r.Offset) + n; next < len(full.Rows) && same(key(next), t.Keys[n-1]) {
		cut = append(cut, t.Keys[n-1])
	}
	for _, k := range cut {
		for i := range full.Rows {
			if same(key(i), k) {
				t.Pool = append(t.Pool, full.Rows[i][:w])
				t.PoolKeys = append(t.PoolKeys, key(i))
			}
		}
	}
	if !tied && len(cut) == 0 {
		return nil
	}
	return t
}

// nestedTies says where a subquery's ORDER BY ... LIMIT (or OFFSET)
// cuts through rows that are equal in every ORDER BY value but differ in
// what the subquery selects, so that SQL does not decide which of them
// it keeps; "" when no subquery does (or none can be run on its own).
func nestedTies(ctx context.Context, db *rodb.DB, sql, what string, opt *Options) string {
	for _, r := range sqlplan.NestedRankings(sql) {
		full, err := opt.limits.query(ctx, db, r.SQL, maxGoldRows, "nested ties", what)
		if err != nil { // correlated: it does not run on its own (or out of time: the build fails)
			continue
		}
		w := len(full.Columns) - r.Keys
		if w < 0 {
			continue
		}
		equal := func(a, b []any) bool {
			ok, _ := answer.Equal(&answer.Table{Rows: [][]any{a}}, &answer.Table{Rows: [][]any{b}}, answer.Options{Ordered: true})
			return ok
		}
		for _, cut := range []int64{r.Offset, r.Offset + r.Limit} {
			if cut <= 0 || cut >= int64(len(full.Rows)) {
				continue
			}
			key := full.Rows[cut][w:]
			if !equal(full.Rows[cut-1][w:], key) {
				continue
			}
			var tied [][]any
			for _, row := range full.Rows {
				if equal(row[w:], key) {
					tied = append(tied, row[:w])
				}
			}
			for _, row := range tied[1:] {
				if !equal(row, tied[0]) {
					return fmt.Sprintf("%d rows share the ORDER BY values %v at the cut of LIMIT %d OFFSET %d in %q, and differ in what it selects: SQL does not say which it keeps",
						len(tied), key, r.Limit, r.Offset, r.SQL)
				}
			}
		}
	}
	return ""
}

// internalRejection is the rejection of a question a bug panicked on.
func internalRejection(r any) *rejection {
	return &rejection{Stage: "internal", Reason: "internal error (a bug: please report it with the question)", Detail: fmt.Sprint(r)}
}

func planRejection(stage string, err error) *rejection {
	var pe *sqlplan.Error
	if errors.As(err, &pe) {
		return &rejection{Stage: stage, Reason: pe.Reason, Detail: pe.Detail}
	}
	return &rejection{Stage: stage, Reason: "error", Detail: err.Error()}
}

// selectQuestions returns dev.json's questions on the wanted databases,
// in question order, and the database names, sorted.
func selectQuestions(qs []bird.Question, want []string) ([]bird.Question, []string, error) {
	names := bird.DatabaseNames(qs)
	if len(want) == 0 {
		return qs, names, nil
	}
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	keep := map[string]bool{}
	for _, w := range want {
		if !known[w] {
			return nil, nil, fmt.Errorf("database %q has no questions in dev.json (databases: %s)", w, strings.Join(names, ", "))
		}
		keep[w] = true
	}
	var out []bird.Question
	for _, q := range qs {
		if keep[q.DB] {
			out = append(out, q)
		}
	}
	var dbs []string
	for w := range keep {
		dbs = append(dbs, w)
	}
	sort.Strings(dbs)
	return out, dbs, nil
}
