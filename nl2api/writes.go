package nl2api

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/backend/sqltools/world"
	"github.com/toolenv/toolenv/eval/endstate"
	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

// Write tasks: generated per database, deterministically for a seed and
// with no model, from the conditions of the database's own questions.
// A condition is the conjunction of the comparisons of a gold SQL's
// WHERE (and its compound parts') that compare one table's column with
// a literal; a write task finds the rows it selects and changes them:
//
//   - update: set a column of the rows found to a value another row of
//     the table holds;
//   - delete: delete the rows found;
//   - insert: add a row to a table whose foreign key refers to the table
//     of the condition, referring to the one row found, its other values
//     copied from an existing row of that table (its key made new).
//
// Its gold end state is what the plain SQL statement (UPDATE … WHERE
// cond, DELETE … WHERE cond, INSERT …) leaves, run by SQLite with its
// foreign keys on (world.Base.Script); the task is kept only when its
// gold calls, run in a fresh world through the backend that serves
// them, leave exactly that state.

// The kinds of write tasks.
const (
	WriteUpdate = "update"
	WriteDelete = "delete"
	WriteInsert = "insert"
)

// MetaWrite is the Task.Meta key of a write task's kind (update, delete,
// insert).
const MetaWrite = "write"

// DefaultWriteTasks is the most write tasks a build makes per database
// (before verification drops any).
const DefaultWriteTasks = 24

// maxFound is the most rows a write task's condition may find.
const maxFound = 8

// pred is one comparison of a condition: a column of the condition's
// table, SLOT's condition name and its values.
type pred struct {
	col  *world.Column
	cond string // equal_to, greater_than, like, in, between, is_null, …
	vals []any
}

// writeSpec is one write task before it is made for a flavor.
type writeSpec struct {
	id     string
	db     *database
	schema *world.Schema
	table  *world.Table
	preds  []pred
	source int // the question the condition comes from
	kind   string
	// update: the column set and its new value.
	setCol *world.Column
	setVal any
	// insert: the table a row is added to, the foreign key that refers
	// to the row found, the new row's other values.
	child  *world.Table
	fk     *world.ForeignKey
	row    map[string]any
	parent []any // the found row's values of fk.ParentCols
	// found is how many rows the condition finds, distinct how many
	// different ones (a table without a key may hold a row twice).
	found    int
	distinct int
	expected *endstate.Changes
	reject   *rejection
}

