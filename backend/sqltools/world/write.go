package world

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
)

// The operations of a write.
const (
	OpInsert = "insert"
	OpUpdate = "update"
	OpDelete = "delete"
)

// Keys address rows of a table by key: the primary key's values, or
// every column's for a table without a primary key (then every row with
// those contents is addressed). Either Values are given, or a Query
// (run in the world) whose rows are keys.
type Keys struct {
	// Values are keys, each the key columns' values in key order.
	Values [][]any
	// Query and Args: a query whose rows are keys (a labelled result of
	// the session, say).
	Query string
	Args  []any
	// Param is the argument the keys came in, for problems.
	Param string
}

// Written is what a write did.
type Written struct {
	Table *Table
	Op    string
	// Rows are the rows written, as they are after an insert or update
	// and as they were before a delete.
	Rows [][]any
	// Changes are every row the write changed, rows changed by cascading
	// foreign keys included; the log keeps them.
	Changes []Change
}

// Insert adds rows to table, each a map of column → value. Columns left
// out take their default (a NOT NULL column without one must be given,
// and so must a primary key other than an INTEGER PRIMARY KEY, which
// SQLite numbers). Values are checked against the columns' types
// (Convert), keys and foreign keys enforced; on any problem nothing is
// written.
func (w *World) Insert(ctx context.Context, table string, rows []map[string]any, param string) (*Written, error) {
	t, err := w.writable(table)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, invalidArg(param, "missing_required", "at least one row", "give at least one row to insert")
	}
	if len(rows) > w.base.opt.MaxKeys {
		return nil, tooMany(param, len(rows), w.base.opt.MaxKeys)
	}
	type prepared struct {
		cols []string
		vals []any
	}
	var (
		problems []toolenv.Problem
		todo     []prepared
	)
	for i, row := range rows {
		at := fmt.Sprintf("%s[%d]", param, i)
		var p prepared
		names := make([]string, 0, len(row))
		for n := range row {
			names = append(names, n)
		}
		sort.Strings(names)
		given := map[*Column]bool{}
		for _, n := range names {
			c := t.Column(n)
			if c == nil {
				problems = append(problems, unknownColumn(t, at+"."+n, n))
				continue
			}
			if given[c] {
				problems = append(problems, toolenv.Problem{Param: at + "." + n, Code: "duplicate", Message: fmt.Sprintf("%s.%s is given twice (names are case-insensitive)", t.Name, c.Name)})
				continue
			}
			given[c] = true
			v, prob := Convert(t, c, at+"."+c.Name, row[n])
			if prob != nil {
				problems = append(problems, *prob)
				continue
			}
			p.cols, p.vals = append(p.cols, rodb.Quote(c.Name)), append(p.vals, v)
		}
		for _, c := range t.Columns {
			if given[c] || c == t.Alias {
				continue
			}
			switch {
			case c.PK > 0:
				problems = append(problems, toolenv.Problem{Param: at + "." + c.Name, Code: "missing_required", Expected: expected(c),
					Message: fmt.Sprintf("%s.%s is part of the primary key: give its value", t.Name, c.Name)})
			case c.NotNull && c.Default == "":
				problems = append(problems, toolenv.Problem{Param: at + "." + c.Name, Code: "not_null", Expected: expected(c),
					Message: fmt.Sprintf("%s.%s is NOT NULL and has no default: give its value", t.Name, c.Name)})
			case c.Volatile:
				problems = append(problems, toolenv.Problem{Param: at + "." + c.Name, Code: "missing_required", Expected: expected(c),
					Message: fmt.Sprintf("%s.%s defaults to %s, which changes with time or chance: give its value, so that the world stays the same when its calls are replayed", t.Name, c.Name, c.Default)})
			}
		}
		todo = append(todo, p)
	}
	if len(problems) > 0 {
		return nil, invalid(problems)
	}
	var out *Written
	err = w.write(ctx, t, OpInsert, func(x *tx) error {
		for i, p := range todo {
			q := "INSERT INTO main." + rodb.Quote(t.Name)
			if len(p.cols) == 0 {
				q += " DEFAULT VALUES"
			} else {
				marks := strings.TrimSuffix(strings.Repeat("?, ", len(p.cols)), ", ")
				q += " (" + strings.Join(p.cols, ", ") + ") VALUES (" + marks + ")"
			}
			q += " RETURNING " + internalKey(t) + ", " + columnList(t)
			rows, err := x.keysOf(q, p.vals)
			if err != nil {
				return x.constraint(err, fmt.Sprintf("%s[%d]", param, i))
			}
			nk := 1
			if t.WithoutRowID {
				nk = len(t.Key)
			}
			for _, r := range rows {
				x.touchNew(t, r[:nk], r[nk:])
			}
		}
		return nil
	}, func(o *Written) { out = o })
	return out, err
}

