package sqltools_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/nl2api/answer"
	_ "modernc.org/sqlite"
)

// makeDB writes a SQLite file from statements and returns its path.
func makeDB(t testing.TB, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "adv.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path
}

// advHarness is a harness over one constructed database "adv".
func advHarness(t testing.TB, flavor string, cols []sqltools.Column, opt sqltools.Options, stmts ...string) *harness {
	t.Helper()
	cfg, _ := json.Marshal(sqltools.Config{Flavor: flavor, Databases: map[string]string{"adv": makeDB(t, stmts...)}})
	tools := sqltools.SlotTools(cols)
	if flavor == sqltools.FlavorSel {
		tools = sqltools.SelTools(cols)
	}
	tools = append(tools, sqltools.InitToolDef([]string{"adv"}))
	c := toolenv.NewCollection("adv-"+flavor, "nl2sql-"+flavor, tools)
	c.Backend = toolenv.BackendSpec{Type: sqltools.BackendType, Config: cfg}
	c.Policy = toolenv.Policy{Validation: toolenv.ValidationStrict, Sessions: true}
	b, err := sqltools.Open(context.Background(), c, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	h := &harness{t: t, b: b, c: c}
	h.newSession()
	return h
}

// Columns that differ in the database but not as ASCII identifiers, and
// a prefix plus column that equals another prefix plus column, stay
// distinct columns of the starting table (numbered), where the init used
// to fail with "two columns would be named".
func TestInitColumnNamesStayDistinct(t *testing.T) {
	h := advHarness(t, sqltools.FlavorSlot, nil, sqltools.Options{},
		`CREATE TABLE "order" (id INTEGER PRIMARY KEY, "e-mail" TEXT, e_mail TEXT, item_id INTEGER, "größe" TEXT, "GRÖSSE" TEXT)`,
		`CREATE TABLE order_item (id INTEGER PRIMARY KEY, order_id INTEGER)`,
		`INSERT INTO "order" VALUES (1, 'a@x', 'b@x', 7, 'L', 'XL')`,
		`INSERT INTO order_item VALUES (7, 1)`)
	body := h.ok(sqltools.InitTool, `{"database": "adv", "tables": [{"name": "order", "alias": "T1"},
		{"name": "order_item", "alias": "T2", "on": [["T1.id", "T2.order_id"]]}]}`)
	got := fmt.Sprint(body["columns"])
	want := "[order_id order_e_mail order_e_mail_2 order_item_id order_groesse order_GROESSE_2 order_item_id_2 order_item_order_id]"
	if got != want {
		t.Fatalf("columns %s, want %s", got, want)
	}
	rows := h.ok("retrieve_data", `{"data_source": "$starting_table$", "key_names": ["order_e_mail_2", "order_item_id_2", "order_GROESSE_2"]}`)
	if fmt.Sprint(rows["rows"]) != "[[b@x 7 XL]]" {
		t.Errorf("rows %v", rows["rows"])
	}
	names := sqltools.StartColumnNames([]sqltools.StartTable{{Prefix: "order", Columns: []string{"id", "e-mail", "e_mail", "item_id", "größe", "GRÖSSE"}},
		{Prefix: "order_item", Columns: []string{"id", "order_id"}}})
	if fmt.Sprint(names) != "[[order_id order_e_mail order_e_mail_2 order_item_id order_groesse order_GROESSE_2] [order_item_id_2 order_item_order_id]]" {
		t.Errorf("StartColumnNames: %v", names)
	}
}

// SEL getters of one table list their values in one defined order (the
// row keys), so that zipped they give the table's rows, although the
// in-memory copy indexes every column and SQLite would read each column
// through its own index, sorted by that column. Tables: one with rowids,
// one whose column is called rowid, one WITHOUT ROWID.
func TestGettersRowsBelongTogether(t *testing.T) {
	cols := []sqltools.Column{{Name: "t_a", Type: "string"}, {Name: "t_b", Type: "integer"}, {Name: "t_rowid", Type: "string"}}
	stmts := []string{
		`CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b INTEGER, "rowid" TEXT)`,
		`CREATE TABLE w (k TEXT, n INTEGER, v TEXT, PRIMARY KEY (k, n)) WITHOUT ROWID`,
	}
	want := map[string]bool{}
	for i := 0; i < 40; i++ {
		a, b, r := fmt.Sprintf("%c%d", 'a'+(i*11)%26, i), (i*17)%23, fmt.Sprintf("r%d", (i*7)%40)
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO t VALUES (%d, '%s', %d, '%s')`, 100-i, a, b, r),
			fmt.Sprintf(`INSERT INTO w VALUES ('%c', %d, 'v%d')`, 'a'+(i*7)%5, (i*13)%11, (i*3)%40))
		want[fmt.Sprint(a, b, r)] = true
	}
	for _, flavor := range []string{sqltools.FlavorSel, sqltools.FlavorSlot} {
		h := advHarness(t, flavor, append(cols, sqltools.Column{Name: "w_k", Type: "string"}, sqltools.Column{Name: "w_v", Type: "string"}), sqltools.Options{}, stmts...)
		h.ok(sqltools.InitTool, `{"database": "adv", "tables": [{"name": "t"}]}`)
		var lists [3][]any
		if flavor == sqltools.FlavorSel {
			for i, c := range []string{"t_a", "t_b", "t_rowid"} {
				lists[i] = h.ok(sqltools.GetterName(c), `{"data_source": "$starting_table$"}`)["values"].([]any)
			}
		} else {
			// SLOT: three retrieve_data calls of one column each.
			for i, c := range []string{"t_a", "t_b", "t_rowid"} {
				rows := h.ok("retrieve_data", `{"data_source": "$starting_table$", "key_names": ["`+c+`"]}`)["rows"].([]any)
				for _, r := range rows {
					lists[i] = append(lists[i], r.([]any)[0])
				}
			}
		}
		if len(lists[0]) != 40 {
			t.Fatalf("%s: %d values", flavor, len(lists[0]))
		}
		for i := range lists[0] {
			if k := fmt.Sprint(lists[0][i], num(lists[1][i]), lists[2][i]); !want[fmt.Sprint(lists[0][i], lists[1][i], lists[2][i])] && !want[k] {
				t.Fatalf("%s: zipped row %d is %v %v %v, which is no row of t", flavor, i, lists[0][i], lists[1][i], lists[2][i])
			}
		}
		h.newSession()
		h.ok(sqltools.InitTool, `{"database": "adv", "tables": [{"name": "w"}]}`)
		var ks, vs []any
		if flavor == sqltools.FlavorSel {
			ks = h.ok(sqltools.GetterName("w_k"), `{"data_source": "$starting_table$"}`)["values"].([]any)
			vs = h.ok(sqltools.GetterName("w_v"), `{"data_source": "$starting_table$"}`)["values"].([]any)
		} else {
			for _, r := range h.ok("retrieve_data", `{"data_source": "$starting_table$", "key_names": ["w_k"]}`)["rows"].([]any) {
				ks = append(ks, r.([]any)[0])
			}
			for _, r := range h.ok("retrieve_data", `{"data_source": "$starting_table$", "key_names": ["w_v"]}`)["rows"].([]any) {
				vs = append(vs, r.([]any)[0])
			}
		}
		pairs := oracleAdv(t, h, `SELECT k, v FROM w`)
		got := map[string]int{}
		for i := range ks {
			got[fmt.Sprint(ks[i], vs[i])]++
		}
		for _, p := range pairs {
			got[fmt.Sprint(p[0], p[1])]--
		}
		for k, n := range got {
			if n != 0 {
				t.Errorf("%s: WITHOUT ROWID zipped pair %s off by %d", flavor, k, n)
			}
		}
	}
}

// oracleAdv runs SQL on the harness's database file, beside the tools.
func oracleAdv(t *testing.T, h *harness, q string) [][]any {
	t.Helper()
	var cfg sqltools.Config
	if err := toolenv.DecodeJSON(h.c.Backend.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+cfg.Databases["adv"]+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		var a, b any
		if err := rows.Scan(&a, &b); err != nil {
			t.Fatal(err)
		}
		out = append(out, []any{a, b})
	}
	return out
}

// A per-group bare column read without its min/max aggregate still comes
// from the row holding the aggregate (SQLite's rule), where a getter of it
// alone used to read an arbitrary row of the group.
func TestPerGroupColumnsStayLinked(t *testing.T) {
	cols := []sqltools.Column{{Name: "l_lang", Type: "string"}, {Name: "l_country", Type: "string"}, {Name: "l_pct", Type: "number"}}
	h := advHarness(t, sqltools.FlavorSel, cols, sqltools.Options{},
		`CREATE TABLE l (lang TEXT, country TEXT, pct REAL)`,
		`INSERT INTO l VALUES ('Akan', 'GH', 10), ('Ewe', 'GH', 40), ('Zulu', 'ZA', 20), ('Afrikaans', 'ZA', 15), ('Xhosa', 'ZA', 18)`)
	h.ok(sqltools.InitTool, `{"database": "adv", "tables": [{"name": "l"}]}`)
	h.ok("group_data_by", `{"data_source": "$starting_table$", "key_name": "l_country", "label": "G"}`)
	h.ok("aggregate_data_max", `{"data_source": "$G$", "key_name": "l_pct", "label": "A"}`)
	langs := h.ok(sqltools.GetterName("l_lang"), `{"data_source": "$A$"}`)["values"].([]any)
	countries := h.ok(sqltools.GetterName("l_country"), `{"data_source": "$A$"}`)["values"].([]any)
	if fmt.Sprint(langs, countries) != "[Ewe Zulu] [GH ZA]" {
		t.Errorf("per-group rows %v %v, want [Ewe Zulu] [GH ZA]", langs, countries)
	}
}

// The row cap bounds what a call shows, not what the session holds: a
// list or rows result over it shows a page, its full size and a note,
// stays in the session under its label, and what is derived from it (its
// distinct values, a count) is exact. Such a page is never an answer.
// (It used to fail too_large, losing tasks whose answer is small.)
func TestRowCapShowsAPage(t *testing.T) {
	stmts := []string{`CREATE TABLE big (id INTEGER PRIMARY KEY, cls TEXT, n INTEGER)`}
	for i := 0; i < 250; i++ {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO big VALUES (%d, '%s', %d)`, i+1, []string{"a#", "b+", "c%"}[i%3], i))
	}
	cols := []sqltools.Column{{Name: "big_cls", Type: "string"}, {Name: "big_n", Type: "integer"}}
	for _, flavor := range []string{sqltools.FlavorSel, sqltools.FlavorSlot} {
		h := advHarness(t, flavor, cols, sqltools.Options{MaxRows: 100}, stmts...)
		h.ok(sqltools.InitTool, `{"database": "adv", "tables": [{"name": "big"}]}`)
		var body map[string]any
		if flavor == sqltools.FlavorSel {
			body = h.ok(sqltools.GetterName("big_cls"), `{"data_source": "$starting_table$", "label": "ALL"}`)
			if body["count"] != json.Number("250") || len(body["values"].([]any)) != 100 || body["shown"] != json.Number("100") {
				t.Fatalf("%s page: count %v shown %v values %d", flavor, body["count"], body["shown"], len(body["values"].([]any)))
			}
			u := h.ok("select_unique_values", `{"data_source": "$ALL$"}`)
			if fmt.Sprint(u["values"]) != "[a# b+ c%]" || u["shown"] != nil {
				t.Errorf("distinct values of the whole list: %v", u)
			}
		} else {
			body = h.ok("retrieve_data", `{"data_source": "$starting_table$", "key_names": ["big_cls", "big_n"], "label": "ALL"}`)
			if body["row_count"] != json.Number("250") || len(body["rows"].([]any)) != 100 {
				t.Fatalf("%s page: %v rows of %v", flavor, len(body["rows"].([]any)), body["row_count"])
			}
		}
		if note, _ := body["note"].(string); !strings.Contains(note, "$ALL$") || !strings.Contains(note, "250") {
			t.Errorf("%s note %q", flavor, note)
		}
		raw := h.call(map[string]string{sqltools.FlavorSel: sqltools.GetterName("big_n"), sqltools.FlavorSlot: "retrieve_data"}[flavor],
			map[string]string{sqltools.FlavorSel: `{"data_source": "$starting_table$"}`, sqltools.FlavorSlot: `{"data_source": "$starting_table$", "key_names": ["big_n"]}`}[flavor]).Body
		if _, err := answer.FromBodies(raw); err == nil || !strings.Contains(err.Error(), "first 100") {
			t.Errorf("%s: a page became an answer: %v", flavor, err)
		}
	}
}