// writeSpecs generates the write task specs of database d from the
// conditions of its candidates' gold SQL.
func writeSpecs(ctx context.Context, d *database, cands []*candidate, base *world.Base, opt *Options) []*writeSpec {
	s := base.Schema()
	type condition struct {
		key    string
		table  *world.Table
		preds  []pred
		source int
	}
	seen := map[string]*condition{}
	for _, c := range cands {
		if c.db != d || c.plan == nil {
			continue
		}
		for _, q := range queries(c.plan) {
			for t, ps := range conjuncts(q, s) {
				cd := &condition{table: t, preds: ps, source: c.q.ID}
				cd.key = t.Name + "\x00" + predsKey(ps)
				if old := seen[cd.key]; old == nil || old.source > cd.source {
					seen[cd.key] = cd
				}
			}
		}
	}
	var conds []*condition
	for _, cd := range seen {
		conds = append(conds, cd)
	}
	sort.Slice(conds, func(i, j int) bool { return conds[i].key < conds[j].key })
	h := fnv.New64a()
	h.Write([]byte(d.name))
	r := rand.New(rand.NewPCG(uint64(opt.Seed), h.Sum64()))
	r.Shuffle(len(conds), func(i, j int) { conds[i], conds[j] = conds[j], conds[i] })
	limit := opt.WriteTasks
	if limit <= 0 {
		limit = DefaultWriteTasks
	}
	var out []*writeSpec
	kinds := []string{WriteUpdate, WriteInsert, WriteDelete}
	for _, cd := range conds {
		if len(out) == limit {
			break
		}
		sp := &writeSpec{db: d, schema: s, table: cd.table, preds: cd.preds, source: cd.source, kind: kinds[len(out)%len(kinds)]}
		sp.id = fmt.Sprintf("bird-w-%s-%d", d.name, len(out)+1)
		out = append(out, sp)
		n, err := d.db.QueryValue(ctx, "SELECT COUNT(*) FROM "+rodb.Quote(sp.table.Name)+" WHERE "+sp.whereSQL(), nil)
		if err != nil {
			sp.reject = &rejection{Stage: "write", Reason: "condition fails in SQLite", Detail: err.Error()}
			continue
		}
		sp.found = int(toInt64(n))
		sp.distinct = sp.found
		if len(sp.table.Key) == 0 {
			if n, err := d.db.QueryValue(ctx, "SELECT COUNT(*) FROM (SELECT DISTINCT * FROM "+rodb.Quote(sp.table.Name)+" WHERE "+sp.whereSQL()+")", nil); err == nil {
				sp.distinct = int(toInt64(n))
			}
		}
		switch {
		case sp.found == 0:
			sp.reject = &rejection{Stage: "write", Reason: "condition finds no row", Detail: sp.whereSQL()}
			continue
		case sp.found > maxFound:
			sp.reject = &rejection{Stage: "write", Reason: fmt.Sprintf("condition finds more than %d rows", maxFound), Detail: fmt.Sprintf("%d rows: %s", sp.found, sp.whereSQL())}
			continue
		}
		// The kind the rotation gives first, then the others: a delete
		// of rows other rows refer to becomes an update, say.
		first := len(out) - 1
		var last *rejection
		for k := range kinds {
			sp.kind, sp.reject, sp.expected = kinds[(first+k)%len(kinds)], nil, nil
			switch {
			case sp.kind == WriteInsert && !sp.planInsert(ctx, r):
				last = &rejection{Stage: "write", Reason: "no insert: no other table refers to one row found", Detail: sp.whereSQL()}
				continue
			case sp.kind == WriteUpdate && !sp.planUpdate(ctx, r):
				last = &rejection{Stage: "write", Reason: "no update: no column to set", Detail: sp.whereSQL()}
				continue
			}
			sp.expect(ctx, base)
			if sp.reject == nil {
				break
			}
			last = sp.reject
		}
		if sp.reject == nil && sp.expected == nil {
			sp.reject = last
		}
	}
	return out
}

// queries returns q and its compound parts.
func queries(q *sqlplan.Query) []*sqlplan.Query {
	out := []*sqlplan.Query{q}
	for _, p := range q.Compound {
		out = append(out, p.Query)
	}
	return out
}

// conjuncts returns the comparisons of q's WHERE with a literal, by the
// writable table whose column they compare (the top-level AND's terms;
// anything else is left out).
func conjuncts(q *sqlplan.Query, s *world.Schema) map[*world.Table][]pred {
	var terms []sqlplan.Expr
	var split func(e sqlplan.Expr)
	split = func(e sqlplan.Expr) {
		if b, ok := e.(*sqlplan.Binary); ok && strings.EqualFold(b.Op, "AND") {
			split(b.L)
			split(b.R)
			return
		}
		if e != nil {
			terms = append(terms, e)
		}
	}
	split(q.Where)
	bySource := map[*sqlplan.Source][]pred{}
	var sources []*sqlplan.Source
	for _, e := range terms {
		ref, p, ok := comparison(e)
		if !ok || ref.Source == nil || ref.Source.Table == nil || ref.Outer {
			continue
		}
		t := s.Table(ref.Source.Table.Name)
		if t == nil || t.Writable() != "" {
			continue
		}
		if p.col = t.Column(ref.Column); p.col == nil {
			continue
		}
		if bySource[ref.Source] == nil {
			sources = append(sources, ref.Source)
		}
		bySource[ref.Source] = append(bySource[ref.Source], p)
	}
	// One condition per table: the first source of it (a table joined
	// twice under two aliases is two rows, not one).
	out := map[*world.Table][]pred{}
	for _, src := range sources {
		t := s.Table(src.Table.Name)
		if _, done := out[t]; done {
			continue
		}
		ps := bySource[src]
		if len(ps) > 3 {
			ps = ps[:3]
		}
		out[t] = ps
	}
	return out
}