// Update sets columns of the rows keys address. Primary key columns
// cannot be set (delete the row and insert it anew).
func (w *World) Update(ctx context.Context, table string, keys Keys, set map[string]any, param string) (*Written, error) {
	t, err := w.writable(table)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	var (
		problems []toolenv.Problem
		cols     []*Column
		vals     []any
	)
	seen := map[*Column]bool{}
	for _, n := range names {
		c := t.Column(n)
		if c == nil {
			problems = append(problems, unknownColumn(t, param+"."+n, n))
			continue
		}
		if seen[c] {
			problems = append(problems, toolenv.Problem{Param: param + "." + n, Code: "duplicate", Message: fmt.Sprintf("%s.%s is given twice (names are case-insensitive)", t.Name, c.Name)})
			continue
		}
		seen[c] = true
		if c.PK > 0 && len(t.Key) > 0 {
			problems = append(problems, toolenv.Problem{Param: param + "." + n, Code: "primary_key",
				Message: fmt.Sprintf("%s.%s is (part of) the primary key, which an update does not change: delete the row and insert it with the new key", t.Name, c.Name)})
			continue
		}
		v, prob := Convert(t, c, param+"."+c.Name, set[n])
		if prob != nil {
			problems = append(problems, *prob)
			continue
		}
		cols, vals = append(cols, c), append(vals, v)
	}
	if len(names) == 0 {
		problems = append(problems, toolenv.Problem{Param: param, Code: "missing_required", Expected: "an object of column → new value", Message: "give at least one column to set"})
	}
	if len(problems) > 0 {
		return nil, invalid(problems)
	}
	sets := make([]string, len(cols))
	for i, c := range cols {
		sets[i] = rodb.Quote(c.Name) + " = ?"
	}
	stmt := "UPDATE main." + rodb.Quote(t.Name) + " SET " + strings.Join(sets, ", ") + " WHERE " + keyWhere(t) + " RETURNING " + columnList(t)
	var out *Written
	err = w.write(ctx, t, OpUpdate, func(x *tx) error {
		targets, err := x.resolve(t, keys)
		if err != nil {
			return err
		}
		for _, k := range targets {
			if err := x.touch(t, k); err != nil {
				return err
			}
			after, err := x.keysOfStmt(stmt, append(append([]any(nil), vals...), keyArgs(t, k)...))
			if err != nil {
				return x.constraint(err, param)
			}
			if len(after) == 1 {
				x.known(t, k, after[0])
			}
		}
		return nil
	}, func(o *Written) { out = o })
	return out, err
}

// Delete removes the rows keys address.
func (w *World) Delete(ctx context.Context, table string, keys Keys) (*Written, error) {
	t, err := w.writable(table)
	if err != nil {
		return nil, err
	}
	var out *Written
	err = w.write(ctx, t, OpDelete, func(x *tx) error {
		targets, err := x.resolve(t, keys)
		if err != nil {
			return err
		}
		for _, k := range targets {
			if err := x.touch(t, k); err != nil {
				return err
			}
			if err := x.exec(deleteSQL(t), keyArgs(t, k)...); err != nil {
				return x.constraint(err, keys.Param)
			}
			x.known(t, k, nil)
		}
		return nil
	}, func(o *Written) { out = o })
	return out, err
}

