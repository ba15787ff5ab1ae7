package world_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/world"
)

var modelSeeds = flag.Int("model.seeds", 6, "random schemas TestAgainstSQLite tries")

// genTable is a table of a generated schema.
type genTable struct {
	name    string
	cols    []genCol
	key     []int // columns of the primary key (none: keyless)
	noRowID bool
	alias   bool // the key is an INTEGER PRIMARY KEY
	fks     []genFK
	rows    [][]any
}

type genCol struct {
	name, typ string
	notNull   bool
	unique    bool
}

type genFK struct {
	cols   []int
	parent int // table index
	pcols  []int
	action string // ON DELETE, also ON UPDATE
}

var oddNames = []string{"select", "order", "größe", "名前", "a b", `quo"te`, "rowid", "label", "Ünïcödé", "x-y", "_rowid_"}

// genSchema makes a random schema with the shapes worlds must handle and
// rows that satisfy its keys.
func genSchema(r *rand.Rand) []*genTable {
	n := 2 + r.IntN(3)
	// Some databases hold references to nothing, as BIRD's do.
	dirty := r.IntN(2) == 0
	var ts []*genTable
	used := map[string]bool{}
	name := func(base string) string {
		if r.IntN(3) == 0 {
			base = oddNames[r.IntN(len(oddNames))]
		}
		s := base
		for k := 2; used[strings.ToLower(s)]; k++ {
			s = fmt.Sprintf("%s_%d", base, k)
		}
		used[strings.ToLower(s)] = true
		return s
	}
	for i := 0; i < n; i++ {
		t := &genTable{name: name(fmt.Sprintf("t%d", i))}
		cu := map[string]bool{}
		ncols := 2 + r.IntN(4)
		for j := 0; j < ncols; j++ {
			cn := fmt.Sprintf("c%d", j)
			if r.IntN(3) == 0 {
				cn = oddNames[r.IntN(len(oddNames))]
			}
			for k := 2; cu[strings.ToLower(cn)]; k++ {
				cn = fmt.Sprintf("c%d_%d", j, k)
			}
			cu[strings.ToLower(cn)] = true
			t.cols = append(t.cols, genCol{name: cn, typ: []string{"INTEGER", "TEXT", "REAL", ""}[r.IntN(4)], notNull: r.IntN(4) == 0})
		}
		switch r.IntN(4) {
		case 0: // INTEGER PRIMARY KEY
			t.cols[0].typ = "INTEGER"
			t.key, t.alias = []int{0}, true
		case 1: // composite key, maybe WITHOUT ROWID
			t.cols[0].typ, t.cols[1].typ = "TEXT", "INTEGER"
			t.key = []int{0, 1}
			t.noRowID = r.IntN(2) == 0
		case 2: // TEXT key
			t.cols[0].typ = "TEXT"
			t.key = []int{0}
		}
		if len(t.cols) > 2 && r.IntN(3) == 0 {
			t.cols[len(t.cols)-1].unique = true
			t.cols[len(t.cols)-1].notNull = false
		}
		for _, k := range t.key {
			t.cols[k].notNull = true
		}
		ts = append(ts, t)
	}
	// Foreign keys to earlier tables' keys (or the table itself).
	for i, t := range ts {
		for p := 0; p <= i; p++ {
			pt := ts[p]
			if len(pt.key) == 0 || r.IntN(2) == 0 {
				continue
			}
			var cols []int
			for range pt.key {
				cols = append(cols, -1)
			}
			// Child columns: new columns of the parent's key types.
			for k, pk := range pt.key {
				cn := fmt.Sprintf("ref%d_%d", p, k)
				t.cols = append(t.cols, genCol{name: cn, typ: pt.cols[pk].typ})
				cols[k] = len(t.cols) - 1
			}
			t.fks = append(t.fks, genFK{cols: cols, parent: p, pcols: pt.key, action: []string{"NO ACTION", "CASCADE", "SET NULL", "RESTRICT"}[r.IntN(4)]})
		}
	}
	// Rows, in table order so that references find their parents.
	for i, t := range ts {
		nrows := 3 + r.IntN(6)
		seenKey := map[string]bool{}
		seenUnique := map[string]bool{}
		for len(t.rows) < nrows {
			row := make([]any, len(t.cols))
			for j, c := range t.cols {
				row[j] = genValue(r, c, len(t.rows))
			}
			for _, fk := range t.fks {
				if r.IntN(4) == 0 && !anyNotNull(t, fk.cols) {
					if !dirty || r.IntN(2) == 0 {
						for _, c := range fk.cols {
							row[c] = nil // a NULL reference
						}
					} // else a reference to nothing
					continue
				}
				parent := ts[fk.parent]
				if fk.parent == i {
					if len(t.rows) == 0 {
						for _, c := range fk.cols {
							row[c] = nil
						}
						continue
					}
					src := t.rows[r.IntN(len(t.rows))]
					for k, c := range fk.cols {
						row[c] = src[fk.pcols[k]]
					}
					continue
				}
				src := parent.rows[r.IntN(len(parent.rows))]
				for k, c := range fk.cols {
					row[c] = src[fk.pcols[k]]
				}
			}
			if len(t.key) > 0 {
				k := fmt.Sprint(pick(row, t.key))
				if seenKey[k] {
					continue
				}
				seenKey[k] = true
			}
			for j, c := range t.cols {
				if c.unique && row[j] != nil {
					if seenUnique[fmt.Sprint(row[j])] {
						row[j] = nil
					}
					seenUnique[fmt.Sprint(row[j])] = true
				}
			}
			t.rows = append(t.rows, row)
		}
		hasUnique := false
		for _, c := range t.cols {
			hasUnique = hasUnique || c.unique
		}
		if len(t.key) == 0 && len(t.rows) > 1 && !hasUnique {
			t.rows = append(t.rows, append([]any(nil), t.rows[0]...)) // identical rows
		}
	}
	return ts
}