// comparison reads a term comparing a column with literals.
func comparison(e sqlplan.Expr) (*sqlplan.ColumnRef, pred, bool) {
	lit := func(x sqlplan.Expr) (any, bool) {
		l, ok := x.(*sqlplan.Literal)
		if !ok || l.Kind == sqlplan.LitNull {
			return nil, false
		}
		return l.Value, true
	}
	switch x := e.(type) {
	case *sqlplan.Binary:
		ops := map[string]string{"=": "equal_to", "==": "equal_to", "<>": "not_equal_to", "!=": "not_equal_to", "<": "less_than", "<=": "less_than_equal_to", ">": "greater_than", ">=": "greater_than_equal_to"}
		flip := map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<="}
		op := x.Op
		ref, isRef := x.L.(*sqlplan.ColumnRef)
		v, isLit := lit(x.R)
		if !isRef || !isLit {
			ref, isRef = x.R.(*sqlplan.ColumnRef)
			v, isLit = lit(x.L)
			if f, ok := flip[op]; ok {
				op = f
			}
		}
		if c, ok := ops[op]; ok && isRef && isLit {
			return ref, pred{cond: c, vals: []any{v}}, true
		}
	case *sqlplan.Like:
		ref, isRef := x.X.(*sqlplan.ColumnRef)
		v, isLit := lit(x.Pattern)
		if isRef && isLit && strings.EqualFold(x.Op, "LIKE") && x.Escape == nil {
			if _, isStr := v.(string); isStr {
				c := "like"
				if x.Not {
					c = "not_like"
				}
				return ref, pred{cond: c, vals: []any{v}}, true
			}
		}
	case *sqlplan.Between:
		ref, isRef := x.X.(*sqlplan.ColumnRef)
		lo, ok1 := lit(x.Lo)
		hi, ok2 := lit(x.Hi)
		if isRef && ok1 && ok2 && !x.Not {
			return ref, pred{cond: "between", vals: []any{lo, hi}}, true
		}
	case *sqlplan.In:
		ref, isRef := x.X.(*sqlplan.ColumnRef)
		if !isRef || x.Sub != nil || len(x.List) == 0 || len(x.List) > 10 {
			break
		}
		var vals []any
		for _, e := range x.List {
			v, ok := lit(e)
			if !ok {
				return nil, pred{}, false
			}
			vals = append(vals, v)
		}
		c := "in"
		if x.Not {
			c = "not_in"
		}
		return ref, pred{cond: c, vals: vals}, true
	case *sqlplan.IsNull:
		if ref, ok := x.X.(*sqlplan.ColumnRef); ok {
			c := "is_null"
			if x.Not {
				c = "is_not_null"
			}
			return ref, pred{cond: c}, true
		}
	}
	return nil, pred{}, false
}

func predsKey(ps []pred) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.col.Name + " " + p.cond + " " + fmt.Sprint(p.vals)
	}
	sort.Strings(parts)
	return strings.Join(parts, "\x00")
}

// sqlOps are the SQL forms of the comparison conditions.
var sqlOps = map[string]string{"equal_to": "=", "not_equal_to": "<>", "less_than": "<", "less_than_equal_to": "<=", "greater_than": ">", "greater_than_equal_to": ">="}

// whereSQL is the condition as SQL, its literals written out.
func (sp *writeSpec) whereSQL() string {
	var parts []string
	for _, p := range sp.preds {
		col := rodb.Quote(p.col.Name)
		switch p.cond {
		case "like", "not_like":
			parts = append(parts, col+map[bool]string{true: " NOT LIKE ", false: " LIKE "}[p.cond == "not_like"]+sqlLiteral(p.vals[0]))
		case "between":
			parts = append(parts, col+" BETWEEN "+sqlLiteral(p.vals[0])+" AND "+sqlLiteral(p.vals[1]))
		case "in", "not_in":
			var vs []string
			for _, v := range p.vals {
				vs = append(vs, sqlLiteral(v))
			}
			parts = append(parts, col+map[bool]string{true: " NOT IN (", false: " IN ("}[p.cond == "not_in"]+strings.Join(vs, ", ")+")")
		case "is_null":
			parts = append(parts, col+" IS NULL")
		case "is_not_null":
			parts = append(parts, col+" IS NOT NULL")
		default:
			parts = append(parts, col+" "+sqlOps[p.cond]+" "+sqlLiteral(p.vals[0]))
		}
	}
	return strings.Join(parts, " AND ")
}