// writable returns the table a write names, or why it cannot be
// written.
func (w *World) writable(name string) (*Table, error) {
	t := w.base.schema.Table(name)
	if t == nil {
		var known []string
		for _, t := range w.base.schema.Tables {
			if t.Writable() == "" {
				known = append(known, t.Name)
			}
		}
		return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("database %s has no table %q", w.base.DB.Name, name),
			Problems: []toolenv.Problem{{Param: "table", Code: "not_in_enum", Message: "unknown table", Expected: strings.Join(known, ", ")}}}
	}
	if why := t.Writable(); why != "" {
		return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("table %s cannot be written: %s", t.Name, why),
			Problems: []toolenv.Problem{{Param: "table", Code: "not_writable", Message: why}}}
	}
	return t, nil
}

// internalKey is the RETURNING list of a row's key: its rowid, or the
// primary key of a WITHOUT ROWID table.
func internalKey(t *Table) string {
	if !t.WithoutRowID {
		return rodb.Quote(t.RowID)
	}
	cols := make([]string, len(t.Key))
	for i, c := range t.Key {
		cols[i] = rodb.Quote(c.Name)
	}
	return strings.Join(cols, ", ")
}

// tx is one write in progress on a connection holding the world.
type tx struct {
	ctx     context.Context
	w       *World
	c       *wconn
	touched map[*Table]map[string]*touch
	order   []*touch
}

// touch is a row the write changes: its key, its contents before the
// write (nil: absent) and after.
type touch struct {
	t             *Table
	key           []any
	before, after []any
	// done says after is what the write's own statement left (read
	// with RETURNING); finishing reads the other rows.
	done bool
}

// write runs fn, then finishes the write: reads what changed, applies
// the foreign keys' actions and checks them, and on success changes the
// world's delta. done receives the outcome.
func (w *World) write(ctx context.Context, t *Table, op string, fn func(*tx) error, done func(*Written)) error {
	return w.run(ctx, true, func(c *wconn) error {
		x := &tx{ctx: ctx, w: w, c: c, touched: map[*Table]map[string]*touch{}}
		if err := fn(x); err != nil {
			return err
		}
		if err := x.finish(); err != nil {
			return err
		}
		out := &Written{Table: t, Op: op}
		for _, tc := range x.order {
			if sameRow(tc.before, tc.after) {
				continue
			}
			out.Changes = append(out.Changes, Change{Table: tc.t.Name, Key: tc.key, Before: tc.before, After: tc.after})
			if tc.t == t {
				if op == OpDelete {
					out.Rows = append(out.Rows, tc.before)
				} else if tc.after != nil {
					out.Rows = append(out.Rows, tc.after)
				}
			}
		}
		if n := w.Rows() + len(out.Changes); n > w.base.opt.MaxRows {
			return &toolenv.Error{Status: toolenv.StatusTooLarge,
				Message: fmt.Sprintf("this world would have changed %d rows, more than the %d one world may", n, w.base.opt.MaxRows),
				Hint:    "change fewer rows, or start a new world"}
		}
		if len(out.Changes) > 0 {
			d := w.own()
			for _, ch := range out.Changes {
				d.apply(w.base.schema.Table(ch.Table), ch.Key, ch.Before, ch.After)
			}
			w.chain(out.Changes)
			w.version++
		}
		done(out)
		return nil
	})
}

// touch notes that t's row key is about to change, reading its
// contents first.
func (x *tx) touch(t *Table, key []any) error {
	k := encodeKey(key)
	if x.touched[t][k] != nil {
		return nil
	}
	var before []any
	if e := x.w.d.get(t, k); e != nil {
		before = e.new // the world holds it: no need to read it
	} else {
		var err error
		if before, err = readRow(x.ctx, x.c, t, key); err != nil {
			return x.sqlErr(err)
		}
	}
	x.add(&touch{t: t, key: key, before: before})
	return nil
}

// touchNew notes a row the write inserted (absent before), as it is.
func (x *tx) touchNew(t *Table, key, after []any) {
	if tc := x.touched[t][encodeKey(key)]; tc != nil {
		tc.after, tc.done = normRow(after), true
		return
	}
	x.add(&touch{t: t, key: key, after: normRow(after), done: true})
}

// known records how the statement left t's row key (nil: deleted), so
// that finishing the write does not read it again.
func (x *tx) known(t *Table, key, after []any) {
	if tc := x.touched[t][encodeKey(key)]; tc != nil {
		tc.after, tc.done = normRow(after), true
	}
}