func anyNotNull(t *genTable, cols []int) bool {
	for _, c := range cols {
		if t.cols[c].notNull {
			return true
		}
	}
	return false
}

func pick(row []any, idx []int) []any {
	out := make([]any, len(idx))
	for i, j := range idx {
		out[i] = row[j]
	}
	return out
}

func genValue(r *rand.Rand, c genCol, n int) any {
	if !c.notNull && r.IntN(3) == 0 {
		return nil
	}
	switch c.typ {
	case "INTEGER":
		return int64(r.IntN(20) + n*100)
	case "REAL":
		return float64(r.IntN(1000)) / 8
	case "TEXT":
		return []string{"a", "b", "Ç", "日本", "", "x'y", "%_"}[r.IntN(7)] + fmt.Sprint(n, r.IntN(5))
	}
	switch r.IntN(3) {
	case 0:
		return int64(r.IntN(9))
	case 1:
		return 2.5
	}
	return "v" + fmt.Sprint(r.IntN(9))
}

func q(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func ddl(ts []*genTable) []string {
	var out []string
	for _, t := range ts {
		var defs []string
		for i, c := range t.cols {
			d := q(c.name) + " " + c.typ
			if t.alias && i == t.key[0] {
				d += " PRIMARY KEY"
			}
			if c.notNull {
				d += " NOT NULL"
			}
			if c.unique {
				d += " UNIQUE"
			}
			defs = append(defs, d)
		}
		if len(t.key) > 0 && !t.alias {
			defs = append(defs, "PRIMARY KEY ("+colList(t, t.key)+")")
		}
		for _, fk := range t.fks {
			p := t
			if fk.parent >= 0 {
				p = ts[fk.parent]
			}
			defs = append(defs, fmt.Sprintf("FOREIGN KEY (%s) REFERENCES %s (%s) ON DELETE %s ON UPDATE %s", colList(t, fk.cols), q(p.name), colList(p, fk.pcols), fk.action, fk.action))
		}
		s := "CREATE TABLE " + q(t.name) + " (" + strings.Join(defs, ", ") + ")"
		if t.noRowID {
			s += " WITHOUT ROWID"
		}
		out = append(out, s)
	}
	return out
}

func colList(t *genTable, idx []int) string {
	var out []string
	for _, i := range idx {
		out = append(out, q(t.cols[i].name))
	}
	return strings.Join(out, ", ")
}

func writeGen(t *testing.T, ts []*genTable) string {
	path := filepath.Join(t.TempDir(), "gen.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range ddl(ts) {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	for _, tb := range ts {
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(tb.cols)), ", ")
		for _, row := range tb.rows {
			if _, err := db.Exec("INSERT INTO "+q(tb.name)+" VALUES ("+marks+")", row...); err != nil {
				t.Fatalf("insert into %s %v: %v", tb.name, row, err)
			}
		}
	}
	return path
}