// sqlLiteral writes a value as an SQL literal.
func sqlLiteral(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case []byte:
		return "'" + strings.ReplaceAll(string(x), "'", "''") + "'"
	}
	return "'" + strings.ReplaceAll(fmt.Sprint(v), "'", "''") + "'"
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

// planUpdate picks the column to set and its new value: a column that
// is no key, refers to nothing and is not unique, and a value another
// row of the table holds that none of the rows found does.
func (sp *writeSpec) planUpdate(ctx context.Context, r *rand.Rand) bool {
	t := sp.table
	inFK := map[*world.Column]bool{}
	for _, fk := range t.FKs {
		for _, c := range fk.ChildCols {
			inFK[c] = true
		}
	}
	for _, fk := range t.Refs {
		for _, c := range fk.ParentCols {
			inFK[c] = true
		}
	}
	unique := map[string]bool{}
	for _, u := range t.Uniques {
		if len(u) == 1 {
			unique[strings.ToLower(u[0])] = true
		}
	}
	var cands []*world.Column
	for _, c := range t.Columns {
		if c.PK > 0 || inFK[c] || unique[strings.ToLower(c.Name)] || c.Kind == "any" {
			continue
		}
		cands = append(cands, c)
	}
	r.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	for _, c := range cands {
		col := rodb.Quote(c.Name)
		q := fmt.Sprintf("SELECT DISTINCT %s FROM %s WHERE %s IS NOT NULL AND %s NOT IN (SELECT %s FROM %s WHERE %s AND %s IS NOT NULL) ORDER BY %s LIMIT 8",
			col, rodb.Quote(t.Name), col, col, col, rodb.Quote(t.Name), sp.whereSQL(), col, col)
		rows, err := sp.db.db.Query(ctx, q, nil, 8)
		if err != nil || len(rows.Rows) == 0 {
			continue
		}
		// A value the write tools take (one the column's declared type
		// admits: a BOOL column may hold "F", which no number is).
		var ok []any
		for _, row := range rows.Rows {
			v := row[0]
			if s, isStr := v.(string); isStr && (s == "" || len(s) > 200) {
				continue
			}
			if _, prob := world.Convert(t, c, c.Name, v); prob == nil {
				ok = append(ok, v)
			}
		}
		if len(ok) == 0 {
			continue
		}
		sp.setCol, sp.setVal = c, ok[r.IntN(len(ok))]
		return true
	}
	return false
}

// planInsert picks a table that refers to the condition's table (one row
// found), a row of it to copy and a new key.
func (sp *writeSpec) planInsert(ctx context.Context, r *rand.Rand) bool {
	if sp.found != 1 {
		return false
	}
	var fks []*world.ForeignKey
	for _, fk := range sp.table.Refs {
		if fk.Child != sp.table && fk.Child.Writable() == "" && !fk.Child.Generated {
			fks = append(fks, fk)
		}
	}
	sort.Slice(fks, func(i, j int) bool { return fks[i].Child.Name+fks[i].String() < fks[j].Child.Name+fks[j].String() })
	r.Shuffle(len(fks), func(i, j int) { fks[i], fks[j] = fks[j], fks[i] })
	for _, fk := range fks {
		child := fk.Child
		parent, err := sp.db.db.Query(ctx, "SELECT "+colList(fk.ParentCols)+" FROM "+rodb.Quote(sp.table.Name)+" WHERE "+sp.whereSQL(), nil, 2)
		if err != nil || len(parent.Rows) != 1 || hasNull(parent.Rows[0]) {
			continue
		}
		tmpl, err := sp.db.db.Query(ctx, "SELECT "+colList(child.Columns)+" FROM "+rodb.Quote(child.Name)+" ORDER BY 1 LIMIT 1", nil, 1)
		if err != nil || len(tmpl.Rows) != 1 {
			continue
		}
		row := map[string]any{}
		isFK := map[*world.Column]bool{}
		for _, c := range fk.ChildCols {
			isFK[c] = true
		}
		ok := true
		for i, c := range child.Columns {
			switch {
			case isFK[c]:
				continue
			case c == child.Alias:
				continue // numbered by SQLite
			case c.PK > 0:
				v, good := sp.newKey(ctx, child, c, tmpl.Rows[0][i])
				if !good {
					ok = false
				}
				row[c.Name] = v
			default:
				v := tmpl.Rows[0][i]
				if _, prob := world.Convert(child, c, c.Name, v); prob != nil {
					ok = false // the row to copy holds what a write may not
				}
				row[c.Name] = v
			}
		}
		if !ok {
			continue
		}
		sp.child, sp.fk, sp.row, sp.parent = child, fk, row, parent.Rows[0]
		return true
	}
	return false
}