func normRow(row []any) []any {
	if row == nil {
		return nil
	}
	out := make([]any, len(row))
	for i, v := range row {
		out[i] = normValue(v)
	}
	return out
}

func (x *tx) add(tc *touch) {
	m := x.touched[tc.t]
	if m == nil {
		m = map[string]*touch{}
		x.touched[tc.t] = m
	}
	m[encodeKey(tc.key)] = tc
	x.order = append(x.order, tc)
}

// exec runs a statement of the write.
func (x *tx) exec(query string, args ...any) error {
	s, err := x.c.stmt(x.ctx, query)
	if err != nil {
		return err
	}
	_, err = s.ExecContext(x.ctx, args...)
	return err
}

// keysOf runs a query returning keys (an INSERT … RETURNING, a lookup).
func (x *tx) keysOf(query string, args []any) ([][]any, error) {
	rows, err := x.c.c.QueryContext(x.ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return scanAll(rows)
}

// keysOfStmt is keysOf with the query prepared once per connection.
func (x *tx) keysOfStmt(query string, args []any) ([][]any, error) {
	st, err := x.c.stmt(x.ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(x.ctx, args...)
	if err != nil {
		return nil, err
	}
	return scanAll(rows)
}

// scanAll reads every row of rows and closes them.
func scanAll(rows *sql.Rows) ([][]any, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rows.Next() {
		r, err := scanRow(rows, len(cols))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// resolve turns keys into the rows they address (their internal keys),
// in key order. A key given that addresses no row is an error.
func (x *tx) resolve(t *Table, keys Keys) ([][]any, error) {
	kcols := t.Key
	if len(kcols) == 0 {
		kcols = t.Columns
	}
	max := x.w.base.opt.MaxKeys
	values := keys.Values
	if keys.Query != "" {
		rows, err := x.c.c.QueryContext(x.ctx, keys.Query, keys.Args...)
		if err != nil {
			return nil, x.sqlErr(err)
		}
		r, err := rodb.Scan(x.ctx, rows, max+1)
		if err != nil {
			return nil, x.sqlErr(err)
		}
		if len(r.Rows) > max {
			return nil, tooMany(keys.Param, len(r.Rows), max)
		}
		if len(r.Rows) > 0 && len(r.Columns) != len(kcols) {
			return nil, invalidArg(keys.Param, "wrong_shape", fmt.Sprintf("rows of %d column(s): %s", len(kcols), names(kcols)),
				fmt.Sprintf("the rows addressed must be given by their key, %s (%d column(s)); this result has %d column(s): %s",
					names(kcols), len(kcols), len(r.Columns), strings.Join(r.Columns, ", ")))
		}
		values = r.Rows
	} else if len(values) == 0 {
		return nil, invalidArg(keys.Param, "missing_required", "at least one key", "give the key of at least one row")
	}
	if len(values) > max {
		return nil, tooMany(keys.Param, len(values), max)
	}
	var problems []toolenv.Problem
	conv := make([][]any, len(values))
	for i, key := range values {
		at := fmt.Sprintf("%s[%d]", keys.Param, i)
		if len(key) != len(kcols) {
			problems = append(problems, toolenv.Problem{Param: at, Code: "wrong_shape", Expected: names(kcols),
				Message: fmt.Sprintf("a key of %s has %d value(s) (%s); this one has %d", t.Name, len(kcols), names(kcols), len(key))})
			continue
		}
		conv[i] = make([]any, len(key))
		for j, v := range key {
			cv, prob := Convert(t, &Column{Name: kcols[j].Name, Type: kcols[j].Type, Kind: kcols[j].Kind}, at, v)
			if prob != nil {
				problems = append(problems, *prob)
				continue
			}
			conv[i][j] = cv
		}
	}
	if len(problems) > 0 {
		return nil, invalid(problems)
	}
	// A primary key is matched with = (its index serves it); all the
	// columns of a table without one with IS, NULL matching NULL.
	op := " = ?"
	if len(t.Key) == 0 {
		op = " IS ?"
	}
	parts := make([]string, len(kcols))
	for i, c := range kcols {
		parts[i] = rodb.Quote(c.Name) + op
	}
	// The lookup reads the rows too: they are the write's before images.
	lookup := "SELECT " + internalKey(t) + ", " + columnList(t) + " FROM main." + rodb.Quote(t.Name) + " WHERE " + strings.Join(parts, " AND ") + " ORDER BY " + internalKey(t)
	nk := 1
	if t.WithoutRowID {
		nk = len(t.Key)
	}
	var out [][]any
	seen := map[string]bool{}
	var missing []string
	for _, key := range conv {
		found, err := x.keysOfStmt(lookup, key)
		if err != nil {
			return nil, x.sqlErr(err)
		}
		if len(found) == 0 {
			missing = append(missing, describeKey(kcols, key))
		}
		for _, row := range found {
			k := row[:nk]
			if e := encodeKey(k); !seen[e] {
				seen[e] = true
				out = append(out, k)
				if x.touched[t][e] == nil {
					x.add(&touch{t: t, key: k, before: normRow(row[nk:])})
				}
			}
		}
		if len(out) > max {
			return nil, tooMany(keys.Param, len(out), max)
		}
	}
	if len(missing) > 0 {
		more := ""
		if len(missing) > 5 {
			more = fmt.Sprintf(" and %d more", len(missing)-5)
			missing = missing[:5]
		}
		return nil, &toolenv.Error{Status: toolenv.StatusNotFound,
			Message: fmt.Sprintf("no row of %s has %s%s", t.Name, strings.Join(missing, "; "), more),
			Hint:    fmt.Sprintf("find the rows first and pass their key (%s)", names(kcols)),
			Problems: []toolenv.Problem{{Param: keys.Param, Code: "not_found", Expected: "keys of existing rows",
				Message: fmt.Sprintf("no row of %s has %s", t.Name, strings.Join(missing, "; "))}}}
	}
	return out, nil
}

func describeKey(cols []*Column, key []any) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = fmt.Sprintf("%s = %s", c.Name, show(key[i]))
	}
	return strings.Join(parts, ", ")
}

// finish reads every touched row after the write, applies the actions
// of foreign keys whose parent rows were deleted or re-keyed (CASCADE,
// SET NULL; any other action refuses the write), then checks that every
// row written refers to existing parents.
func (x *tx) finish() error {
	written := len(x.order)
	for i := 0; i < len(x.order); i++ {
		tc := x.order[i]
		if !tc.done {
			after, err := readRow(x.ctx, x.c, tc.t, tc.key)
			if err != nil {
				return x.sqlErr(err)
			}
			tc.after = after
		}
		if tc.before == nil {
			continue
		}
		for _, fk := range tc.t.Refs {
			if err := x.referenced(fk, tc); err != nil {
				return err
			}
		}
		if len(x.order) > x.w.base.opt.MaxKeys*10 {
			return &toolenv.Error{Status: toolenv.StatusTooLarge, Message: fmt.Sprintf("the write cascades to more than %d rows", x.w.base.opt.MaxKeys*10),
				Hint: "delete the referring rows in smaller steps"}
		}
	}
	if len(x.order) > written {
		// Foreign keys' actions changed rows after they were read: read
		// every row again.
		for _, tc := range x.order {
			after, err := readRow(x.ctx, x.c, tc.t, tc.key)
			if err != nil {
				return x.sqlErr(err)
			}
			tc.after = after
		}
	}
	for _, tc := range x.order {
		if tc.after == nil {
			continue
		}
		for _, fk := range tc.t.FKs {
			if err := x.refers(fk, tc); err != nil {
				return err
			}
		}
	}
	return nil
}

// referenced handles the rows of fk's child that refer to tc's row when
// that row was deleted or its referenced columns changed.
func (x *tx) referenced(fk *ForeignKey, tc *touch) error {
	old := project(fk.Parent, fk.ParentCols, tc.before)
	for _, v := range old {
		if v == nil {
			return nil
		}
	}
	var now []any
	if tc.after != nil {
		now = project(fk.Parent, fk.ParentCols, tc.after)
		if sameRow(old, now) {
			return nil
		}
	}
	parts := make([]string, len(fk.ChildCols))
	for i, c := range fk.ChildCols {
		parts[i] = rodb.Quote(c.Name) + " = ?"
	}
	where := strings.Join(parts, " AND ")
	children, err := x.keysOfStmt("SELECT "+internalKey(fk.Child)+" FROM main."+rodb.Quote(fk.Child.Name)+" WHERE "+where+" ORDER BY "+internalKey(fk.Child)+" LIMIT ?", append(append([]any(nil), old...), x.w.base.opt.MaxKeys*10+1))
	if err != nil {
		return x.sqlErr(err)
	}
	if len(children) == 0 {
		return nil
	}
	action, verb := fk.OnUpdate, "changing the key of"
	if tc.after == nil {
		action, verb = fk.OnDelete, "deleting"
	}
	row := describeKey(fk.ParentCols, old)
	switch strings.ToUpper(action) {
	case "CASCADE":
		for _, k := range children {
			if err := x.touch(fk.Child, k); err != nil {
				return err
			}
			var err error
			if tc.after == nil {
				err = x.exec(deleteSQL(fk.Child), keyArgs(fk.Child, k)...)
			} else {
				err = x.setColumns(fk.Child, fk.ChildCols, now, k)
			}
			if err != nil {
				return x.constraint(err, "")
			}
		}
		return nil
	case "SET NULL":
		for _, c := range fk.ChildCols {
			if c.NotNull {
				return fkError(c.Name, fmt.Sprintf("%s the row of %s with %s would set %s.%s to NULL (ON %s SET NULL), which is NOT NULL",
					verb, fk.Parent.Name, row, fk.Child.Name, c.Name, map[bool]string{true: "DELETE", false: "UPDATE"}[tc.after == nil]))
			}
		}
		nulls := make([]any, len(fk.ChildCols))
		for _, k := range children {
			if err := x.touch(fk.Child, k); err != nil {
				return err
			}
			if err := x.setColumns(fk.Child, fk.ChildCols, nulls, k); err != nil {
				return x.constraint(err, "")
			}
		}
		return nil
	}
	n := fmt.Sprint(len(children))
	if len(children) > x.w.base.opt.MaxKeys*10 {
		n = "many"
	}
	return fkError(fk.ParentCols[0].Name, fmt.Sprintf("%s the row of %s with %s is refused: %s row(s) of %s refer to it through %s (foreign key %s, ON %s %s); delete or change those rows first",
		verb, fk.Parent.Name, row, n, fk.Child.Name, names(fk.ChildCols), fk, map[bool]string{true: "DELETE", false: "UPDATE"}[tc.after == nil], strings.ToUpper(action)))
}

// setColumns sets cols of t's row key to vals.
func (x *tx) setColumns(t *Table, cols []*Column, vals []any, key []any) error {
	sets := make([]string, len(cols))
	for i, c := range cols {
		sets[i] = rodb.Quote(c.Name) + " = ?"
	}
	return x.exec("UPDATE main."+rodb.Quote(t.Name)+" SET "+strings.Join(sets, ", ")+" WHERE "+keyWhere(t), append(append([]any(nil), vals...), keyArgs(t, key)...)...)
}

// refers checks that tc's row, written, refers to an existing row of
// fk's parent (unless its referring columns hold a NULL, or did not
// change).
func (x *tx) refers(fk *ForeignKey, tc *touch) error {
	vals := project(fk.Child, fk.ChildCols, tc.after)
	for _, v := range vals {
		if v == nil {
			return nil
		}
	}
	if tc.before != nil && sameRow(project(fk.Child, fk.ChildCols, tc.before), vals) {
		// An update that leaves this reference as it was does not
		// check it: a row the base holds broken stays writable.
		return nil
	}
	parts := make([]string, len(fk.ParentCols))
	for i, c := range fk.ParentCols {
		parts[i] = rodb.Quote(c.Name) + " = ?"
	}
	found, err := x.keysOfStmt("SELECT 1 FROM main."+rodb.Quote(fk.Parent.Name)+" WHERE "+strings.Join(parts, " AND ")+" LIMIT 1", vals)
	if err != nil {
		return x.sqlErr(err)
	}
	if len(found) > 0 {
		return nil
	}
	return fkError(fk.ChildCols[0].Name, fmt.Sprintf("%s.%s = %s refers to no row of %s (%s): foreign key %s",
		fk.Child.Name, names(fk.ChildCols), showAll(vals), fk.Parent.Name, names(fk.ParentCols), fk))
}

func showAll(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = show(v)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func fkError(param, msg string) error {
	return &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: msg,
		Hint:     "the database's foreign keys hold in every world: write the rows they refer to first, and delete the rows that refer to a row before it",
		Problems: []toolenv.Problem{{Param: param, Code: "foreign_key", Message: msg}}}
}

var constraintRE = regexp.MustCompile(`(UNIQUE|NOT NULL|CHECK|PRIMARY KEY) constraint failed: ([^\(\n]*)`)

// constraint turns SQLite's refusal of a write into an error naming the
// column and the rule; anything else is sqlErr's.
func (x *tx) constraint(err error, param string) error {
	msg := err.Error()
	m := constraintRE.FindStringSubmatch(msg)
	if m == nil {
		if strings.Contains(msg, "datatype mismatch") {
			return invalidArg(param, "wrong_type", "an integer", "the INTEGER PRIMARY KEY takes integers only")
		}
		return x.sqlErr(err)
	}
	rule, what := m[1], strings.TrimSpace(m[2])
	switch rule {
	case "UNIQUE", "PRIMARY KEY":
		cols := strings.Split(what, ",")
		var plain []string
		for _, c := range cols {
			c = strings.TrimSpace(c)
			if i := strings.Index(c, "."); i >= 0 {
				c = c[i+1:]
			}
			plain = append(plain, c)
		}
		code, desc := "unique", "unique"
		if t := x.w.base.schema.Table(strings.TrimSpace(strings.SplitN(cols[0], ".", 2)[0])); t != nil && sameNames(plain, t.KeyNames()) {
			code, desc = "primary_key", "the primary key"
		}
		m := fmt.Sprintf("%s is %s, and a row already has these values", what, desc)
		return &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: m, Hint: "give values no other row has (look them up first)",
			Problems: []toolenv.Problem{{Param: paramOr(param, plain[0]), Code: code, Message: m}}}
	case "NOT NULL":
		col := what
		if i := strings.Index(col, "."); i >= 0 {
			col = col[i+1:]
		}
		m := fmt.Sprintf("%s is NOT NULL: give it a value", what)
		return &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: m, Problems: []toolenv.Problem{{Param: paramOr(param, col), Code: "not_null", Message: m}}}
	}
	m2 := fmt.Sprintf("the row breaks the table's CHECK constraint %s", what)
	return &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: m2, Problems: []toolenv.Problem{{Param: param, Code: "check", Message: m2}}}
}

