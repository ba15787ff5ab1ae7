package sqltools

import (
	"context"
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/internal/ident"
)

// InitTool is the name of the hidden initialisation tool.
const InitTool = "initialize_active_data"

// DefaultStartLabel is the label of a task's main starting table.
const DefaultStartLabel = "starting_table"

// TableSpec is one table of an initialisation: the table, the alias the
// join conditions use, the prefix of its columns in the starting table
// (<prefix>_<column>) and, for every table but the first, how it joins.
type TableSpec struct {
	Name   string      `json:"name"`
	Alias  string      `json:"alias,omitempty"`
	Prefix string      `json:"prefix,omitempty"`
	Join   string      `json:"join,omitempty"` // "inner" (default), "left", "cross"
	On     [][2]string `json:"on,omitempty"`   // column equalities, "alias.column"
}

var joinSQL = map[string]string{"inner": "INNER JOIN", "left": "LEFT JOIN", "cross": "CROSS JOIN"}

// initialize builds a starting table: the join of the given tables with
// every column renamed <prefix>_<column>.
func (b *Backend) initialize(ctx context.Context, ss *session, a *args) (*result, error) {
	names := b.dbs.Names()
	dbName := a.str("database", len(names) != 1)
	if dbName == "" && len(names) == 1 {
		dbName = names[0]
	}
	rawTables, _ := a.required("tables", "a list of {name, alias, prefix, join, on}")
	a.unknown("database", "tables", "label")
	if err := a.err(InitTool); err != nil {
		return nil, err
	}
	db, err := b.database(dbName)
	if err != nil {
		return nil, err
	}
	if ss.db != nil && ss.db != db {
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "use one session per task (a new session id)", "this session already works on database %s, not %s", ss.dbName, dbName)
	}
	specs, err := decodeTables(rawTables)
	if err != nil {
		return nil, err
	}
	q, err := joinQuery(db, specs)
	if err != nil {
		return nil, err
	}
	ss.db, ss.dbName = db, dbName
	return &result{kind: kindTable, q: q, db: db}, nil
}

func decodeTables(v any) ([]TableSpec, error) {
	bad := func(format string, args ...any) error {
		return &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: InitTool + ": " + fmt.Sprintf(format, args...),
			Problems: []toolenv.Problem{{Param: "tables", Code: "wrong_type", Message: fmt.Sprintf(format, args...), Expected: "a list of {name, alias, prefix, join, on}"}},
			Hint:     "pass the task's meta.init arguments unchanged"}
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, bad("`tables` must be a non-empty list, got %s", describe(v))
	}
	if len(list) > 32 {
		return nil, bad("`tables` lists %d tables; at most 32 can be joined", len(list))
	}
	specs := make([]TableSpec, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, bad("tables[%d] must be an object, got %s", i, describe(e))
		}
		str := func(k string) (string, error) {
			v, ok := m[k]
			if !ok || v == nil {
				return "", nil
			}
			s, ok := v.(string)
			if !ok {
				return "", bad("tables[%d].%s must be a string, got %s", i, k, describe(v))
			}
			return s, nil
		}
		var err error
		sp := &specs[i]
		for _, f := range []struct {
			k string
			p *string
		}{{"name", &sp.Name}, {"alias", &sp.Alias}, {"prefix", &sp.Prefix}, {"join", &sp.Join}} {
			if *f.p, err = str(f.k); err != nil {
				return nil, err
			}
		}
		for k := range m {
			switch k {
			case "name", "alias", "prefix", "join", "on":
			default:
				return nil, bad("tables[%d] has an unknown field %q", i, k)
			}
		}
		if on, ok := m["on"]; ok && on != nil {
			pairs, ok := on.([]any)
			if !ok {
				return nil, bad("tables[%d].on must be a list of [left, right] column pairs", i)
			}
			for j, p := range pairs {
				pair, ok := p.([]any)
				if !ok || len(pair) != 2 {
					return nil, bad("tables[%d].on[%d] must be a [left, right] pair", i, j)
				}
				l, ok1 := pair[0].(string)
				r, ok2 := pair[1].(string)
				if !ok1 || !ok2 {
					return nil, bad("tables[%d].on[%d] must hold two \"alias.column\" strings", i, j)
				}
				sp.On = append(sp.On, [2]string{l, r})
			}
		}
	}
	return specs, nil
}