// newKey is a value for key column c of t that no row holds, like like.
func (sp *writeSpec) newKey(ctx context.Context, t *world.Table, c *world.Column, like any) (any, bool) {
	switch c.Kind {
	case "integer", "number":
		v, err := sp.db.db.QueryValue(ctx, "SELECT MAX("+rodb.Quote(c.Name)+") FROM "+rodb.Quote(t.Name), nil)
		if err != nil {
			return nil, false
		}
		switch x := v.(type) {
		case int64:
			if x < math.MaxInt64 {
				return x + 1, true
			}
		case float64:
			return math.Floor(x) + 1, true
		case nil:
			return int64(1), true
		}
		return nil, false
	}
	base := "new"
	if s, ok := like.(string); ok && s != "" {
		base = s
		if len(base) > 40 {
			base = base[:40]
		}
	}
	for k := 1; k < 100; k++ {
		v := fmt.Sprintf("%s-w%d", base, k)
		n, err := sp.db.db.QueryValue(ctx, "SELECT COUNT(*) FROM "+rodb.Quote(t.Name)+" WHERE "+rodb.Quote(c.Name)+" = ?", []any{v})
		if err == nil && toInt64(n) == 0 {
			return v, true
		}
	}
	return nil, false
}

func colList(cols []*world.Column) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = rodb.Quote(c.Name)
	}
	return strings.Join(out, ", ")
}

func hasNull(row []any) bool {
	for _, v := range row {
		if v == nil {
			return true
		}
	}
	return false
}

// changeSQL is the task's change as one SQL statement.
func (sp *writeSpec) changeSQL() string {
	switch sp.kind {
	case WriteUpdate:
		return fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s", rodb.Quote(sp.table.Name), rodb.Quote(sp.setCol.Name), sqlLiteral(sp.setVal), sp.whereSQL())
	case WriteDelete:
		return fmt.Sprintf("DELETE FROM %s WHERE %s", rodb.Quote(sp.table.Name), sp.whereSQL())
	}
	var cols, vals []string
	for i, c := range sp.fk.ChildCols {
		cols, vals = append(cols, rodb.Quote(c.Name)), append(vals, sqlLiteral(sp.parent[i]))
	}
	for _, c := range sp.child.Columns {
		if v, ok := sp.row[c.Name]; ok {
			cols, vals = append(cols, rodb.Quote(c.Name)), append(vals, sqlLiteral(v))
		}
	}
	return fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", rodb.Quote(sp.child.Name), strings.Join(cols, ", "), strings.Join(vals, ", "))
}

// expect computes the gold end state: what the change's SQL statement
// leaves, run by SQLite with its foreign keys on.
func (sp *writeSpec) expect(ctx context.Context, base *world.Base) {
	init, err := base.Script(ctx, sp.changeSQL())
	if err != nil {
		reason := "the change breaks the schema's rules"
		if strings.Contains(err.Error(), "FOREIGN KEY") {
			reason = "the change breaks a foreign key"
		}
		msg := err.Error()
		if te, ok := err.(*toolenv.Error); ok {
			msg = strings.TrimPrefix(te.Message, "the initial state's SQL failed: ")
		}
		sp.reject = &rejection{Stage: "write", Reason: reason, Detail: sp.changeSQL() + ": " + msg}
		return
	}
	ch := init.Changes()
	if ch.Empty() {
		sp.reject = &rejection{Stage: "write", Reason: "the change changes nothing", Detail: sp.changeSQL()}
		return
	}
	sp.expected = ch
}