func paramOr(param, col string) string {
	if param == "" {
		return col
	}
	return param + "." + col
}

func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}

// sqlErr classifies an error of a statement that is not a constraint's.
func (x *tx) sqlErr(err error) error {
	return rodb.QueryError(rodb.WrapError(x.ctx, err), nil)
}

func invalid(problems []toolenv.Problem) error {
	msgs := make([]string, 0, len(problems))
	for i, p := range problems {
		if i == 3 {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(problems)-3))
			break
		}
		msgs = append(msgs, p.Message)
	}
	return &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: strings.Join(msgs, "; "), Problems: problems,
		Hint: "fix the values listed in problems; nothing was written"}
}

func invalidArg(param, code, expected, msg string) error {
	return invalid([]toolenv.Problem{{Param: param, Code: code, Expected: expected, Message: msg}})
}

func tooMany(param string, n, max int) error {
	return &toolenv.Error{Status: toolenv.StatusTooLarge, Message: fmt.Sprintf("%d rows addressed; one write may address at most %d", n, max),
		Hint: "write in smaller steps", Problems: []toolenv.Problem{{Param: param, Code: "out_of_range", Expected: fmt.Sprintf("at most %d rows", max), Message: "too many rows"}}}
}

func unknownColumn(t *Table, param, name string) toolenv.Problem {
	return toolenv.Problem{Param: param, Code: "unknown_param", Expected: strings.Join(t.Names(), ", "),
		Message: fmt.Sprintf("table %s has no column %q", t.Name, name)}
}