// set_operation combines rows as SQL's compound operators do; SEL lists
// are put side by side only when a getter read them from one table.
func TestSetOperation(t *testing.T) {
	stmts := []string{`CREATE TABLE p (id INTEGER PRIMARY KEY, name TEXT, city TEXT, n INTEGER)`,
		`INSERT INTO p VALUES (1, 'a#', 'X', 1), (2, 'b+', 'Y', 5), (3, 'c%', 'X', 7), (4, 'a#', 'X', 9), (5, 'd', 'Z', 2)`}
	cols := []sqltools.Column{{Name: "p_name", Type: "string"}, {Name: "p_city", Type: "string"}, {Name: "p_n", Type: "integer"}}
	oracle := func(h *harness, q string) map[string]int {
		out := map[string]int{}
		for _, r := range oracleAdv(t, h, q) {
			out[fmt.Sprint(r...)]++
		}
		return out
	}
	for _, c := range []struct{ op, sql string }{
		{"union", "SELECT name, city FROM p WHERE n < 3 UNION SELECT name, city FROM p WHERE city = 'X'"},
		{"union_all", "SELECT name, city FROM p WHERE n < 3 UNION ALL SELECT name, city FROM p WHERE city = 'X'"},
		{"intersect", "SELECT name, city FROM p WHERE n < 3 INTERSECT SELECT name, city FROM p WHERE city = 'X'"},
		{"except", "SELECT name, city FROM p WHERE n < 3 EXCEPT SELECT name, city FROM p WHERE city = 'X'"},
	} {
		for _, flavor := range []string{sqltools.FlavorSlot, sqltools.FlavorSel} {
			h := advHarness(t, flavor, cols, sqltools.Options{}, stmts...)
			h.ok(sqltools.InitTool, `{"database": "adv", "tables": [{"name": "p"}]}`)
			var l, r string
			if flavor == sqltools.FlavorSlot {
				h.ok("filter_data", `{"data_source": "$starting_table$", "key_name": "p_n", "condition": "less_than", "value": 3, "label": "A"}`)
				h.ok("filter_data", `{"data_source": "$starting_table$", "key_name": "p_city", "condition": "equal_to", "value": "X", "label": "B"}`)
				h.ok("retrieve_data", `{"data_source": "$A$", "key_names": ["p_name", "p_city"], "label": "RA"}`)
				h.ok("retrieve_data", `{"data_source": "$B$", "key_names": ["p_name", "p_city"], "label": "RB"}`)
				l, r = `"$RA$"`, `"$RB$"`
				h.ok("set_operation", `{"left": `+l+`, "right": `+r+`, "operation": "`+c.op+`", "label": "S"}`)
			} else {
				h.ok("select_data_less_than", `{"data_source": "$starting_table$", "key_name": "p_n", "value": 3, "label": "A"}`)
				h.ok("select_data_equal_to", `{"data_source": "$starting_table$", "key_name": "p_city", "value": "X", "label": "B"}`)
				for _, x := range []string{"A", "B"} {
					h.ok("get_p_name", `{"data_source": "$`+x+`$", "label": "N`+x+`"}`)
					h.ok("get_p_city", `{"data_source": "$`+x+`$", "label": "C`+x+`"}`)
				}
				h.ok("set_"+c.op, `{"left": ["$NA$", "$CA$"], "right": ["$NB$", "$CB$"], "label": "S"}`)
				if res := h.call("set_"+c.op, `{"left": ["$NA$", "$CB$"], "right": ["$NB$", "$CB$"]}`); res.OK() || !strings.Contains(res.Error, "do not belong together") {
					t.Errorf("lists of two tables zipped: %s %s", res.Status, res.Error)
				}
			}
			got := map[string]int{}
			count := "aggregate_data"
			if flavor == sqltools.FlavorSlot {
				for _, row := range h.ok("retrieve_data", `{"data_source": "$S$", "key_names": ["p_name", "p_city"]}`)["rows"].([]any) {
					got[fmt.Sprint(row.([]any)...)]++
				}
			} else {
				names := h.ok("get_p_name", `{"data_source": "$S$"}`)["values"].([]any)
				cities := h.ok("get_p_city", `{"data_source": "$S$"}`)["values"].([]any)
				for i := range names {
					got[fmt.Sprint(names[i], cities[i])]++
				}
				count = "aggregate_data_count"
			}
			if want := oracle(h, c.sql); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s %s: %v, want %v", flavor, c.op, got, want)
			}
			args := `{"data_source": "$S$", "aggregation_type": "count"}`
			if flavor == sqltools.FlavorSel {
				args = `{"data_source": "$S$"}`
			}
			if n := h.ok(count, args)["value"]; fmt.Sprint(n) != fmt.Sprint(len(oracleAdv(t, h, c.sql))) {
				t.Errorf("%s %s: count %v", flavor, c.op, n)
			}
		}
	}
}