// reference is what a world must equal: a plain SQLite copy written with
// foreign keys on.
type reference struct {
	db *sql.DB
	ts []*genTable
}

func newReference(t *testing.T, path string, ts []*genTable) *reference {
	cp := filepath.Join(t.TempDir(), "ref.sqlite")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", cp+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	for _, s := range []string{"BEGIN", "PRAGMA defer_foreign_keys = ON"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	return &reference{db: db, ts: ts}
}

// exec runs a write on the copy. The copy runs every write inside one
// transaction with foreign keys deferred, so that SQLite applies their
// actions (CASCADE, SET NULL) without refusing anything itself: a write
// is refused when it leaves a reference to nothing that was not there
// before. (SQLite's own immediate checking counts broken references
// with a counter that lets some writes through and refuses others
// depending on what else the statement changed; worlds follow the rule,
// not the counter.)
func (r *reference) exec(query string, args ...any) error {
	before, err := r.violations()
	if err != nil {
		return err
	}
	if _, err := r.db.Exec("SAVEPOINT w"); err != nil {
		return err
	}
	if _, err := r.db.Exec(query, args...); err != nil {
		r.db.Exec("ROLLBACK TO w")
		r.db.Exec("RELEASE w")
		return err
	}
	after, err := r.violations()
	if err != nil {
		return err
	}
	for k, n := range after {
		if n > before[k] {
			r.db.Exec("ROLLBACK TO w")
			r.db.Exec("RELEASE w")
			return fmt.Errorf("the write leaves %s referring to nothing", k)
		}
	}
	_, err = r.db.Exec("RELEASE w")
	return err
}

// violations lists every row referring to nothing, with the values it
// refers by: a row broken in the base stays as it is, a row made to
// refer to another missing row is a new violation.
func (r *reference) violations() (map[string]int, error) {
	out := map[string]int{}
	for _, t := range r.ts {
		id := `"rowid"`
		if t.noRowID {
			id = colList(t, t.key)
		} else if hasColumn(t, "rowid") {
			id = `"_rowid_"`
			if hasColumn(t, "_rowid_") {
				id = `"oid"`
			}
		}
		for fi, fk := range t.fks {
			p := r.ts[fk.parent]
			var notNull, match []string
			for k, c := range fk.cols {
				notNull = append(notNull, "c."+q(t.cols[c].name)+" IS NOT NULL")
				match = append(match, "p."+q(p.cols[fk.pcols[k]].name)+" = c."+q(t.cols[c].name))
			}
			rows, err := refRows(r.db)(fmt.Sprintf("SELECT %s, %s FROM %s AS c WHERE %s AND NOT EXISTS (SELECT 1 FROM %s AS p WHERE %s)",
				prefixed("c.", id), prefixed("c.", colList(t, fk.cols)), q(t.name), strings.Join(notNull, " AND "), q(p.name), strings.Join(match, " AND ")))
			if err != nil {
				return nil, err
			}
			for _, row := range rows {
				out[fmt.Sprintf("%s/%d/%v", t.name, fi, row)]++
			}
		}
	}
	return out, nil
}