// joinQuery validates the specs against the schema and builds the query.
// Only validated identifiers reach the SQL text, always quoted; internal
// aliases t0, t1, ... replace the caller's.
func joinQuery(db *rodb.DB, specs []TableSpec) (*query, error) {
	bad := func(format string, args ...any) error {
		return toolenv.Errorw(toolenv.StatusInvalidArguments, "pass the task's meta.init arguments unchanged", InitTool+": "+format, args...)
	}
	type src struct {
		t     *rodb.Table
		alias string
	}
	byAlias := map[string]src{}
	prefixes := map[string]bool{}
	var starts []StartTable
	q := &query{limit: -1}
	var from sqlb
	for i := range specs {
		sp := &specs[i]
		t := db.Table(sp.Name)
		if t == nil {
			return nil, bad("table %q does not exist in %s; tables: %s", sp.Name, db.Name, strings.Join(tableNames(db), ", "))
		}
		if sp.Alias == "" {
			sp.Alias = sp.Name
		}
		if sp.Prefix == "" {
			sp.Prefix = t.Name
		}
		key := strings.ToLower(sp.Alias)
		if _, dup := byAlias[key]; dup {
			return nil, bad("alias %q is used twice", sp.Alias)
		}
		if !labelRE.MatchString(sp.Prefix) || len(sp.Prefix) > 64 {
			return nil, bad("prefix %q must be letters, digits and _ (at most 64)", sp.Prefix)
		}
		if prefixes[sp.Prefix] {
			return nil, bad("prefix %q is used twice; give each table its own prefix", sp.Prefix)
		}
		prefixes[sp.Prefix] = true
		internal := fmt.Sprintf("t%d", i)
		byAlias[key] = src{t: t, alias: internal}
		ref := rodb.Quote(t.Name) + " AS " + rodb.Quote(internal)
		if i == 0 {
			if sp.Join != "" || len(sp.On) > 0 {
				return nil, bad("the first table cannot have a join")
			}
			from.text(ref)
		} else {
			if sp.Join == "" {
				sp.Join = "inner"
			}
			kw, ok := joinSQL[sp.Join]
			if !ok {
				return nil, bad("tables[%d].join is %q; want inner, left or cross", i, sp.Join)
			}
			if sp.Join == "cross" && len(sp.On) > 0 {
				return nil, bad("a cross join has no on conditions")
			}
			if sp.Join != "cross" && len(sp.On) == 0 {
				return nil, bad("tables[%d] (%s) needs on conditions for its %s join", i, sp.Name, sp.Join)
			}
			from.text(" " + kw + " " + ref)
			for j, pair := range sp.On {
				var sides [2]string
				for k, ref := range pair {
					al, colName, ok := strings.Cut(ref, ".")
					s, known := byAlias[strings.ToLower(al)]
					if !ok || !known {
						return nil, bad("tables[%d].on[%d]: %q must be alias.column with an alias of this or an earlier table", i, j, ref)
					}
					c := s.t.Column(colName)
					if c == nil {
						return nil, bad("tables[%d].on[%d]: table %s has no column %q", i, j, s.t.Name, colName)
					}
					sides[k] = rodb.Quote(s.alias) + "." + rodb.Quote(c.Name)
				}
				if j == 0 {
					from.text(" ON ")
				} else {
					from.text(" AND ")
				}
				from.text(sides[0] + " = " + sides[1])
			}
		}
		st := StartTable{Prefix: sp.Prefix}
		for _, c := range t.Columns {
			st.Columns = append(st.Columns, c.Name)
		}
		starts = append(starts, st)
		for _, c := range t.Columns {
			q.cols = append(q.cols, qcol{expr: frag{sql: rodb.Quote(internal) + "." + rodb.Quote(c.Name)}, kind: c.Kind()})
		}
		// The joined rows are ordered, and identified, by the row keys of
		// the tables in join order.
		for _, k := range t.RowKey(internal) {
			q.tie = append(q.tie, okey{expr: frag{sql: k}})
		}
	}
	q.from = from.done()
	i := 0
	for _, names := range StartColumnNames(starts) {
		for _, n := range names {
			q.cols[i].name = n
			i++
		}
	}
	return q, nil
}

// StartTable is one table of a starting table, for StartColumnNames:
// the prefix of its columns and their names in the database.
type StartTable struct {
	Prefix  string
	Columns []string
}

// StartColumnNames returns the starting-table names of the columns of
// tables joined in this order: <prefix>_<column>, the column written as
// an ASCII identifier (ident.Column: ä→ae, ß→ss, other characters an
// underscore). A name that another column already has (compared without
// case, as SQLite compares names) gets _2, _3, …, in table then column
// order, so that "e-mail" beside "e_mail", or table order's item_id
// beside table order_item's id, stay two columns. The backend and the
// builder both name columns with it.
func StartColumnNames(tables []StartTable) [][]string {
	used := map[string]bool{}
	out := make([][]string, len(tables))
	for i, t := range tables {
		for _, c := range t.Columns {
			base := t.Prefix + "_" + ident.Column(c)
			name := base
			for n := 2; used[strings.ToLower(name)]; n++ {
				name = fmt.Sprintf("%s_%d", base, n)
			}
			used[strings.ToLower(name)] = true
			out[i] = append(out[i], name)
		}
	}
	return out
}

// SanitizeColumn is the form a column name takes in starting-table
// column names before duplicates are numbered: an ASCII identifier.
func SanitizeColumn(name string) string { return ident.Column(name) }

func tableNames(db *rodb.DB) []string {
	var out []string
	for _, t := range db.Tables() {
		out = append(out, t.Name)
	}
	return out
}