// A negative substring start counts from the end, as SQL's SUBSTR does.
func TestSubstringFromTheEnd(t *testing.T) {
	h := advHarness(t, sqltools.FlavorSlot, []sqltools.Column{{Name: "w_s", Type: "string"}}, sqltools.Options{},
		`CREATE TABLE w (s TEXT)`, `INSERT INTO w VALUES ('abcdef'), ('Straße'), ('ab'), (NULL)`)
	h.ok(sqltools.InitTool, `{"database": "adv", "tables": [{"name": "w"}]}`)
	for _, c := range []struct{ args, sql string }{
		{`{"start_index": -3}`, "SUBSTR(s, -3)"},
		{`{"start_index": -3, "end_index": -1}`, "SUBSTR(s, -3, 2)"},
		{`{"start_index": 1, "end_index": 3}`, "SUBSTR(s, 2, 2)"},
		{`{"start_index": -5}`, "SUBSTR(s, -5)"},
	} {
		h.ok("transform_data", `{"data_source": "$starting_table$", "key_name": "w_s", "operation_type": "substring", "operation_args": `+c.args+`, "label": "T"}`)
		rows := h.ok("retrieve_data", `{"data_source": "$T$", "key_names": ["w_s"]}`)["rows"].([]any)
		want := oracleAdv(t, h, "SELECT "+c.sql+", 0 FROM w")
		for i := range rows {
			if fmt.Sprint(rows[i].([]any)[0]) != fmt.Sprint(want[i][0]) {
				t.Errorf("%s: row %d %v, want %v", c.args, i, rows[i], want[i][0])
			}
		}
	}
	if r := h.call("transform_data", `{"data_source": "$starting_table$", "key_name": "w_s", "operation_type": "substring", "operation_args": {"start_index": -3, "end_index": 2}}`); r.OK() {
		t.Error("a negative start with a positive end was accepted")
	}
}