func hasColumn(t *genTable, name string) bool {
	for _, c := range t.cols {
		if strings.EqualFold(c.name, name) {
			return true
		}
	}
	return false
}

// prefixed puts p before every name of a comma-separated list.
func prefixed(p, list string) string {
	parts := strings.Split(list, ", ")
	for i := range parts {
		parts[i] = p + parts[i]
	}
	return strings.Join(parts, ", ")
}

// contents dumps every table, rows sorted, for comparison.
func contents(t *testing.T, query func(string) ([][]any, error), ts []*genTable) string {
	var b strings.Builder
	for _, tb := range ts {
		rows, err := query("SELECT * FROM " + q(tb.name))
		if err != nil {
			t.Fatalf("read %s: %v", tb.name, err)
		}
		var lines []string
		for _, r := range rows {
			var parts []string
			for _, v := range r {
				switch x := v.(type) {
				case []byte:
					parts = append(parts, "t"+string(x))
				case string:
					parts = append(parts, "t"+x)
				case nil:
					parts = append(parts, "NULL")
				default:
					parts = append(parts, fmt.Sprintf("%T:%v", x, x))
				}
			}
			lines = append(lines, strings.Join(parts, "|"))
		}
		sort.Strings(lines)
		fmt.Fprintf(&b, "%s\n%s\n", tb.name, strings.Join(lines, "\n"))
	}
	return b.String()
}

func refRows(db *sql.DB) func(string) ([][]any, error) {
	return func(s string) ([][]any, error) {
		rows, err := db.Query(s)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out [][]any
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return nil, err
			}
			out = append(out, vals)
		}
		return out, rows.Err()
	}
}

func worldRows(w *world.World) func(string) ([][]any, error) {
	return func(s string) ([][]any, error) {
		r, err := w.Query(context.Background(), s, nil, 0)
		if err != nil {
			return nil, err
		}
		return r.Rows, nil
	}
}

// TestAgainstSQLite runs random writes on several worlds of random
// schemas, each beside a plain SQLite copy with foreign keys on making
// the same writes: after every write, the world and its copy must agree
// on whether the write is allowed and on every table's rows; at the
// end, every world rebuilt from its changes alone must equal it.
func TestAgainstSQLite(t *testing.T) {
	for seed := 1; seed <= *modelSeeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 7))
			ts := genSchema(r)
			path := writeGen(t, ts)
			b := openBase(t, path, seed%2 == 0)
			ctx := context.Background()
			const nworlds = 3
			worlds := make([]*world.World, nworlds)
			refs := make([]*reference, nworlds)
			logs := make([][]world.Change, nworlds)
			for i := range worlds {
				worlds[i], refs[i] = b.New(nil), newReference(t, path, ts)
			}
			for step := 0; step < 60; step++ {
				i := r.IntN(nworlds)
				w, ref := worlds[i], refs[i]
				tb := ts[r.IntN(len(ts))]
				cur, err := refRows(ref.db)("SELECT * FROM " + q(tb.name))
				if err != nil {
					t.Fatal(err)
				}
				var (
					out    *world.Written
					werr   error
					refSQL string
					args   []any
				)
				op := r.IntN(3)
				if len(cur) == 0 {
					op = 0
				}
				if op == 1 && len(tb.key) == len(tb.cols) {
					op = 2 // nothing but the key to update
				}
				desc := ""
				switch op {
				case 0:
					row := map[string]any{}
					var cols []string
					for j, c := range tb.cols {
						if tb.alias && j == tb.key[0] && r.IntN(2) == 0 {
							continue // numbered by SQLite
						}
						v := genValue(r, c, 50+step)
						if r.IntN(3) == 0 && len(cur) > 0 {
							v = cur[r.IntN(len(cur))][j] // collide with a row: keys, references
						}
						if v == nil && r.IntN(2) == 0 {
							continue // left out: its default
						}
						row[c.name] = jsonish(v)
						cols = append(cols, q(c.name))
						args = append(args, v)
					}
					desc = fmt.Sprintf("insert into %s %v", tb.name, row)
					out, werr = w.Insert(ctx, tb.name, []map[string]any{row}, "rows")
					if len(cols) == 0 {
						refSQL = "INSERT INTO " + q(tb.name) + " DEFAULT VALUES"
					} else {
						refSQL = "INSERT INTO " + q(tb.name) + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
					}
				case 1, 2:
					target := cur[r.IntN(len(cur))]
					kidx := tb.key
					if len(kidx) == 0 {
						for j := range tb.cols {
							kidx = append(kidx, j)
						}
					}
					key := pick(target, kidx)
					jkey := make([]any, len(key))
					var where []string
					for k, j := range kidx {
						jkey[k] = jsonish(key[k])
						where = append(where, q(tb.cols[j].name)+" IS ?")
					}
					keys := world.Keys{Values: [][]any{jkey}, Param: "keys"}
					if op == 1 {
						j := r.IntN(len(tb.cols))
						for isKey(tb, j) {
							j = r.IntN(len(tb.cols))
						}
						v := genValue(r, tb.cols[j], 70+step)
						if r.IntN(3) == 0 {
							v = cur[r.IntN(len(cur))][j]
						}
						desc = fmt.Sprintf("update %s %v set %s = %v", tb.name, key, tb.cols[j].name, v)
						out, werr = w.Update(ctx, tb.name, keys, map[string]any{tb.cols[j].name: jsonish(v)}, "values")
						refSQL = "UPDATE " + q(tb.name) + " SET " + q(tb.cols[j].name) + " = ? WHERE " + strings.Join(where, " AND ")
						args = append([]any{v}, key...)
					} else {
						desc = fmt.Sprintf("delete from %s %v", tb.name, key)
						out, werr = w.Delete(ctx, tb.name, keys)
						refSQL = "DELETE FROM " + q(tb.name) + " WHERE " + strings.Join(where, " AND ")
						args = key
					}
				}
				rerr := ref.exec(refSQL, args...)
				if (werr == nil) != (rerr == nil) {
					t.Fatalf("step %d, world %d, %s: world says %v, SQLite says %v", step, i, desc, werr, rerr)
				}
				if werr != nil {
					if st := toolenv.StatusOf(werr); st == toolenv.StatusInternal {
						t.Fatalf("step %d: %s: internal error %v", step, desc, werr)
					}
				} else {
					logs[i] = append(logs[i], out.Changes...)
				}
				if got, want := contents(t, worldRows(w), ts), contents(t, refRows(ref.db), ts); got != want {
					t.Fatalf("step %d, world %d, %s: the world differs from SQLite\nworld:\n%s\nsqlite:\n%s", step, i, desc, got, want)
				}
			}
			for i, w := range worlds {
				raw, err := json.Marshal(logs[i])
				if err != nil {
					t.Fatal(err)
				}
				var back []world.Change
				if err := json.Unmarshal(raw, &back); err != nil {
					t.Fatal(err)
				}
				re := b.New(nil)
				if err := re.Apply(back); err != nil {
					t.Fatal(err)
				}
				if re.Hash() != w.Hash() || contents(t, worldRows(re), ts) != contents(t, worldRows(w), ts) {
					t.Fatalf("world %d rebuilt from its changes differs", i)
				}
			}
		})
	}
}

func isKey(t *genTable, j int) bool {
	for _, k := range t.key {
		if k == j {
			return true
		}
	}
	return false
}

// jsonish is v as a caller's JSON would give it.
func jsonish(v any) any {
	switch x := v.(type) {
	case int64:
		return json.Number(fmt.Sprint(x))
	case float64:
		return json.Number(fmt.Sprint(x))
	}
	return v
}
